"""The agent's edit tool, once the workspace has drifted from the latest checkpoint (a
file written earlier in the turn): the hook saves before the edit, and that checkpoint
holds the file as it was before the edit, and the new file."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from .conftest import project_files
from .harness import AGENTS, AgentRun, checkpoint_named, checkpoints, events, only_local
from .steps import EDIT_TOOL, PROMPT_EVENT, TOOL_EVENT, WRITE_TOOL, edit, write


@pytest.mark.parametrize("agent", AGENTS)
def test_an_edit_tool_saves_the_drifted_workspace(
    agent_in_project: Callable[..., AgentRun], agent: str
) -> None:
    run = agent_in_project(agent)
    repo = run.repo
    before = project_files(repo)
    steps = write("src/new.py", "x = 1\n") + edit(
        agent, "src/app.py", "print('hello')", "print('edited')"
    )
    result = run.run("add a module", steps)
    result.check()
    only_local(result)

    assert events(run.calls()) == [
        (PROMPT_EVENT[agent], ""),
        (TOOL_EVENT[agent], WRITE_TOOL[agent]),
        (TOOL_EVENT[agent], EDIT_TOOL[agent]),
    ]
    assert (repo.path / "src/app.py").read_bytes() == b"print('edited')\n"
    # The write found the workspace as the turn checkpoint has it: nothing new then.
    assert [c["message"] for c in checkpoints(repo)] == [
        "before prompt: add a module",
        f"before {EDIT_TOOL[agent]} of src/app.py",
    ]
    saved = checkpoint_named(repo, f"before {EDIT_TOOL[agent]} of src/app.py")
    repo.cp("restore", saved["id"])
    assert project_files(repo) == {**before, "src/new.py": ("file", b"x = 1\n", False)}
