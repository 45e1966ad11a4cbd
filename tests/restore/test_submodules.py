"""Submodules and a restore: one at another commit is reported, not called clean; one in
the place of a file the target holds is refused before anything is written."""

from __future__ import annotations

from pathlib import Path

from ..conftest import Repo, make_repo
from ..helpers import state


def test_a_submodule_elsewhere_is_reported_not_called_clean(repo: Repo, tmp_path: Path) -> None:
    sub = make_repo(tmp_path / "sub")
    sub.write("s.txt", "1\n")
    first = sub.commit_all("s1")
    sub.write("s.txt", "2\n")
    sub.commit_all("s2")
    repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub.path), "lib")
    repo.git("-C", "lib", "checkout", "-q", first)
    repo.commit_all("submodule at s1")
    repo.cp("save", "-m", "at s1")
    repo.git("-C", "lib", "checkout", "-q", "main")
    out = repo.cp("restore", "cp_001").stdout
    assert "submodule not restored" in out and "lib is at" in out
    assert "but for the submodules" in out


def test_replacing_a_submodule_with_a_file_is_refused_before_writing(
    repo: Repo, tmp_path: Path
) -> None:
    sub = make_repo(tmp_path / "sub")
    sub.write("s", "s\n")
    sub.commit_all("s")
    repo.write("sub", "a file\n")
    repo.commit_all("file")
    repo.cp("save")
    repo.git("rm", "-q", "sub")
    repo.git("commit", "-qm", "rm")
    repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub.path), "sub")
    repo.git("commit", "-qm", "submodule")
    repo.write("sub/w.txt", "work in the submodule\n")
    before = state(repo)
    proc = repo.cp("restore", "cp_001", "--keep-head", expect=3)
    assert "submodule 'sub'" in proc.stderr
    assert state(repo) == before
    assert not (repo.path / ".git/checkpoint/restore-journal.json").exists()
