"""A restore replaces a file as git's checkout does, by a new file (materialize.
_write_in_place), never by writing over the old one: a process that holds the old file
(a shell reading a script, a mapping, a writer) keeps it and never sees the restored
bytes, a second hard link keeps its own, and the new file gets a new file's
permissions. (Writing in place was tried for speed, and a running script read on in
the restored file: tests/test_attack_overwrite.py.)"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from .conftest import Repo


def _fresh_perms(executable: bool = False) -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return (0o777 if executable else 0o666) & ~mask


def _saved(repo: Repo) -> None:
    repo.write("long.txt", "L" * 3000 + "\n")
    repo.write("short.txt", "s\n")
    repo.write("bin/run.sh", "#!/bin/sh\necho saved\n", mode=0o755)
    repo.commit_all("files")
    repo.cp("save", "-m", "good")


def test_a_file_held_open_keeps_its_bytes_and_the_path_gets_a_new_file(repo: Repo) -> None:
    _saved(repo)
    attempt = {
        "long.txt": b"now short\n",
        "short.txt": b"S" * 5000,
        "bin/run.sh": b"#!/bin/sh\necho attempt\n",
    }
    for path, data in attempt.items():
        (repo.path / path).write_bytes(data)
    held = {path: os.open(repo.path / path, os.O_RDONLY) for path in attempt}
    try:
        repo.cp("restore", "cp_001")
        for path, fd in held.items():
            assert os.fstat(fd).st_ino != os.stat(repo.path / path).st_ino, path
            assert os.pread(fd, 10000, 0) == attempt[path], path
    finally:
        for fd in held.values():
            os.close(fd)
    assert (repo.path / "long.txt").read_bytes() == b"L" * 3000 + b"\n"
    assert (repo.path / "short.txt").read_bytes() == b"s\n"
    mode = os.stat(repo.path / "bin/run.sh").st_mode
    assert stat.S_IMODE(mode) == _fresh_perms(executable=True)
    assert repo.git("status", "--porcelain") == ""

    repo.cp("undo")
    for path, data in attempt.items():
        assert (repo.path / path).read_bytes() == data, path


def test_a_file_with_a_second_hard_link_is_replaced_not_overwritten(
    repo: Repo, tmp_path: Path
) -> None:
    _saved(repo)
    (repo.path / "long.txt").write_bytes(b"attempt\n")
    other = tmp_path / "elsewhere.txt"
    os.link(repo.path / "long.txt", other)

    repo.cp("restore", "cp_001")

    assert (repo.path / "long.txt").read_bytes() == b"L" * 3000 + b"\n"
    assert other.read_bytes() == b"attempt\n"  # the other name keeps its own bytes
    assert os.stat(other).st_ino != os.stat(repo.path / "long.txt").st_ino


def test_a_file_with_other_permissions_gets_a_new_files_permissions(repo: Repo) -> None:
    _saved(repo)
    target = repo.path / "long.txt"
    target.write_bytes(b"attempt\n")
    target.chmod(0o600)  # git does not see it; a checkout's new file would not keep it

    repo.cp("restore", "cp_001")

    assert target.read_bytes() == b"L" * 3000 + b"\n"
    assert stat.S_IMODE(os.stat(target).st_mode) == _fresh_perms()
