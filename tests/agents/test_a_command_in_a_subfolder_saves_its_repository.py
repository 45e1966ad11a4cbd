"""A risky command the agent runs in a subfolder (`cd sub && …` for Claude Code, the
shell tool's folder for Gemini CLI and Codex): the hook saves the repository the command
reaches, and the checkpoint holds the subfolder's edit the command throws away."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from .conftest import project_files
from .harness import AGENTS, AgentRun, checkpoint_named, only_local
from .steps import edit, shell, shell_command


@pytest.mark.parametrize("agent", AGENTS)
def test_a_command_in_a_subfolder_saves_its_repository(
    agent_in_project: Callable[..., AgentRun], agent: str
) -> None:
    run = agent_in_project(agent)
    repo = run.repo
    before = project_files(repo)
    steps = edit(agent, "sub/notes.md", "notes", "notes, edited") + shell(
        agent, "git checkout -- .", folder="sub"
    )
    result = run.run("reset the notes", steps)
    result.check()
    only_local(result)

    assert (repo.path / "sub/notes.md").read_bytes() == b"notes\n"  # the command ran there
    saved = checkpoint_named(repo, f"before: {shell_command(agent, 'git checkout -- .', 'sub')}")
    repo.cp("restore", saved["id"])
    assert project_files(repo) == {**before, "sub/notes.md": ("file", b"notes, edited\n", False)}
