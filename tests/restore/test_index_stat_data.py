"""After a restore, git sees the files it wrote as clean from their stat data alone: a
few are refreshed by pathspec; many get their stat data set in the index itself
(gitcore/indexfile.set_stats), which must be what git would record, in an index git
reads as whole; an index not read here (split, version 4) is left to git, and a lock
left by a SIGKILL is removed by the next command."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from git_checkpoint.restore.apply import REFRESH_PATHS_MAX

from ..conftest import Repo
from ..helpers import state

COUNT = REFRESH_PATHS_MAX + 40


def _broken_then_restored(repo: Repo) -> None:
    for i in range(COUNT):
        repo.write(f"many/d{i % 7}/f{i:04}.txt", f"file {i}\n" * (i % 5 + 1))
    repo.commit_all("many files")
    repo.cp("save", "-m", "good")
    for i in range(COUNT):
        repo.write(f"many/d{i % 7}/f{i:04}.txt", f"broken {i}\n")
    repo.cp("restore", "cp_001")


def _debug_stats(repo: Repo) -> dict[str, tuple[int, ...]]:
    """path -> (ctime s, ns, mtime s, ns, ino, size) as the index holds them."""
    out: dict[str, tuple[int, ...]] = {}
    text = repo.git("ls-files", "--debug")
    pattern = (
        r"(\S+)\n  ctime: (\d+):(\d+)\n  mtime: (\d+):(\d+)\n  dev: \d+\tino: (\d+)\n"
        r"  uid: \d+\tgid: \d+\n  size: (\d+)"
    )
    for m in re.finditer(pattern, text):
        out[m.group(1)] = tuple(int(g) for g in m.groups()[1:])
    return out


def test_the_index_holds_each_written_files_stat_data(repo: Repo) -> None:
    _broken_then_restored(repo)
    recorded = _debug_stats(repo)
    for i in range(COUNT):
        path = f"many/d{i % 7}/f{i:04}.txt"
        st = os.lstat(repo.path / path)
        on_disk = (
            st.st_ctime_ns // 10**9,
            st.st_ctime_ns % 10**9,
            st.st_mtime_ns // 10**9,
            st.st_mtime_ns % 10**9,
            st.st_ino,
            st.st_size,
        )
        assert recorded[path] == on_disk, path
    assert repo.git("diff-files", "--name-only") == ""  # no hashing: stat data alone
    assert repo.git("status", "--porcelain") == ""
    repo.git("fsck", "--no-dangling")  # reads the index: its checksum holds


@pytest.mark.parametrize(
    "setup",
    [["config", "core.splitIndex", "true"], ["update-index", "--index-version", "4"]],
    ids=["split", "version-4"],
)
def test_an_index_not_read_here_is_refreshed_by_git(repo: Repo, setup: list[str]) -> None:
    repo.git(*setup)
    if setup[0] == "config":
        repo.git("update-index", "--split-index")
    _broken_then_restored(repo)
    assert repo.git("diff-files", "--name-only") == ""
    assert repo.git("status", "--porcelain") == ""


needs_strace = pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")


STRACE = ["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=fchmod"]


@needs_strace
def test_undo_after_a_sigkill_in_set_stats_removes_its_lock_and_goes_back(repo: Repo) -> None:
    """A SIGKILL cannot be held back: the index.lock set_stats made stays, and every git
    command (undo's too) would fail on it until removed by hand. The next restore, undo
    or --continue removes it: that very file (device and inode), its process gone."""
    for i in range(COUNT):
        repo.write(f"many/d{i % 7}/f{i:04}.txt", f"file {i}\n")
    repo.commit_all("many files")
    repo.cp("save", "-m", "good")
    for i in range(COUNT):
        repo.write(f"many/d{i % 7}/f{i:04}.txt", f"broken {i}\n")
    before = state(repo)
    cp = shutil.which("git-checkpoint")
    assert cp is not None
    killed = subprocess.run(
        [*STRACE, "-e", "inject=fchmod:signal=KILL:when=1", cp, "restore", "cp_001"],
        cwd=repo.path,
        capture_output=True,
        check=False,
    )
    assert killed.returncode != 0
    assert (repo.path / ".git" / "index.lock").exists()

    repo.cp("undo")

    assert state(repo) == before
    assert not (repo.path / ".git" / "index.lock").exists()
    repo.git("status")  # git works again


@pytest.mark.parametrize("count", [3, REFRESH_PATHS_MAX + 40])
def test_written_files_are_stat_clean(repo: Repo, count: int) -> None:
    for i in range(count):
        repo.write(f"many/f{i:04}.txt", f"file {i}\n")
    repo.commit_all("many files")
    repo.write("many/f0000.txt", "an unstaged change the checkpoint keeps\n")
    repo.cp("save", "-m", "good")
    for i in range(count):
        repo.write(f"many/f{i:04}.txt", f"broken {i}\n")
    repo.cp("restore", "cp_001")
    # diff-files does not refresh: a written file whose stat data the index lacks shows.
    assert repo.git("diff-files", "--name-only").split() == ["many/f0000.txt"]
    assert repo.git("status", "--porcelain") == " M many/f0000.txt\n"
