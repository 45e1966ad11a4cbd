"""The index files read and written in-process (gitcore/indexfile), checked against git's
own reading and writing: the scratch index a save seeds, U's tree built from it, and
the stat data a restore sets (only for an entry that holds that blob, never in a locked
or torn index, and never leaving a lock behind)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from git_checkpoint.gitcore import indexfile

from ..conftest import Repo
from ..helpers import checkpoint_parents as parents


def listed(repo: Repo, index: Path) -> dict[str, tuple[str, str]]:
    """git's own reading of `index`: path -> (mode, id)."""
    env = {**os.environ, "GIT_INDEX_FILE": str(index)}
    out = subprocess.run(
        ["git", "ls-files", "-s", "-z"], cwd=repo.path, env=env, capture_output=True, check=True
    ).stdout.decode("utf-8", "surrogateescape")
    entries = {}
    for record in out.split("\0"):
        if record:
            meta, _, path = record.partition("\t")
            mode, oid, _ = meta.split(" ")
            entries[path] = (mode, oid)
    return entries


def git_index(repo: Repo, index: Path, *args: str, stdin: bytes | None = None) -> None:
    env = {**os.environ, "GIT_INDEX_FILE": str(index)}
    subprocess.run(["git", *args], cwd=repo.path, env=env, input=stdin, check=True)


def test_a_seed_reads_back_in_git_as_written(repo: Repo, tmp_path: Path) -> None:
    blob = repo.git("hash-object", "-w", "--stdin", input=b"x\n").strip()
    head = repo.git("rev-parse", "HEAD").strip()
    entries = {
        "a.txt": ("100644", blob),
        "bin/run": ("100755", blob),
        "link": ("120000", blob),
        "mod": ("160000", head),
        "dir/ü\udcff.txt": ("100644", blob),  # not UTF-8: kept as bytes
        "a-b": ("100644", blob),  # "-" sorts before "."
        "n/" + "x" * 5000: ("100644", blob),  # longer than the flags' 12 bits
    }
    index = tmp_path / "index"
    indexfile.write_seed(str(index), entries)
    assert listed(repo, index) == entries
    assert indexfile.read_entries(str(index)) == entries
    git_index(repo, index, "update-index", "--add", "--remove", "a.txt")  # gone on disk
    assert indexfile.read_entries(str(index)) == listed(repo, index)
    assert "a.txt" not in listed(repo, index)


def test_an_empty_seed_is_an_empty_index(repo: Repo, tmp_path: Path) -> None:
    index = tmp_path / "index"
    indexfile.write_seed(str(index), {})
    assert listed(repo, index) == {} and indexfile.read_entries(str(index)) == {}
    git_index(repo, index, "update-index", "--add", "src/app.py")
    assert indexfile.read_entries(str(index)) == listed(repo, index) != {}


def test_git_written_indexes_read_the_same_or_not_at_all(repo: Repo, tmp_path: Path) -> None:
    """Versions 2 and 3 read as ls-files lists them; version 4, a split index, a
    conflict or a damaged file answer None (the graft then asks ls-files)."""
    real = repo.path / ".git/index"
    assert indexfile.read_entries(str(real)) == listed(repo, real)
    index = tmp_path / "index"
    index.write_bytes(real.read_bytes())
    git_index(repo, index, "update-index", "--index-version", "3")
    git_index(repo, index, "update-index", "--skip-worktree", "src/app.py")  # extended flag
    assert indexfile.read_entries(str(index)) == listed(repo, index)
    git_index(repo, index, "update-index", "--index-version", "4")
    assert indexfile.read_entries(str(index)) is None
    git_index(repo, index, "update-index", "--index-version", "2")
    git_index(repo, index, "update-index", "--split-index")
    assert b"link" in index.read_bytes()  # the entries are in a shared index beside it
    assert indexfile.read_entries(str(index)) is None
    blob = repo.git("hash-object", "-w", "--stdin", input=b"theirs\n").strip()
    conflicted = tmp_path / "conflicted"
    info = f"100644 {blob} 2\tc.txt\n100644 {blob} 3\tc.txt\n".encode()
    git_index(repo, conflicted, "update-index", "--index-info", stdin=info)
    assert indexfile.read_entries(str(conflicted)) is None
    data = real.read_bytes()
    for damaged in (data[:40], data[:-21], b"XXXX" + data[4:], b""):
        index.write_bytes(damaged)
        assert indexfile.read_entries(str(index)) is None
    assert indexfile.read_entries(str(tmp_path / "absent")) is None


def test_the_overlay_tree_is_write_trees(repo: Repo, tmp_path: Path) -> None:
    """U's tree, built from the scratch index here (save/graft.tree_of, gitcore/loose), is the one

    `write-tree` writes for the same files; git's strict fsck finds nothing to say."""
    names = ["a", "a.txt", "a-b", "x/y/z.txt", "x/y.txt", "x/y-/q", "dé/ü.md", "bin/run"]
    for name in names:
        repo.write(f"new/{name}" if name == "a" else name, f"{name}\n")
    os.chmod(repo.path / "bin/run", 0o755)
    os.symlink("a.txt", repo.path / "link")
    repo.cp("save", "-m", "overlay")
    overlay = parents(repo, "cp_001")[2]
    index = tmp_path / "index"
    files = [f"new/{n}" if n == "a" else n for n in names] + ["link"]
    git_index(
        repo, index, "update-index", "--add", "-z", "--stdin", stdin="\0".join(files).encode()
    )
    expected = subprocess.run(
        ["git", "write-tree"],
        cwd=repo.path,
        env={**os.environ, "GIT_INDEX_FILE": str(index)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert repo.git("rev-parse", f"{overlay}^{{tree}}").strip() == expected
    repo.git("fsck", "--strict", "--no-dangling")
    assert not list((repo.path / ".git/objects").glob("*/tmp_obj_*"))


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
        cwd=Path(__file__).resolve().parents[2],
        check=False,
    )
    assert proc.returncode == -signal.SIGTERM and "survived" not in proc.stdout, proc
    assert not os.path.exists(index + ".lock")
    assert repo.git("diff-files", "--name-only") == ""  # the stat data went in first


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
