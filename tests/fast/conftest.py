"""The hook path's helpers: the quick auto-save run as a hook runs it, a save old
enough for the kept state to vouch for its files, copies of a repository to compare the
early scan's path with the plain one."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from git_checkpoint.fast import quickcheck, quickstate

from ..conftest import Repo

# --- the quick check and the auto-save, as a hook runs them ---------------------------


SETTLE = quickstate.RACY_NS / 1e9 + 0.05  # files older than this are vouched for by stat


def auto(repo: Repo, cwd: Path | None = None, env: dict[str, str] | None = None) -> str | None:
    """auto_save in its own process, as the hooks run it."""
    code = "from git_checkpoint.entry.hook import auto_save; print(auto_save('.', 'auto'))"
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=cwd or repo.path,
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.strip()
    return None if out == "None" else out


def settled_save(repo: Repo, cwd: Path | None = None) -> None:
    """A save whose files are old enough for the quick state to vouch for them."""
    time.sleep(SETTLE)
    repo.cp("save", "-m", "base", cwd=cwd)


@pytest.fixture
def saved(repo: Repo) -> Repo:
    repo.write("src/app.py", "print('edited')\n")
    repo.write("notes/todo.txt", "untracked work\n")
    settled_save(repo)
    assert quick(repo.path), "a settled save leaves a usable quick state"
    return repo


def quick(path: Path) -> bool:
    """The quick check's answer: unchanged since the latest checkpoint?"""
    return quickcheck.quick_unchanged(str(path))


def latest_file(repo: Repo, rel: str) -> bytes:
    """`rel` as the latest checkpoint holds it (in W, or in the overlay U)."""
    name = repo.cp_json("list")["checkpoints"][-1]["name"]
    commit = f"refs/checkpoints/{name}"
    found = repo.git("ls-tree", "--name-only", commit, "--", rel).strip()
    if not found:  # an untracked file: in the overlay parent U
        commit += "^3"
    return repo.git("show", f"{commit}:{rel}").encode()


# --- copies to run the early scan's path and the plain one side by side ---------------


def fresh_copy(repo: Repo, where: Path) -> Repo:
    """A copy of `repo` at `where`, whatever was there removed first."""
    shutil.rmtree(where, ignore_errors=True)
    shutil.copytree(repo.path, where, symlinks=True)
    return Repo(where)


def copy_of(repo: Repo, where: Path) -> Repo:
    """A copy of `repo` at `where` (cp -a: owners, modes and dates kept)."""
    subprocess.run(["cp", "-a", str(repo.path), str(where)], check=True)
    return Repo(where)


def git_head(repo: Repo) -> str | None:
    """HEAD's commit as git reads it; None when unborn."""
    out = repo.git("rev-parse", "-q", "--verify", "HEAD^{commit}", check=False).strip()
    return out or None
