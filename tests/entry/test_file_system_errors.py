"""Errors of the file system (an immutable git dir or folder, a full disk) during a save
(exit 4) or a restore are one line, with nothing half made."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..conftest import Repo, make_repo
from ..helpers import immutable, one_line_of, state

needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("chattr"),
    reason="root ignores permissions: the test needs root and chattr for an immutable flag",
)


@needs_root
@pytest.mark.parametrize("where", [".git", ".git/checkpoint"])
def test_permission_error_in_the_git_dir_is_one_line_exit_4(repo: Repo, where: str) -> None:
    repo.cp("save", "-m", "one")
    repo.write("src/app.py", "print('edited')\n")
    before = state(repo)
    refs = repo.git("for-each-ref", "refs/checkpoints/")
    with immutable(repo.path / where):
        line = one_line_of(repo.cp("save", expect=4))
        assert "Operation not permitted" in line and "lsattr" in line
        if where == ".git":  # status needs a scratch index there; .git/checkpoint it only reads
            assert "lsattr" in one_line_of(repo.cp("status", expect=4))
        else:
            repo.cp("status")
    assert state(repo) == before
    assert repo.git("for-each-ref", "refs/checkpoints/") == refs  # no checkpoint half made


@needs_root
def test_permission_error_on_an_immutable_folder_during_restore_is_one_line(repo: Repo) -> None:
    repo.cp("save", "-m", "one")
    repo.write("src/app.py", "print('edited')\n")
    before = state(repo)
    # The file too: a file in an immutable folder can still be written over in place.
    with immutable(repo.path / "src"), immutable(repo.path / "src/app.py"):
        proc = repo.cp("restore", "cp_001", expect=None)
        assert proc.returncode in (3, 4)
        one_line_of(proc)
    assert state(repo) == before


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs: the repository goes in it, and it is filled up later."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs to fill needs root")
    mount = tmp_path / "small"
    mount.mkdir()
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True
    )
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


def test_no_space_left_during_save_is_one_line_exit_4(full_disk: Path) -> None:
    repo = make_repo(full_disk / "work")
    repo.write("src/app.py", "print('hello')\n")
    repo.commit_all("initial")
    repo.cp("save", "-m", "one")
    repo.write("src/app.py", "print('edited')\n")
    with open(full_disk / "filler", "wb") as fh, contextlib.suppress(OSError):
        while True:
            fh.write(b"\0" * 65536)
    before = state(repo)
    refs = repo.git("for-each-ref", "refs/checkpoints/")
    line = one_line_of(repo.cp("save", "-m", "two", expect=4))
    # Ours (an OSError) or git's own words, as whichever write meets the full disk first
    # (the scratch index is a link now: the first write is git's, refreshing it).
    assert "No space left on device" in line or "Out of diskspace" in line, line
    assert state(repo) == before
    assert repo.git("for-each-ref", "refs/checkpoints/") == refs
