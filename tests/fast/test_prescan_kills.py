"""A save or a restore killed (SIGKILL) at any of its git calls, the early scan's
children included, before or after the call: the work tree, the index and HEAD are as
they were, the lock is free, and the next command works."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from ..conftest import Repo, make_repo
from ..helpers import latest_ref
from ..launcher import (
    FAULT_DIR,
    LAUNCHER,
    REAL_GIT,
    early_calls,
    lock_free,
    look,
    no_traceback,
    scratch_left,
)
from .conftest import fresh_copy

# --- a fault-injecting git (tests/fault_git) first on PATH, the launcher run directly --------


def _kill_run(repo: Repo, args: tuple[str, ...], n: int, mode: str) -> tuple[int, list[str]]:
    counter = repo.path.parent / f"fi-{repo.path.name}"
    counter.unlink(missing_ok=True)
    log = Path(f"{counter}.log")
    log.unlink(missing_ok=True)
    env = {
        **os.environ,
        "PATH": f"{FAULT_DIR}{os.pathsep}{os.environ['PATH']}",
        "FI_REAL_GIT": REAL_GIT,
        "FI_COUNTER": str(counter),
        "FI_KILL_AT": str(n),
        "FI_MODE": mode,
    }
    proc = subprocess.run(
        [LAUNCHER, *args], cwd=repo.path, env=env, capture_output=True, text=True, timeout=120
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, log.read_text().splitlines() if log.exists() else []


def _save_template(tmp_path: Path) -> Repo:
    repo = make_repo(tmp_path / "tpl")
    repo.write("a.txt", "a\n")
    repo.write("src/b.py", "b\n")
    repo.write(".gitignore", "*.log\n")
    repo.commit_all("base")
    repo.cp("save", "-m", "base")
    repo.write("a.txt", "a2\n")  # unstaged
    repo.write("src/b.py", "staged\n")
    repo.git("add", "src/b.py")
    repo.write("src/b.py", "unstaged on top\n")
    repo.write("notes.txt", "overlay\n")
    repo.write("debug.log", "ignored\n")
    return repo


def test_save_killed_at_every_git_call_keeps_the_workspace_and_frees_the_lock(
    tmp_path: Path,
) -> None:
    """SIGKILL at each git call of a save (the early children included, which also go
    through PATH's git), before and after the call: the work tree, index and HEAD are
    untouched, the lock is free, the next save works. (Scratch folders a kill leaves in
    .git are reported by doctor only after an hour: doctor/checks.SCRATCH_AGE.)"""
    template = _save_template(tmp_path)
    counted = fresh_copy(template, tmp_path / "count")
    code, calls = _kill_run(counted, ("save", "-m", "two"), 0, "before")
    assert code == 0 and len(early_calls(calls)) == 3, calls
    for mode in ("before", "after"):
        for n in range(1, len(calls) + 1):
            work = fresh_copy(template, tmp_path / "w")
            before = look(work)
            code, _ = _kill_run(work, ("save", "-m", "two"), n, mode)
            assert code == -9, (mode, n, code)
            time.sleep(0.05)  # the early children, orphaned, finish on their own
            assert look(work) == before, (mode, n)
            assert lock_free(work.path / ".git"), (mode, n)
            again = work.cp("save", "-m", "again")
            no_traceback(again)
            assert look(work) == before, (mode, n)
            left = scratch_left(work.path / ".git")
            if left:  # what doctor reports once it is an hour old
                old = time.time() - 7200
                for name in left:
                    os.utime(work.path / ".git" / name, (old, old))
                doctor = work.cp("doctor", expect=None)
                assert left[0] in doctor.stdout + doctor.stderr, (mode, n)
            ref = latest_ref(work)
            assert work.git("show", f"{ref}:src/b.py") == "unstaged on top\n"


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("mode", ["before", "after"])
def test_restore_killed_in_its_early_scan_changes_nothing(
    tmp_path: Path, n: int, mode: str
) -> None:
    """A restore killed at one of its early children has begun nothing: no journal,
    workspace as it was, lock free; restore then works."""
    repo = _save_template(tmp_path)
    before = look(repo)
    code, calls = _kill_run(repo, ("restore", "cp_001"), n, mode)
    assert code == -9
    assert all(c.startswith("-C ") for c in calls), calls  # killed in the early scan
    assert look(repo) == before
    assert not (repo.path / ".git/checkpoint/restore-journal.json").exists()
    assert lock_free(repo.path / ".git")
    repo.cp("restore", "cp_001")
    assert (repo.path / "src/b.py").read_text() == "b\n"
