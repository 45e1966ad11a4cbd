"""`.gitattributes` files in a forged checkpoint: one naming a missing blob or a tree, one
below `..` or `.git`, one both tracked and a folder in the overlay. The restore stops
before anything changes; a huge one is read as git reads it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from ..conftest import Repo
from ..helpers import blob, forge_checkpoint, mktree, state
from ..restore_oracle import same_as
from .conftest import fresh_checkout


def _raw_tree(repo: Repo, entries: list[tuple[str, str, str]]) -> str:
    """A tree written byte for byte from (mode, name, id) rows: nothing is checked."""
    data = b"".join(
        m.encode() + b" " + os.fsencode(n) + b"\0" + bytes.fromhex(o)
        for m, n, o in sorted(entries, key=lambda e: e[1] + ("/" if e[0] == "40000" else ""))
    )
    return subprocess.run(
        ["git", "hash-object", "-t", "tree", "-w", "--literally", "--stdin"],
        cwd=repo.path, input=data, capture_output=True, check=True,
    ).stdout.decode().strip()  # fmt: skip


def _with_root_rule(repo: Repo) -> list[tuple[str, str, str]]:
    """HEAD gets a root .gitattributes (the forged target lacks it: the restore removes
    it); the rows of HEAD's tree without it."""
    repo.write(".gitattributes", "*.txt -text\n")
    repo.write("t.txt", "one\n")
    repo.commit_all("a root rule")
    rows = []
    for line in repo.git("ls-tree", "HEAD").splitlines():
        meta, name = line.split("\t", 1)
        mode, _, oid = meta.split(" ")
        if name != ".gitattributes":
            rows.append((mode.lstrip("0") if mode == "040000" else mode, name, oid))
    return rows


def _refused_cleanly(repo: Repo, proc: subprocess.CompletedProcess[str], code: int) -> None:
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


MISSING = "1234567890123456789012345678901234567890"


@pytest.mark.parametrize("where", ["tracked", "overlay"])
def test_a_kept_rule_file_naming_a_missing_blob_stops_before_anything(
    repo: Repo, where: str
) -> None:
    rows = _with_root_rule(repo)
    sub = _raw_tree(repo, [("100644", ".gitattributes", MISSING)])
    if where == "tracked":
        forge_checkpoint(repo, _raw_tree(repo, [*rows, ("40000", "sub", sub)]))
    else:
        forge_checkpoint(repo, _raw_tree(repo, rows), _raw_tree(repo, [("40000", "sub", sub)]))
    repo.write("t.txt", "two\n")
    before = state(repo)
    proc = repo.cp("restore", "cp_099", expect=None)
    _refused_cleanly(repo, proc, 4 if proc.returncode == 4 else 3)
    assert state(repo) == before


def test_a_kept_rule_file_naming_a_tree_stops_before_anything(repo: Repo) -> None:
    rows = _with_root_rule(repo)
    sub = _raw_tree(repo, [("100644", ".gitattributes", mktree(repo, []))])
    forge_checkpoint(repo, _raw_tree(repo, [*rows, ("40000", "sub", sub)]))
    repo.write("t.txt", "two\n")
    before = state(repo)
    proc = repo.cp("restore", "cp_099", expect=None)
    _refused_cleanly(repo, proc, proc.returncode if proc.returncode in (3, 4) else -1)
    assert state(repo) == before


@pytest.mark.parametrize("folder", ["..", ".git", ".GIT", "."])
def test_a_rule_file_under_a_hostile_folder_is_refused(repo: Repo, folder: str) -> None:
    rows = _with_root_rule(repo)
    rule = blob(repo, b"* filter=evil\n")
    sub = _raw_tree(repo, [("100644", ".gitattributes", rule)])
    forge_checkpoint(repo, _raw_tree(repo, rows), _raw_tree(repo, [("40000", folder, sub)]))
    repo.write("t.txt", "two\n")
    before = state(repo)
    proc = repo.cp("restore", "cp_099", expect=None)
    _refused_cleanly(repo, proc, 3)
    assert state(repo) == before
    assert not (repo.path.parent / ".gitattributes").exists()
    assert not (repo.path / ".git" / ".gitattributes").exists()


def test_a_rule_file_both_tracked_and_a_folder_in_the_overlay(repo: Repo) -> None:
    rows = _with_root_rule(repo)
    rule = blob(repo, b"*.txt eol=crlf\n")
    tracked = _raw_tree(repo, [("100644", ".gitattributes", rule)])
    inner = _raw_tree(repo, [("100644", ".gitattributes", rule)])
    overlay = _raw_tree(
        repo, [("40000", "sub", _raw_tree(repo, [("40000", ".gitattributes", inner)]))]
    )
    forge_checkpoint(repo, _raw_tree(repo, [*rows, ("40000", "sub", tracked)]), overlay)
    repo.write("t.txt", "two\n")
    before = state(repo)
    proc = repo.cp("restore", "cp_099", expect=None)
    assert "Traceback" not in proc.stderr
    if proc.returncode != 0:
        _refused_cleanly(repo, proc, proc.returncode if proc.returncode in (3, 4) else -1)
        assert state(repo) == before


def test_a_huge_kept_rule_file(repo: Repo, tmp_path: Path) -> None:
    rows = _with_root_rule(repo)
    rule = blob(repo, b"# pad\n" * 400_000 + b"*.txt eol=crlf\n")
    sub = _raw_tree(
        repo, [("100644", ".gitattributes", rule), ("100644", "a.txt", blob(repo, b"x\n"))]
    )
    commit = forge_checkpoint(repo, _raw_tree(repo, [*rows, ("40000", "sub", sub)]))
    repo.write("t.txt", "two\n")
    repo.cp("restore", "cp_099")
    wanted = fresh_checkout(repo, commit, tmp_path / "oracle")
    same_as(repo, wanted, ["sub/a.txt", "t.txt"])
