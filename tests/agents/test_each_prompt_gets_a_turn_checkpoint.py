"""Each prompt gets a turn checkpoint before the agent acts (UserPromptSubmit for Claude
Code and Codex, BeforeAgent for Gemini CLI): the user's uncommitted edit made before the
prompt is in it, and comes back when the agent's turn threw it away."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from .conftest import project_files
from .harness import AGENTS, AgentRun, checkpoints, events, only_local
from .steps import PROMPT_EVENT, SHELL_TOOL, TOOL_EVENT, shell


@pytest.mark.parametrize("agent", AGENTS)
def test_each_prompt_gets_a_turn_checkpoint(
    agent_in_project: Callable[..., AgentRun], agent: str
) -> None:
    run = agent_in_project(agent)
    repo = run.repo
    repo.write("README.md", "# demo\nthe user's own line\n")
    before = project_files(repo)
    result = run.run("start over\nwith a second line", shell(agent, "git checkout -- README.md"))
    result.check()
    only_local(result)

    assert events(run.calls()) == [
        (PROMPT_EVENT[agent], ""),
        (TOOL_EVENT[agent], SHELL_TOOL[agent]),
    ]
    assert (repo.path / "README.md").read_bytes() == b"# demo\n"
    # The risky command found the workspace as the turn checkpoint has it: no second one.
    [turn] = checkpoints(repo)
    assert turn["message"] == "before prompt: start over"
    repo.cp("restore", turn["id"])
    assert project_files(repo) == before
