"""An "unchanged since" is about the task being saved: an auto-save (agent hook, git hook,
guard) saves in the current task unless the workspace equals that task's latest
checkpoint. The state a `save --task other` kept says nothing of the current task: the
quick check does not vouch with it."""

from __future__ import annotations

import json
import subprocess
import time

import pytest

from ..conftest import Repo


def refs(repo: Repo, task: str) -> list[str]:
    return repo.git("for-each-ref", "--format=%(refname)", f"refs/checkpoints/{task}/").split()


def risky_hook(repo: Repo) -> subprocess.CompletedProcess[str]:
    payload = {"tool_name": "Bash", "tool_input": {"command": "rm -rf src"}, "cwd": str(repo.path)}
    return subprocess.run(
        ["git-checkpoint-hook", "claude-code", "PreToolUse"], input=json.dumps(payload),
        capture_output=True, text=True, cwd=repo.path, check=False, timeout=60,
    )  # fmt: skip


def prompt_hook(repo: Repo) -> subprocess.CompletedProcess[str]:
    payload = {"prompt": "go on", "cwd": str(repo.path)}
    return subprocess.run(
        ["git-checkpoint-hook", "claude-code", "UserPromptSubmit"], input=json.dumps(payload),
        capture_output=True, text=True, cwd=repo.path, check=False, timeout=60,
    )  # fmt: skip


def git_hook(repo: Repo) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git-checkpoint-hook", "git", "pre-rebase", "main"], capture_output=True, text=True,
        cwd=repo.path, check=False, timeout=60,
    )  # fmt: skip


def guard(repo: Repo) -> subprocess.CompletedProcess[str]:
    return repo.cp("guard", "--", "rm", "-rf", "no-such-folder")


def save_auto(repo: Repo) -> subprocess.CompletedProcess[str]:
    return repo.cp("save", "--auto")


SAVERS = {
    "agent hook": risky_hook,
    "prompt hook": prompt_hook,
    "git hook": git_hook,
    "guard": guard,
    "save --auto": save_auto,
}


@pytest.mark.parametrize("saver", list(SAVERS))
def test_a_save_for_another_task_does_not_stand_for_this_one(repo: Repo, saver: str) -> None:
    repo.write("src/app.py", "print('work')\n")
    time.sleep(1.1)  # the save keeps a quick state the next check trusts
    repo.cp("save", "--task", "other", "-m", "elsewhere")
    assert refs(repo, "main") == []
    SAVERS[saver](repo)
    assert len(refs(repo, "main")) == 1, refs(repo, "main")


def test_after_a_save_of_this_task_unchanged_saves_nothing(repo: Repo) -> None:
    repo.write("src/app.py", "print('work')\n")
    time.sleep(1.1)
    repo.cp("save", "-m", "here")
    for saver in SAVERS.values():
        saver(repo)
    assert len(refs(repo, "main")) == 1, refs(repo, "main")
