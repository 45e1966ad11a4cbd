"""The agents, set up as these tests set them up (telemetry, update checks, plugins and
the like turned off), reach nothing but the scripted model: run where loopback is the
only network and every host name looked up is recorded, none is, and every request the
session needed came to the model on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from .harness import AGENTS, AgentRun, Network, only_local
from .steps import shell


@pytest.mark.parametrize("agent", AGENTS)
def test_agents_reach_only_the_local_model(
    agent_in_project: Callable[..., AgentRun], network: Network, agent: str
) -> None:
    if not network.isolated:
        pytest.skip("no network namespace here (unshare, nsenter and ip, as root)")
    run = agent_in_project(agent)
    result = run.run("list the files", shell(agent, "ls"), final="Listed.")
    result.check("Listed.")
    only_local(result)
    paths = {r["path"].split("?")[0] for r in result.server.records("model")}
    assert paths, "the model got no request"
    assert run.calls(), "the hooks did not run"
