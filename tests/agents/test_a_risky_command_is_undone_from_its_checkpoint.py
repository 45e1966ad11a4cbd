"""A risky shell command run by the agent (an edit, then `rm -rf src`, or for Codex,
which refuses `rm -rf` of its own accord, `git reset --hard`): the hook saved the
workspace right before it, and restoring that checkpoint brings the work back byte for
byte."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from .conftest import project_files
from .harness import AGENTS, AgentRun, checkpoint_named, events, only_local
from .steps import EDIT_TOOL, PROMPT_EVENT, SHELL_TOOL, TOOL_EVENT, edit, shell

DAMAGE = {"claude-code": "rm -rf src", "codex": "git reset --hard", "gemini-cli": "rm -rf src"}


@pytest.mark.parametrize("agent", AGENTS)
def test_a_risky_command_is_undone_from_its_checkpoint(
    agent_in_project: Callable[..., AgentRun], agent: str
) -> None:
    run = agent_in_project(agent)
    repo = run.repo
    before = project_files(repo)
    steps = edit(agent, "src/app.py", "print('hello')", "print('bye')") + shell(
        agent, DAMAGE[agent]
    )
    result = run.run("tidy the sources", steps)
    result.check()
    only_local(result)

    assert events(run.calls()) == [
        (PROMPT_EVENT[agent], ""),
        (TOOL_EVENT[agent], EDIT_TOOL[agent]),
        (TOOL_EVENT[agent], SHELL_TOOL[agent]),
    ]
    damaged = project_files(repo)
    assert damaged.get("src/app.py", ("", b"", False))[1] != b"print('bye')\n"  # it ran

    saved = checkpoint_named(repo, f"before: {DAMAGE[agent]}")
    assert saved["auto"] is True
    repo.cp("restore", saved["id"])
    expected = dict(before)
    expected["src/app.py"] = ("file", b"print('bye')\n", False)
    assert project_files(repo) == expected
