"""An undo of an interrupted restore replaces its journal with its own. When that undo
fails after touching the work tree and goes back by itself, or its own rollback fails
too, the interrupted restore's journal is left again: `undo` and `restore --continue`
still know its way back."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ..conftest import Repo
from ..helpers import state
from ..launcher import REAL_GIT
from .conftest import full_state, git_wrapper, marked_then_deleted, needs_cp, run_with_git

CP = shutil.which("git-checkpoint")


needs_tools = pytest.mark.skipif(
    CP is None or shutil.which("strace") is None or shutil.which("chattr") is None,
    reason="needs strace and chattr",
)


def _interrupted(repo: Repo) -> tuple[Repo, object]:
    for i in range(40):
        repo.write(f"many/d{i % 4}/f{i:03}.txt", f"good {i}\n")
    repo.commit_all("many")
    repo.cp("save", "-m", "good")
    for i in range(40):
        repo.write(f"many/d{i % 4}/f{i:03}.txt", f"attempt {i}\n")
    before = state(repo)
    victim = repo.path / "many/d1/f021.txt"
    assert CP is not None
    strace = ["strace", "-f", "-qq", "-o", "/dev/null", "-P", str(victim), "-e", "trace=unlink"]
    killed = subprocess.run(
        [*strace, "-e", "inject=unlink:signal=KILL:when=1", CP, "restore", "cp_001"],
        cwd=repo.path,
        capture_output=True,
        check=False,
    )
    assert killed.returncode != 0 and state(repo) != before
    return repo, before


@needs_tools
def test_a_failed_undo_leaves_the_interrupted_restore_to_undo(repo: Repo) -> None:
    _, before = _interrupted(repo)
    stuck = repo.path / "many/d1/f017.txt"  # the last file the killed restore wrote
    subprocess.run(["chattr", "+i", str(stuck)], check=True)
    try:
        failed = repo.cp("undo", expect=None)
    finally:
        subprocess.run(["chattr", "-i", str(stuck)], check=True)
    assert failed.returncode in (3, 4), failed.stdout + failed.stderr
    assert "still there" in failed.stderr and "Traceback" not in failed.stderr
    assert "interrupted" in repo.cp("status").stderr

    repo.cp("undo")
    assert state(repo) == before


@needs_tools
def test_a_failed_undo_leaves_the_interrupted_restore_to_continue(repo: Repo) -> None:
    _interrupted(repo)
    stuck = repo.path / "many/d1/f017.txt"
    subprocess.run(["chattr", "+i", str(stuck)], check=True)
    try:
        repo.cp("undo", expect=None)
    finally:
        subprocess.run(["chattr", "-i", str(stuck)], check=True)

    repo.cp("restore", "--continue")
    assert (repo.path / "many/d3/f023.txt").read_text() == "good 23\n"
    assert repo.git("status", "--porcelain") == ""


@needs_cp
def test_undo_and_rollback_both_failing_keep_the_way_back(repo: Repo, tmp_path: Path) -> None:
    for i in (1, 2, 3):
        repo.write(f"f{i}.txt", f"v{i}\n")
    repo.commit_all("files")
    repo.cp("save", "-m", "base")
    marked_then_deleted(repo, "new/ita.txt")
    repo.write("f1.txt", "staged edit\n")
    repo.git("add", "f1.txt")
    repo.write("f2.txt", "edit\n")
    before = full_state(repo)
    # The restore killed right after it set the index (its files are written).
    kill = git_wrapper(
        tmp_path,
        'if [ "$1 $2" = "update-index -z" ] && [ -z "$GIT_INDEX_FILE" ]; then\n'
        f'  {REAL_GIT} "$@"; kill -KILL $PPID; exit 137\nfi',
    )
    assert run_with_git(repo, kill, "restore", "cp_001").returncode == -9
    shutil.rmtree(kill)
    # Then an index.lock held by someone else: `git add -N` fails first, then every
    # update of the real index (the undo's rollback's too).
    flag = tmp_path / "held"
    flag.touch()
    held = git_wrapper(
        tmp_path,
        f'if [ -e {flag} ]; then case "$1 $2" in\n'
        f'  "add --intent-to-add") touch {flag}.seen; echo "fatal: held" >&2; exit 128;;\n'
        f'  "update-index -z") if [ -e {flag}.seen ] && [ -z "$GIT_INDEX_FILE" ]; then '
        'echo "fatal: held" >&2; exit 128; fi;;\nesac; fi',
    )
    failed = run_with_git(repo, held, "undo")
    assert failed.returncode == 4 and "failed too" in failed.stderr, failed.stderr
    assert "Traceback" not in failed.stderr
    flag.unlink()

    repo.cp("restore", "--continue")
    repo.cp("undo")
    assert full_state(repo) == before
    assert "stopped before changing anything" not in failed.stderr  # it had written files


def test_an_index_lock_left_by_a_killed_git_is_named_with_what_to_do(repo: Repo) -> None:
    repo.write("f.txt", "committed\n")
    repo.commit_all("f")
    repo.write("f.txt", "saved\n")
    repo.git("add", "f.txt")
    repo.cp("save", "-m", "one")
    repo.write("f.txt", "edited\n")
    repo.git("add", "f.txt")
    lock = repo.path / ".git" / "index.lock"
    lock.write_bytes(b"")  # what a git killed while it held the index leaves
    proc = repo.cp("restore", "cp_001", expect=3)
    line = proc.stderr.strip()
    assert len(line.splitlines()) == 1 and "Traceback" not in line
    assert f"rm '{lock}'" in line and "killed" in line
    assert (repo.path / "f.txt").read_text() == "edited\n"  # nothing restored over it
    lock.unlink()
    repo.cp("restore", "cp_001")
    assert (repo.path / "f.txt").read_text() == "saved\n"
