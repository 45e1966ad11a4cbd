"""Ignored files that no include names are never captured. An include given on one
`save --include P` is for that save: the auto-save after it (hook, guard) captures what
the configuration in force includes, whether it builds on the quick check or not."""

from __future__ import annotations

import json
import subprocess
import time

import pytest

from ..conftest import Repo


def overlay(repo: Repo, ref: str) -> list[str]:
    third = repo.git("rev-parse", "-q", "--verify", f"{ref}^3", check=False).strip()
    return repo.git("ls-tree", "-r", "--name-only", third).split() if third else []


def latest(repo: Repo) -> str:
    refs = repo.git(
        "for-each-ref", "--sort=refname", "--format=%(refname)", "refs/checkpoints/main/"
    )
    return refs.split()[-1]


def hook(repo: Repo) -> None:
    payload = {"tool_name": "Bash", "tool_input": {"command": "rm -rf src"}, "cwd": str(repo.path)}
    subprocess.run(
        ["git-checkpoint-hook", "claude-code", "PreToolUse"], input=json.dumps(payload),
        capture_output=True, text=True, cwd=repo.path, check=True, timeout=60,
    )  # fmt: skip


@pytest.fixture
def included_once(repo: Repo) -> Repo:
    repo.write(".gitignore", "tmp/\n")
    repo.commit_all("ignore tmp")
    repo.write("tmp/fixture.dat", "ignored fixture\n")
    repo.write("src/app.py", "print('one')\n")
    time.sleep(1.1)
    repo.cp("save", "--include", "tmp/", "-m", "with the fixture")
    assert overlay(repo, latest(repo)) == ["tmp/fixture.dat"]
    time.sleep(1.1)
    repo.write("src/app.py", "print('two')\n")
    return repo


def test_a_full_auto_save_leaves_the_ignored_file_out(included_once: Repo) -> None:
    included_once.cp("save", "--auto")
    assert overlay(included_once, latest(included_once)) == []


def test_the_hook_leaves_the_ignored_file_out_too(included_once: Repo) -> None:
    hook(included_once)
    assert overlay(included_once, latest(included_once)) == []
