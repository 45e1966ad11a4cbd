"""SHA-256 repositories: their objects are left to git, a save is refused in one line
until they are supported, and a round trip is marked as what is still missing."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from git_checkpoint.gitcore import loose

from ..conftest import Repo


def sha256_repo(tmp_path: Path) -> Repo:
    path = tmp_path / "r256"
    subprocess.run(["git", "init", "-q", "--object-format=sha256", str(path)], check=True)
    return Repo(path)


def test_sha256_objects_are_left_to_git(repo: Repo, tmp_path: Path) -> None:
    """Ids of 64 hex digits: the overlay's tree and the graft's trees come from git."""
    from git_checkpoint.gitcore.repo import Repo as GitRepo

    usual = GitRepo.discover(repo.path)
    assert usual.sha1() and loose.usable(usual.config_pairs())
    other = GitRepo.discover(sha256_repo(tmp_path).path)
    assert not other.sha1() and not loose.usable(other.config_pairs())


@pytest.mark.xfail(
    strict=True,
    reason="SHA-256 repositories are not supported yet: the refs are created against a "
    "40-digit zero id (gitcore/formats.ZERO_OID), and manifests and sharing expect 40-digit ids",
)
def test_a_sha256_repository_saves_and_restores(tmp_path: Path) -> None:
    repo = sha256_repo(tmp_path)
    path = repo.path
    repo.write("src/app.py", "print('one')\n")
    repo.commit_all("init")
    repo.write("src/app.py", "print('two')\n")
    repo.write("notes.txt", "untracked\n")
    repo.cp("save", "-m", "two")
    repo.write("src/app.py", "print('three')\n")
    (path / "notes.txt").unlink()
    repo.cp("restore", "cp_001")
    assert (path / "src/app.py").read_text() == "print('two')\n"
    assert (path / "notes.txt").read_text() == "untracked\n"
    repo.git("fsck", "--strict", "--no-dangling")


def test_a_sha256_repository_is_refused_in_one_line(tmp_path: Path) -> None:
    """Until it is supported: exit 3 and why, not git's complaint about a zero id."""
    repo = sha256_repo(tmp_path)
    repo.write("src/app.py", "print('one')\n")
    repo.commit_all("init")
    repo.write("src/app.py", "print('two')\n")
    proc = repo.cp("save", "-m", "two", expect=3)
    assert proc.stderr.count("\n") == 1 and "SHA-256" in proc.stderr
    assert repo.cp_json("save", "-m", "two", "--json", expect=3)["exit_code"] == 3
    assert repo.git("for-each-ref", "refs/checkpoints/") == ""
    assert (repo.path / "src/app.py").read_text() == "print('two')\n"
    doctor = repo.cp("doctor", expect=None)
    assert doctor.returncode != 0 and "SHA-256" in doctor.stdout + doctor.stderr
