"""An undo of an interrupted restore replaces its journal with its own. When that undo
fails after touching the work tree and goes back by itself, the interrupted restore's
journal is left again: `undo` and `restore --continue` still know its way back (it was
dropped, and a second `undo` then undid the failed undo instead)."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from .conftest import Repo
from .helpers import state

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
