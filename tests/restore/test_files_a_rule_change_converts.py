"""A restore that adds, removes or changes a `.gitattributes` writes the files below it
as git's checkout writes them under the checkpoint's rules, though their content is the
same on both sides (a `* text eol=crlf` removed: the files it made CRLF come back LF), and
git then sees them clean; a file whose bytes are git's already is left as it is; undo
puts the rule and the bytes back."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from ..conftest import Repo
from ..helpers import state
from .conftest import cp_commit, fresh_checkout

FILES = ["a.txt", "sub/b.txt", "README.md", ".gitignore", ".checkpoint.yaml"]


def _files(repo: Repo) -> None:
    repo.write("a.txt", "one\ntwo\n")
    repo.write("sub/b.txt", "bee\n")
    repo.write(".checkpoint.yaml", "verifiers: []\n")
    repo.commit_all("files")


def _as_git_writes(repo: Repo) -> None:
    for path in FILES:
        (repo.path / path).unlink()
    repo.git("checkout", "--", *FILES)


def _same_as_checkout(repo: Repo, tmp_path: Path) -> None:
    """The tracked files as git's checkout of cp_001 writes them, and git sees them
    clean."""
    wanted = fresh_checkout(repo, cp_commit(repo, "cp_001"), tmp_path / "oracle")
    got = state(repo)[0]
    assert {p: got.get(p) for p in wanted} == wanted
    assert repo.git("status", "--porcelain", "--untracked-files=all") == ""


def test_an_untracked_rule_removed_leaves_its_files_as_git_writes_them(
    repo: Repo, tmp_path: Path
) -> None:
    _files(repo)
    repo.cp("save", "-m", "no rule")
    repo.write(".gitattributes", "*.txt text eol=crlf\n")  # untracked: in the overlay
    _as_git_writes(repo)
    assert (repo.path / "a.txt").read_bytes() == b"one\r\ntwo\r\n"
    before = state(repo)
    out = repo.cp("restore", "cp_001").stdout
    assert not (repo.path / ".gitattributes").exists()
    assert (repo.path / "a.txt").read_bytes() == b"one\ntwo\n"
    assert "brought back: a.txt" in out and "workspace matches cp_001" in out
    _same_as_checkout(repo, tmp_path)
    repo.cp("undo")
    assert state(repo) == before


@pytest.mark.parametrize("how", ["tracked", "untracked"])
def test_a_rule_brought_back_converts_the_files_it_did_not_change(
    repo: Repo, tmp_path: Path, how: str
) -> None:
    _files(repo)
    repo.write("sub/.gitattributes", "*.txt text eol=crlf\n")
    if how == "tracked":
        repo.commit_all("rule")
    (repo.path / "sub/b.txt").unlink()
    repo.git("checkout", "--", "sub/b.txt")
    repo.cp("save", "-m", "rule")
    if how == "tracked":
        repo.git("rm", "-q", "sub/.gitattributes")
    else:
        (repo.path / "sub/.gitattributes").unlink()
    _as_git_writes(repo)
    assert (repo.path / "sub/b.txt").read_bytes() == b"bee\n"
    before = state(repo)
    out = repo.cp("restore", "cp_001").stdout
    assert (repo.path / "sub/b.txt").read_bytes() == b"bee\r\n"
    assert "brought back: sub/b.txt" in out and "a.txt" not in out  # (not below the rule)
    if how == "tracked":
        _same_as_checkout(repo, tmp_path)
    assert repo.git("status", "--porcelain") == (
        "" if how == "tracked" else "?? sub/.gitattributes\n"
    )
    repo.cp("undo")
    assert state(repo) == before


def test_a_file_already_as_git_writes_it_is_left_alone(repo: Repo, tmp_path: Path) -> None:
    """`* text` gives LF here with or without the rule: the file is not written again."""
    _files(repo)
    repo.cp("save", "-m", "no rule")
    repo.write(".gitattributes", "*.txt text\n")
    inode = os.stat(repo.path / "a.txt").st_ino
    out = repo.cp("restore", "cp_001").stdout
    assert "0 written, 1 removed" in out, out
    assert os.stat(repo.path / "a.txt").st_ino == inode
    _same_as_checkout(repo, tmp_path)


def test_rule_files_below_a_changed_rule_get_gits_bytes(repo: Repo, tmp_path: Path) -> None:
    """.gitignore and .checkpoint.yaml go first (what they say decides the rest), then
    again once the `.gitattributes` above them is in place, changed or not."""
    repo.write(".gitattributes", "* text eol=crlf\n")
    _files(repo)
    _as_git_writes(repo)
    repo.cp("save", "-m", "CRLF everywhere")
    repo.git("rm", "-q", ".gitattributes")
    repo.write(".gitignore", "*.log\n")  # changed
    repo.git("add", ".gitignore")
    _as_git_writes(repo)
    assert (repo.path / ".checkpoint.yaml").read_bytes() == b"verifiers: []\n"
    repo.cp("restore", "cp_001")
    assert (repo.path / ".gitignore").read_bytes() == b"*.log\r\nnode_modules/\r\n"
    assert (repo.path / ".checkpoint.yaml").read_bytes() == b"verifiers: []\r\n"
    _same_as_checkout(repo, tmp_path)


def test_a_rule_file_below_a_removed_rule_gets_gits_bytes(repo: Repo, tmp_path: Path) -> None:
    """sub/.gitattributes, the same on both sides, was made CRLF by the rule removed: it
    comes back LF, checked against the safety checkpoint before the rule goes."""
    repo.write("sub/.gitattributes", "*.md ident\n")
    repo.write("sub/a.txt", "x\n")
    repo.commit_all("a nested rule")
    repo.cp("save", "-m", "no root rule")
    repo.write(".gitattributes", "* text eol=crlf\r\n")  # untracked, as git would write it
    for path in repo.git("ls-files", "-z").split("\0"):
        if path:
            (repo.path / path).unlink()
    repo.git("checkout", "--", ".")
    assert (repo.path / "sub/.gitattributes").read_bytes() == b"*.md ident\r\n"
    before = state(repo)
    repo.cp("restore", "cp_001")
    assert (repo.path / "sub/.gitattributes").read_bytes() == b"*.md ident\n"
    _same_as_checkout(repo, tmp_path)
    repo.cp("undo")
    assert state(repo) == before
