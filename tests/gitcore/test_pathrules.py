"""The path rules (gitcore/pathrules) refuse exactly the names git's index refuses."""

from __future__ import annotations

import subprocess

import pytest

from git_checkpoint.gitcore.pathrules import git_refuses_path

from ..conftest import Repo
from ..helpers import blob

NAMES = [
    "a",
    "a\\b",
    "src\\utils\\h.py",
    ".git",
    ".GIT",
    ".Git",
    ".git.",
    ".git ",
    ".git. .",
    "git~1",
    "GIT~1",
    "git~2",
    ".gitx",
    "x.git",
    ".git:stream",
    "git~1:x",
    ".git\\x",
    "a/.git/b",
    "a/GIT~1/b",
    "..",
    "a/../b",
    ".",
    ".gitmodules",
    "-x",
    " ",
    "a b",
]


@pytest.mark.parametrize("name", NAMES)
def test_path_rules_refuse_exactly_what_git_refuses(empty_repo: Repo, name: str) -> None:
    oid = blob(empty_repo, b"x")
    proc = subprocess.run(
        ["git", "update-index", "--add", "--cacheinfo", f"100644,{oid},{name}"],
        cwd=empty_repo.path,
        capture_output=True,
        check=False,
    )
    assert git_refuses_path(name) == (proc.returncode != 0), proc.stderr
