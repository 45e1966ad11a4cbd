"""A restore that fails part way (a smudge filter, a full disk, a file that cannot be
written) goes back by itself: the workspace as it was, no journal, no staged files left;
the leftovers of a killed restore are cleared and never restored."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ..conftest import Repo, make_repo
from ..helpers import fingerprint, state
from .conftest import JOURNAL, staging_empty


def test_a_failing_smudge_filter_changes_nothing(two: Repo) -> None:
    two.write(".gitattributes", "*.dat filter=broken\n")
    two.write("x.dat", "data\n")
    two.git("config", "filter.broken.clean", "cat")
    two.git("config", "filter.broken.smudge", "false")
    two.git("config", "filter.broken.required", "true")
    two.cp("save", "-m", "with dat")
    two.write("x.dat", "changed\n")
    (two.path / "b.txt").unlink()
    before = state(two)
    proc = two.cp("restore", "cp_002", expect=4)
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert state(two) == before
    assert not (two.path / JOURNAL).exists()


def test_a_full_disk_changes_nothing(tmp_path: Path) -> None:
    mount = tmp_path / "small"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)]).returncode:
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    try:
        repo = make_repo(mount / "work")
        repo.write("a.txt", "one\n")
        repo.commit_all("a")
        repo.write("big.bin", os.urandom(300_000))
        repo.cp("save", "-m", "big")
        (repo.path / "big.bin").unlink()
        repo.write("a.txt", "two\n")
        filler = mount / "filler"
        with open(filler, "wb") as fh:  # leave about 100 KB free
            free = shutil.disk_usage(mount).free
            fh.write(b"\0" * max(0, free - 100_000))
        before = state(repo)
        proc = repo.cp("restore", "cp_001", expect=None)
        assert proc.returncode in (3, 4), proc.stdout
        assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
        assert state(repo) == before
        filler.unlink()
        repo.cp("restore", "cp_001", expect=None)
        assert (repo.path / "big.bin").exists() or "interrupted" in repo.cp("status").stderr
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_write_that_fails_midway_goes_back_by_itself(repo: Repo) -> None:
    if shutil.which("chattr") is None:
        pytest.skip("no chattr")
    repo.write("a.txt", "one\n")
    repo.write("d/b.txt", "one\n")
    repo.commit_all("files")
    repo.cp("save", "-m", "one")
    repo.write("a.txt", "two\n")
    repo.write("d/b.txt", "two\n")
    before = state(repo)
    # An immutable file can be neither written over nor unlinked.
    if subprocess.run(["chattr", "+i", str(repo.path / "d/b.txt")]).returncode:
        pytest.skip("this filesystem has no immutable files")
    try:
        proc = repo.cp("restore", "cp_001", expect=None)
    finally:
        subprocess.run(["chattr", "-i", str(repo.path / "d/b.txt")], check=True)
    assert proc.returncode in (3, 4)
    assert "put back" in proc.stderr and "Traceback" not in proc.stderr
    assert state(repo) == before
    assert not (repo.path / JOURNAL).exists()


def test_a_failing_smudge_filter_leaves_no_staged_files(repo: Repo) -> None:
    repo.write(".gitattributes", "*.txt filter=bad\n")
    repo.write("a.txt", "a\n")
    repo.write("b.bin", "b\n")
    repo.commit_all("filtered")
    repo.cp("save", "-m", "base")
    repo.git("config", "filter.bad.smudge", "false")
    repo.git("config", "filter.bad.required", "true")
    (repo.path / "a.txt").unlink()
    (repo.path / "b.bin").unlink()
    before = fingerprint(repo.path)
    repo.cp("restore", "cp_001", expect=4)
    assert fingerprint(repo.path) == before
    staging_empty(repo)


def test_leftovers_of_a_killed_restore_are_cleared_and_never_restored(repo: Repo) -> None:
    stage = repo.path / ".git" / "checkpoint" / "staging"
    stage.mkdir(parents=True)
    (stage / "0").write_text("stale\n")
    (stage / "tree" / "src").mkdir(parents=True)
    (stage / "tree" / "src" / "app.py").write_text("stale\n")
    os.symlink("/etc/passwd", stage / "1")
    repo.cp("save", "-m", "base")
    repo.write("src/app.py", "edited\n")
    repo.write("README.md", "edited\n")
    repo.cp("restore", "cp_001")
    assert (repo.path / "src" / "app.py").read_text() == "print('hello')\n"
    assert (repo.path / "README.md").read_text() == "# project\n"
    staging_empty(repo)
