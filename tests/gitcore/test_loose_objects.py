"""Objects written in-process (gitcore/loose): left to git where git's own settings or
environment decide where and how (a shared repository, an object directory from the
environment), trees already there renewed rather than rewritten, and a pack of trees
git reads and verifies as its own, never left without its index."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from git_checkpoint.gitcore import loose

from ..conftest import Repo


def test_a_shared_repository_gets_its_objects_from_git(repo: Repo) -> None:
    """core.sharedRepository: git writes the objects, with the group's permissions (a
    folder we made under umask 077 would shut the group out)."""
    repo.git("config", "core.sharedRepository", "group")
    repo.write("deep/er/still/file.txt", "new\n")
    repo.git("add", "deep")
    repo.commit_all("deep")
    repo.write("deep/er/still/file.txt", "edited\n")
    repo.write("fresh/folder/new.txt", "untracked\n")
    objects = repo.path / ".git/objects"
    before = set(objects.iterdir())
    old = os.umask(0o077)
    try:
        repo.cp("save", "-m", "shared")
    finally:
        os.umask(old)
    made = [f for f in set(objects.iterdir()) - before if len(f.name) == 2]
    assert made  # the save wrote objects in folders of its own
    for folder in made:
        assert folder.stat().st_mode & 0o070 == 0o070, folder


def test_objects_elsewhere_are_left_to_git(monkeypatch: pytest.MonkeyPatch) -> None:
    """An object directory or quarantine from the environment: git knows where to write."""
    assert loose.usable([("core.autocrlf", "true")])
    for name in ("GIT_OBJECT_DIRECTORY", "GIT_QUARANTINE_PATH"):
        with monkeypatch.context() as patch:
            patch.setenv(name, "/elsewhere")
            assert not loose.usable([])
    assert not loose.usable([("core.sharedrepository", "group")])


def test_a_tree_already_there_is_renewed_not_rewritten(tmp_path: Path) -> None:
    body = b"100644 a\0" + bytes(20)
    oid = "0" * 40  # any name: write_trees trusts its caller's ids
    loose.write_trees(tmp_path, {oid: body})
    path = tmp_path / oid[:2] / oid[2:]
    assert path.stat().st_mode & 0o777 == 0o444 & ~current_umask()
    os.utime(path, (1, 1))
    loose.write_trees(tmp_path, {oid: b"other"})
    assert path.stat().st_mtime > 1  # freshened, as git does, so a prune keeps it
    import zlib

    assert zlib.decompress(path.read_bytes()) == b"tree %d\0" % len(body) + body


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


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
    """A full disk between the two files: write_pack writes both the .pack and the .idx
    before it renames either, so a failure on the .idx leaves no pack git would warn
    about ('no corresponding .idx') until a gc."""
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
