"""Every save goes through one sequence (save/session.py), so its policies hold whoever
saves: `save`, `save --auto`, the guard, an agent's hook, git's hooks, `verify`, the
run loop. Here the secret policy: under `secrets.on_save: block` a secret in the
workspace is saved by none of them."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ..conftest import Repo

AWS_KEY = "AKIAZ3MHPQRS7TUVWXYZ"
AWS_SECRET = "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"


def checkpoints(repo: Repo) -> list[str]:
    out = repo.git("for-each-ref", "--format=%(refname)", "refs/checkpoints/")
    return out.split()


@pytest.fixture
def blocking(repo: Repo) -> Repo:
    """A repository under `secrets.on_save: block`, saved once, then given an untracked
    file that holds an AWS key (the name says nothing: only the content scan finds it)."""
    repo.write(".checkpoint.yaml", "secrets: {on_save: block}\n")
    repo.commit_all("config")
    repo.cp("save", "-m", "clean")
    repo.write("deploy/settings.py", f'KEY = "{AWS_KEY}"\nSECRET = "{AWS_SECRET}"\n')
    return repo


def test_save_refuses(blocking: Repo) -> None:
    before = checkpoints(blocking)
    proc = blocking.cp("save", "-m", "with the key", expect=3)
    assert "secrets in the workspace, nothing saved" in proc.stderr
    assert checkpoints(blocking) == before


def test_save_auto_refuses(blocking: Repo) -> None:
    before = checkpoints(blocking)
    blocking.cp("save", "--auto", expect=3)
    assert checkpoints(blocking) == before


def test_the_agent_hook_refuses_and_lets_the_call_go_on(blocking: Repo) -> None:
    before = checkpoints(blocking)
    payload = {
        "tool_name": "Bash",
        "tool_input": {"command": "rm -rf deploy"},
        "cwd": str(blocking.path),
    }
    proc = subprocess.run(
        ["git-checkpoint-hook", "claude-code", "PreToolUse"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=blocking.path,
        check=False,
    )
    assert proc.returncode == 0
    assert "no checkpoint saved: secrets in the workspace" in proc.stderr
    assert len(proc.stderr.splitlines()) == 1
    assert checkpoints(blocking) == before


def test_the_guard_refuses_and_runs_the_command(blocking: Repo) -> None:
    before = checkpoints(blocking)
    proc = blocking.cp("guard", "--", "rm", "-rf", "deploy")
    assert "no checkpoint saved (secrets in the workspace" in proc.stderr
    assert not (blocking.path / "deploy").exists()  # the command ran all the same
    assert checkpoints(blocking) == before


def test_the_git_hook_refuses(blocking: Repo) -> None:
    before = checkpoints(blocking)
    proc = subprocess.run(
        ["git-checkpoint-hook", "git", "pre-rebase", "main"],
        capture_output=True,
        text=True,
        cwd=blocking.path,
        check=False,
    )
    assert proc.returncode == 0
    assert "secrets in the workspace" in proc.stderr
    assert checkpoints(blocking) == before


def test_verify_refuses_to_save_it(blocking: Repo) -> None:
    blocking.write(
        ".checkpoint.yaml",
        "secrets: {on_save: block}\nverifiers:\n  - {name: unit, command: 'true'}\n",
    )
    before = checkpoints(blocking)
    blocking.cp("verify", expect=3)
    assert checkpoints(blocking) == before


def test_the_run_loop_stops_before_saving_the_attempt(blocking: Repo) -> None:
    (blocking.path / "deploy/settings.py").unlink()
    blocking.write(
        ".checkpoint.yaml",
        "secrets: {on_save: block}\nverifiers:\n  - {name: unit, command: 'true'}\n",
    )
    blocking.commit_all("verifier")
    agent = f"open('leak.py', 'w').write('KEY = \"{AWS_KEY}\"\\nS = \"{AWS_SECRET}\"\\n')"
    proc = blocking.cp("run", "--", sys.executable, "-c", agent, expect=3)
    assert "secrets in the workspace, nothing saved" in proc.stderr
    refs = checkpoints(blocking)
    stored = [blocking.git("ls-tree", "-r", "--name-only", ref) for ref in refs]
    assert not any("leak.py" in names for names in stored)
