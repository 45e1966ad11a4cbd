"""Trees written byte for byte, as a hostile remote could (modes git never writes, a
symlink entry naming a commit or no blob, a NUL in a link target, a file entry naming no
blob): read as git reads them, or refused as an unsafe checkpoint before anything
changes, never an internal error."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from ..conftest import Repo
from ..helpers import blob, fingerprint, forge_checkpoint, mktree
from .conftest import same_as_checkout, staging_empty


def _raw_tree(repo: Repo, entries: list[tuple[str, str, str]]) -> str:
    """A tree written byte for byte from (mode, name, id) rows: nothing is checked."""
    data = b"".join(
        m.encode() + b" " + os.fsencode(n) + b"\0" + bytes.fromhex(o) for m, n, o in entries
    )
    return subprocess.run(
        ["git", "hash-object", "-t", "tree", "-w", "--literally", "--stdin"],
        cwd=repo.path, input=data, capture_output=True, check=True,
    ).stdout.decode().strip()  # fmt: skip


def _forge(repo: Repo, entries: list[tuple[str, str, str]]) -> str:
    """A checkpoint whose tracked tree is HEAD's tree plus `entries` (raw rows)."""
    keyed = sorted(_head_rows(repo) + entries, key=_key)
    return forge_checkpoint(repo, _raw_tree(repo, keyed))


# --- crafted trees: the tree parser and the raw symlink path --------------------------


@pytest.mark.parametrize(
    "data",
    [
        b"100644 \0" + b"\x11" * 20,  # empty name
        b"100644 a/b\0" + b"\x11" * 20,  # slash in a name
        b"10064x a\0" + b"\x11" * 20,  # not a number
        b"100689 a\0" + b"\x11" * 20,  # not octal
        b" a\0" + b"\x11" * 20,  # no mode
        b"100644 a\0" + b"\x11" * 19,  # truncated id
        b"100644 a",  # no NUL at all
        b"100644a\0" + b"\x11" * 20,  # no space
    ],
)
def test_a_malformed_tree_is_an_unsafe_checkpoint(repo: Repo, data: bytes) -> None:
    tree = subprocess.run(
        ["git", "hash-object", "-t", "tree", "-w", "--literally", "--stdin"],
        cwd=repo.path, input=data, capture_output=True, check=True,
    ).stdout.decode().strip()  # fmt: skip
    outer = mktree(repo, [("040000", "tree", tree, "evil")])
    forge_checkpoint(repo, outer)
    before = fingerprint(repo.path)
    proc = repo.cp("restore", "cp_099", expect=3)
    assert "unsafe checkpoint" in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert fingerprint(repo.path) == before
    staging_empty(repo)


def test_a_folder_with_a_non_canonical_mode_is_still_a_folder(repo: Repo, tmp_path: Path) -> None:
    src = repo.git("rev-parse", "HEAD:src").strip()
    base = [(m, n, o) for m, n, o in _head_rows(repo) if n != "src"]
    forge_checkpoint(repo, _raw_tree(repo, sorted([*base, ("40755", "src", src)], key=_key)))
    repo.write("src/app.py", "edited\n")
    repo.cp("restore", "cp_099")
    assert (repo.path / "src" / "app.py").read_text() == "print('hello')\n"


def test_a_group_writable_exec_mode_is_executable(repo: Repo, tmp_path: Path) -> None:
    script = blob(repo, b"#!/bin/sh\necho hi\n")
    _forge(repo, [("100775", "run.sh", script)])
    repo.cp("restore", "cp_099")
    assert os.stat(repo.path / "run.sh").st_mode & 0o100
    same_as_checkout(repo, "cp_099", tmp_path)


def test_a_symlink_with_a_non_canonical_mode_is_a_symlink(repo: Repo, tmp_path: Path) -> None:
    _forge(repo, [("120777", "l", blob(repo, b"README.md"))])
    repo.cp("restore", "cp_099")
    assert (repo.path / "l").is_symlink()
    same_as_checkout(repo, "cp_099", tmp_path)


def test_a_zero_padded_mode_is_read_as_git_reads_it(repo: Repo, tmp_path: Path) -> None:
    _forge(repo, [("0100644", "z.txt", blob(repo, b"zero padded\n"))])
    repo.cp("restore", "cp_099")
    assert (repo.path / "z.txt").read_bytes() == b"zero padded\n"


def test_a_symlink_entry_naming_a_commit_is_refused(repo: Repo) -> None:
    head = repo.git("rev-parse", "HEAD").strip()
    _forge(repo, [("120000", "l", head)])
    before = fingerprint(repo.path)
    proc = repo.cp("restore", "cp_099", expect=None)
    assert proc.returncode in (3, 4) and "internal error" not in proc.stderr
    assert fingerprint(repo.path) == before


@pytest.mark.parametrize("what", ["tree", "missing"])
def test_a_symlink_entry_naming_no_blob_is_a_plain_error(repo: Repo, what: str) -> None:
    oid = repo.git("rev-parse", "HEAD:src").strip() if what == "tree" else "12" * 20
    _forge(repo, [("120000", "l", oid)])
    before = fingerprint(repo.path)
    proc = repo.cp("restore", "cp_099", expect=None)
    assert proc.returncode in (3, 4), proc.stderr
    assert "internal error" not in proc.stderr, proc.stderr
    assert fingerprint(repo.path) == before


def test_a_symlink_blob_with_a_nul_is_no_internal_error(repo: Repo) -> None:
    _forge(repo, [("120000", "l", blob(repo, b"README.md\0junk"))])
    proc = repo.cp("restore", "cp_099", expect=None)
    assert "internal error" not in proc.stderr, proc.stderr


@pytest.mark.parametrize("what", ["tree", "commit", "missing"])
def test_a_file_entry_naming_no_blob_stops_before_anything_changes(repo: Repo, what: str) -> None:
    oid = {
        "tree": repo.git("rev-parse", "HEAD:src").strip(),
        "commit": repo.git("rev-parse", "HEAD").strip(),
        "missing": "12" * 20,
    }[what]
    _forge(repo, [("100644", "f.txt", oid)])
    repo.write("README.md", "edited\n")
    before = fingerprint(repo.path)
    proc = repo.cp("restore", "cp_099", expect=None)
    assert proc.returncode in (3, 4) and "Traceback" not in proc.stderr
    assert "internal error" not in proc.stderr
    assert fingerprint(repo.path) == before
    staging_empty(repo)


# --- small helpers for the forged trees above ---------------------------------------------


def _head_rows(repo: Repo) -> list[tuple[str, str, str]]:
    out = []
    for line in repo.git("ls-tree", "HEAD").splitlines():
        meta, name = line.split("\t", 1)
        mode, _, oid = meta.split()
        out.append((mode.lstrip("0") or "0", name, oid))
    return out


def _key(row: tuple[str, str, str]) -> str:
    return row[1] + ("/" if row[0].startswith("40") else "")
