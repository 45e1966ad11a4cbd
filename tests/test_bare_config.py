"""A config key given without a value (`[core] autocrlf` alone, or `git -c core.autocrlf
…`) is true to git. It was read as an empty value, so a restore took core.autocrlf as
off and wrote LF where git's checkout writes CRLF (and an empty core.ignoreCase as
on, where git reads it as off)."""

from __future__ import annotations

from .conftest import Repo


def test_a_bare_autocrlf_converts_as_gits_checkout_does(repo: Repo) -> None:
    with open(repo.path / ".git" / "config", "a") as fh:
        fh.write("[core]\n\tautocrlf\n")
    assert repo.git("config", "--type=bool", "core.autocrlf").strip() == "true"
    repo.write("notes.txt", "one\ntwo\n")
    repo.commit_all("notes")
    (repo.path / "notes.txt").unlink()
    repo.git("checkout", "--", "notes.txt")  # as git's own checkout writes it
    as_git_writes = (repo.path / "notes.txt").read_bytes()
    assert as_git_writes == b"one\r\ntwo\r\n"
    repo.cp("save", "-m", "clean")
    (repo.path / "notes.txt").write_bytes(b"edited\r\n")
    repo.cp("restore", "cp_001")
    assert (repo.path / "notes.txt").read_bytes() == as_git_writes
    assert repo.git("status", "--porcelain") == ""
