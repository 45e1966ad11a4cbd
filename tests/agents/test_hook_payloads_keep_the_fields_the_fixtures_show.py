"""The payloads each real agent sends our hooks have the fields the recorded fixtures in
tests/fixtures/agent_payloads/ show (other tests build on those files), per event and
tool: the same keys, and the same keys in tool_input. With
RECORD_AGENT_PAYLOADS=1 the fixtures are written again from what the
agents send (paths of this machine scrubbed)."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from .harness import AGENTS, PACKAGES, AgentRun, HookCall
from .steps import edit, shell, write

FIXTURES = Path(__file__).parents[1] / "fixtures" / "agent_payloads"
RECORD = "RECORD_AGENT_PAYLOADS"


def fixture_name(call: HookCall) -> str:
    tool = call.payload.get("tool_name")
    return f"{call.event}-{tool}.json" if tool else f"{call.event}.json"


def scrub(value: Any, run: AgentRun) -> Any:
    """The payload with this machine's folders as placeholders."""
    if isinstance(value, dict):
        return {k: scrub(v, run) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v, run) for v in value]
    if isinstance(value, str):
        # (Claude Code names its project folder after the path, every other character a dash)
        mangled = re.sub(r"[^A-Za-z0-9]", "-", str(run.repo.path))
        value = value.replace(str(run.repo.path), "__CWD__").replace(str(run.home), "__HOME__")
        return value.replace(mangled, "__CWD_AS_NAME__")
    return value


def shape(payload: dict[str, Any]) -> tuple[list[str], list[str]]:
    tool_input = payload.get("tool_input")
    return sorted(payload), sorted(tool_input) if isinstance(tool_input, dict) else []


@pytest.mark.parametrize("agent", AGENTS)
def test_hook_payloads_keep_the_fields_the_fixtures_show(
    agent_in_project: Callable[..., AgentRun], agent: str
) -> None:
    run = agent_in_project(agent)
    steps = (
        write("src/new.py", "x = 1\n")
        + edit(agent, "src/app.py", "print('hello')", "print('bye')")
        + shell(agent, "git checkout -- .", folder="sub")
    )
    run.run("record the payloads", steps).check()
    seen: dict[str, dict[str, Any]] = {}
    for call in run.calls():
        seen.setdefault(fixture_name(call), scrub(call.payload, run))
    assert len(seen) >= 3, sorted(seen)
    folder = FIXTURES / agent
    if os.environ.get(RECORD):
        folder.mkdir(parents=True, exist_ok=True)
        for name, payload in seen.items():
            (folder / name).write_text(json.dumps(payload, indent=2) + "\n")
        (folder / "VERSION").write_text(f"{PACKAGES[agent][0]}@{PACKAGES[agent][1]}\n")
    recorded = {p.name: json.loads(p.read_text()) for p in folder.glob("*.json")}
    assert sorted(recorded) == sorted(seen)
    for name, payload in seen.items():
        assert shape(payload) == shape(recorded[name]), name
