"""A restore that writes many files from memory sets their stat data in the index itself
(indexfile.set_stats) instead of `update-index --refresh` hashing each file again: the
data must be what git would record, in an index git reads as whole, and every index
not read here (split, version 4, locked, torn, holding another blob) is left to git."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from git_checkpoint.gitcore import indexfile
from git_checkpoint.restore.apply import REFRESH_PATHS_MAX

from .conftest import Repo
from .helpers import state

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


def _one_file_index(repo: Repo) -> tuple[str, str, os.stat_result]:
    path = repo.write("x.txt", "new bytes\n")
    oid = repo.git("hash-object", "-w", "x.txt").strip()
    return os.fspath(repo.path / ".git" / "index"), oid, os.lstat(path)


def test_set_stats_sets_only_an_entry_holding_that_blob(repo: Repo) -> None:
    repo.write("x.txt", "old bytes\n")
    repo.commit_all("x")
    index, oid, st = _one_file_index(repo)
    before = Path(index).read_bytes()
    assert indexfile.set_stats(index, {"x.txt": (0o100644, oid, st)}) == set()
    assert Path(index).read_bytes() == before  # the entry holds the old blob: untouched
    assert not os.path.exists(index + ".lock")

    repo.git("update-index", "--index-info", input=f"100644 {oid}\tx.txt\n".encode())
    assert indexfile.set_stats(index, {"x.txt": (0o100755, oid, st)}) == set()  # mode
    assert indexfile.set_stats(index, {"x.txt": (0o100644, oid, st)}) == {"x.txt"}
    assert repo.git("diff-files", "--name-only") == ""


def test_set_stats_leaves_a_locked_or_torn_index_alone(repo: Repo) -> None:
    index, oid, st = _one_file_index(repo)
    repo.git("update-index", "--index-info", input=f"100644 {oid}\tx.txt\n".encode())
    lock = Path(index + ".lock")
    lock.write_bytes(b"another git's")
    assert indexfile.set_stats(index, {"x.txt": (0o100644, oid, st)}) == set()
    assert lock.read_bytes() == b"another git's"  # not ours to remove
    lock.unlink()

    torn = Path(index).read_bytes()[:-1] + b"\0"
    Path(index).write_bytes(torn)
    assert indexfile.set_stats(index, {"x.txt": (0o100644, oid, st)}) == set()
    assert Path(index).read_bytes() == torn
    assert not lock.exists()


def test_a_sigterm_while_the_lock_is_held_waits_for_it(repo: Repo, tmp_path: Path) -> None:
    """A SIGTERM that lands while set_stats holds index.lock kills the process only once
    the lock is gone (renamed over the index): a lock left behind stops every git."""
    index, oid, _ = _one_file_index(repo)
    repo.git("update-index", "--index-info", input=f"100644 {oid}\tx.txt\n".encode())
    script = tmp_path / "term.py"
    script.write_text(
        "import os, signal, sys\n"
        "from git_checkpoint.gitcore import indexfile\n"
        "real = indexfile._set_stats\n"
        "def racing(*args):\n"
        "    os.kill(os.getpid(), signal.SIGTERM)  # lands before the lock is even made\n"
        "    return real(*args)\n"
        "indexfile._set_stats = racing\n"
        f"st = os.lstat({str(repo.path / 'x.txt')!r})\n"
        f"indexfile.set_stats({index!r}, {{'x.txt': (0o100644, {oid!r}, st)}})\n"
        "print('survived')\n"
    )
    proc = subprocess.run(
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        cwd=Path(__file__).resolve().parent.parent,
        check=False,
    )
    assert proc.returncode == -signal.SIGTERM and "survived" not in proc.stdout, proc
    assert not os.path.exists(index + ".lock")
    assert repo.git("diff-files", "--name-only") == ""  # the stat data went in first


needs_strace = pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace")
STRACE = ["strace", "-f", "-qq", "-o", "/dev/null", "-e", "trace=fchmod"]


@needs_strace
def test_undo_after_a_sigkill_in_set_stats_removes_its_lock_and_goes_back(repo: Repo) -> None:
    """A SIGKILL cannot be held back: the index.lock set_stats made stays, and every git
    command (undo's too) failed on it until removed by hand. The next restore, undo or
    --continue removes it: that very file (device and inode), its process gone."""
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


def test_a_lock_not_provably_ours_is_never_removed(repo: Repo) -> None:
    index = os.fspath(repo.path / ".git" / "index")
    lock = Path(index + ".lock")
    claim = repo.path / ".git" / "checkpoint" / "index-lock-held"
    claim.parent.mkdir(exist_ok=True)
    lock.write_bytes(b"another git's")
    st = os.lstat(lock)
    claim.write_text(f"{os.getpid()} {st.st_dev} {st.st_ino}\n")  # its process alive
    assert not indexfile.release_stale_lock(index) and lock.exists()
    gone = _ended_pid()
    claim.write_text(f"{gone} {st.st_dev} {st.st_ino + 1}\n")  # another file
    assert not indexfile.release_stale_lock(index) and lock.exists()
    claim.write_text(f"{gone} {st.st_dev} {st.st_ino}\n")  # that very file, its process gone
    assert indexfile.release_stale_lock(index) and not lock.exists()
    assert not claim.exists()


def _ended_pid() -> int:
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid
