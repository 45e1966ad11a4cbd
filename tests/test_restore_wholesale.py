"""A restore that rewrites most of a repository (the benchmark's 1,000-file restore), and
what its faster path rests on: blobs staged in memory and written in place, W's entries
taken from tree diffs, and the trees of our own checkpoints taken as sound.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from .conftest import Repo
from .helpers import blob, forge_checkpoint, state

# Above restore.INDEX_DIFF_FROM (64): the diff-based paths run; 100 written files get
# their stat data refreshed by name, 150 by a refresh of the whole index (past 128);
# 300 are written by two threads (materialize.PARALLEL_WRITES).
MANY = 150


def _spread(repo: Repo, many: int = MANY) -> list[str]:
    """`many` tracked files over nested folders, committed."""
    paths = [f"pkg{i % 7}/sub{i % 5}/deep{i % 3}/f{i}.txt" for i in range(many)]
    for n, path in enumerate(paths):
        repo.write(path, f"original {n}\n" * (n % 40 + 1))
    repo.commit_all("many files")
    return paths


@pytest.mark.parametrize("many", [100, 150, 300])
def test_a_wholesale_restore_and_its_undo_are_exact(repo: Repo, many: int) -> None:
    paths = _spread(repo, many)
    # The checkpoint: edits, staged edits that differ from the work tree, a staged-only
    # change, an executable bit, a deletion, new untracked files, an empty file.
    for path in paths[:60]:
        repo.write(path, f"checkpoint edit of {path}\n")
    for path in paths[60:80]:
        repo.write(path, "staged version\n")
        repo.git("add", path)
        repo.write(path, "work tree version\n")
    repo.write(paths[80], "staged only\n")
    repo.git("add", paths[80])
    os.chmod(repo.path / paths[81], 0o755)
    (repo.path / paths[82]).unlink()
    for n in range(20):
        repo.write(f"new/untracked{n}.txt", f"new {n}\n")
    repo.write(paths[83], "")
    repo.cp("save", "-m", "target")
    saved, saved_status = state(repo), repo.git("status", "--porcelain")
    modified = set(paths[:80]) | set(paths[81:84])  # the work tree differs from the index

    # An attempt that touches nearly everything, differently.
    repo.git("reset", "-q", "--hard")
    for path in paths:
        repo.write(path, f"attempt on {path}\n")
    repo.write("attempt-only.txt", "residue\n")
    repo.git("add", paths[90])
    attempt = state(repo)

    repo.cp("restore", "cp_001")
    restored = state(repo)
    # The stat data of every written file whose content the index holds is fresh: only
    # the files that differ from the index look changed to git's stat-only check.
    assert set(repo.git("diff-files", "--name-only").split()) == modified
    assert restored[0] == saved[0]  # the attempt's new file too is gone (undo has it)
    assert restored[1] == saved[1]  # the index, entry for entry
    assert repo.git("status", "--porcelain") == saved_status  # as the stat cache has it
    repo.git("update-index", "--really-refresh", check=False)
    assert repo.git("status", "--porcelain") == saved_status  # and from the files' content

    repo.cp("undo")
    assert state(repo) == attempt
    # The safety checkpoint's 148 new trees went to git as one pack (PACK_FROM), which
    # git reads and checks like any other.
    assert list((repo.path / ".git" / "objects" / "pack").glob("pack-*.idx"))
    fsck = subprocess.run(["git", "fsck", "--strict"], cwd=repo.path, capture_output=True)
    assert fsck.returncode == 0, fsck.stderr


def test_blobs_past_the_memory_limit_and_empty_ones_restore(repo: Repo) -> None:
    paths = _spread(repo)
    big = os.urandom(3 << 20)  # past MEMORY_BLOB_MAX: staged in a file, then renamed
    (repo.path / "big.bin").write_bytes(big)
    repo.write("empty.txt", "")
    for path in paths:
        repo.write(path, f"edit {path}\n")
    repo.cp("save", "-m", "target")
    saved = state(repo)
    (repo.path / "big.bin").write_bytes(b"small now")
    (repo.path / "empty.txt").write_text("not empty")
    for path in paths:
        repo.write(path, "attempt\n")
    repo.cp("restore", "cp_001")
    assert state(repo) == saved
    assert (repo.path / "big.bin").read_bytes() == big


def test_a_symlink_in_a_written_path_is_replaced_never_followed(repo: Repo) -> None:
    paths = _spread(repo)
    outside = repo.path.parent / "outside.txt"
    outside.write_text("not the repository's\n")
    repo.cp("save", "-m", "target")
    saved = state(repo)
    for path in paths:
        repo.write(path, "attempt\n")
    victim = repo.path / paths[5]
    victim.unlink()
    victim.symlink_to(outside)
    repo.cp("restore", "cp_001")
    assert state(repo) == saved
    assert not stat.S_ISLNK(os.lstat(victim).st_mode)
    assert outside.read_text() == "not the repository's\n"


def test_the_trees_file_names_each_checkpoint_with_its_worktree_tree(repo: Repo) -> None:
    repo.write("src/app.py", "print('edited')\n")
    repo.cp("save", "-m", "one")
    commit = repo.git("rev-parse", "refs/checkpoints/main/cp_001").strip()
    tree = repo.git("rev-parse", f"{commit}^{{tree}}").strip()
    kept = (repo.path / ".git" / "checkpoint" / "trees").read_text().split("\n")
    assert f"{commit} {tree} ours" in kept
    for line in filter(None, kept):  # every commit the file names maps to its real tree
        named, real, *_ = line.split(" ")
        assert repo.git("rev-parse", f"{named}^{{tree}}").strip() == real
    assert sum(line.endswith(" ours") for line in kept) == 1  # the I commit is not


def test_a_forged_checkpoint_is_still_checked_after_our_own_saves(repo: Repo) -> None:
    paths = _spread(repo)
    for path in paths:
        repo.write(path, "ours\n")
    repo.cp("save", "-m", "ours")  # the trees file now lists our commits
    one, two = blob(repo, b"one\n"), blob(repo, b"two\n")
    rows = b"".join(
        f"100644 {name}".encode() + b"\0" + bytes.fromhex(oid)
        for name, oid in [("z.txt", one), ("a.txt", two)]  # out of order
    )
    bad = repo.git("hash-object", "-t", "tree", "-w", "--literally", "--stdin", input=rows).strip()
    forge_checkpoint(repo, repo.git("rev-parse", "HEAD^{tree}").strip(), bad)
    before = state(repo)
    proc = repo.cp("restore", "cp_099", expect=3)
    assert "out of order" in proc.stderr
    assert state(repo) == before


def test_a_pack_of_our_trees_reads_and_verifies_as_gits_own(repo: Repo) -> None:
    import hashlib

    from git_checkpoint.gitcore import loose

    empty = bytes.fromhex("e69de29bb2d1d6434b8b29ae775ad8c2e48c5391")
    trees = {}
    for n in range(600):  # ids over the whole fan-out, 00.. to ff..
        body = f"100644 file{n}".encode() + b"\0" + empty
        trees[hashlib.sha1(b"tree %d\0" % len(body) + body).hexdigest()] = body
    assert loose.write_pack(repo.path / ".git" / "objects", 2, trees)
    (idx,) = (repo.path / ".git" / "objects" / "pack").glob("pack-*.idx")
    listed = repo.git("verify-pack", "-v", str(idx))
    assert sum(line.split()[1:2] == ["tree"] for line in listed.splitlines()) == 600
    answer = repo.git("cat-file", "--batch-check", input="".join(f"{t}\n" for t in trees).encode())
    assert answer.split("\n")[:-1] == [f"{t} tree {len(b)}" for t, b in trees.items()]
    for oid in list(trees)[::97]:
        assert repo.git("cat-file", "-p", oid).startswith("100644 blob e69de29")
    fsck = subprocess.run(["git", "fsck", "--strict"], cwd=repo.path, capture_output=True)
    assert fsck.returncode == 0, fsck.stderr


def test_a_pack_whose_index_cannot_be_written_is_not_left(tmp_path: Path) -> None:
    """A full disk between the two files: write_pack wrote and renamed the .pack, then
    failed on the .idx, and left a pack git warns about ('no corresponding .idx') until
    a gc. Both are now written before either is renamed."""
    import hashlib

    from git_checkpoint.gitcore import loose

    if os.geteuid() != 0:
        pytest.skip("mounts a tmpfs (root)")
    disk = tmp_path / "disk"
    disk.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(disk)]).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        (disk / "pack").mkdir()
        empty = bytes.fromhex("e69de29bb2d1d6434b8b29ae775ad8c2e48c5391")
        trees = {}
        for n in range(8000):  # an index of 8000 x 28 bytes: 220 KB
            body = f"100644 f{n}".encode() + b"\0" + empty
            trees[hashlib.sha1(b"tree %d\0" % len(body) + body).hexdigest()] = body
        probe = tmp_path / "probe"
        (probe / "pack").mkdir(parents=True)
        assert loose.write_pack(probe, 2, trees)
        (pack,) = (probe / "pack").glob("*.pack")
        vfs = os.statvfs(disk)
        room = pack.stat().st_size + 64 * 1024  # the pack fits, its index does not
        (disk / "filler").write_bytes(b"\0" * (vfs.f_bavail * vfs.f_frsize - room))
        with pytest.raises(OSError):
            loose.write_pack(disk, 2, trees)
        assert sorted(p.name for p in (disk / "pack").iterdir()) == []
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)
