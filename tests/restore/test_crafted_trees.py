"""Trees written byte for byte, as a hostile remote could (modes git's fsck flags, a
symlink entry naming a commit or no blob, a NUL in a link target, a file entry naming no
blob): read as git reads them, or refused as an unsafe checkpoint before anything
changes, never an internal error. A mode git never writes is refused (git would read
`12345` as a submodule): all but 100664, which git's fsck lets through."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from ..conftest import Repo
from ..helpers import (
    blob,
    configure,
    fingerprint,
    forge_checkpoint,
    mktree,
    one_line_of,
    state,
    verifier,
)
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


@pytest.mark.parametrize(
    ("mode", "problem"),
    [
        ("12345", "badFilemode"),  # git would read a submodule
        ("100777", "badFilemode"),  # an executable file to git
        ("100775", "badFilemode"),
        ("120777", "badFilemode"),  # a symlink to git
        ("0100644", "zeroPaddedFilemode"),  # a file to git; a fetch with fsck refuses it
    ],
)
@pytest.mark.parametrize("where", ["tracked", "index", "overlay"])
def test_a_mode_git_fsck_flags_is_an_unsafe_checkpoint(
    repo: Repo, mode: str, problem: str, where: str
) -> None:
    row = (mode, "z.txt", blob(repo, b"odd mode\n"))
    rows = sorted([*_head_rows(repo), row], key=_key)
    head_tree = repo.git("rev-parse", "HEAD^{tree}").strip()
    if where == "tracked":
        forge_checkpoint(repo, _raw_tree(repo, rows))
    elif where == "index":
        _forge_index(repo, _raw_tree(repo, rows))
    else:
        forge_checkpoint(repo, head_tree, _raw_tree(repo, [row]))
    repo.write("README.md", "edited\n")
    before = state(repo)
    proc = repo.cp("restore", "cp_099", expect=3)
    line = one_line_of(proc)
    assert "unsafe checkpoint" in line and problem in line and repr("z.txt") in line, line
    assert state(repo) == before
    staging_empty(repo)


@pytest.mark.parametrize("mode", ["40755", "040000"])
def test_a_folder_mode_git_fsck_flags_is_an_unsafe_checkpoint(repo: Repo, mode: str) -> None:
    src = repo.git("rev-parse", "HEAD:src").strip()
    base = [(m, n, o) for m, n, o in _head_rows(repo) if n != "src"]
    forge_checkpoint(repo, _raw_tree(repo, sorted([*base, (mode, "src", src)], key=_key)))
    repo.write("src/app.py", "edited\n")
    before = state(repo)
    line = one_line_of(repo.cp("restore", "cp_099", expect=3))
    assert "unsafe checkpoint" in line and "Filemode" in line, line
    assert state(repo) == before


def test_verify_refuses_a_mode_git_fsck_flags_before_any_checkout(repo: Repo) -> None:
    """verify checks a checkpoint out in a temporary worktree: the same refusal first."""
    configure(repo, verifier("ok", "true"))
    _forge(repo, [("100777", "z.txt", blob(repo, b"odd mode\n"))])
    line = one_line_of(repo.cp("verify", "cp_099", expect=3))
    assert "unsafe checkpoint" in line and "badFilemode" in line, line
    assert repo.git("worktree", "list", "--porcelain").count("worktree ") == 1


def test_the_old_group_writable_mode_is_read_as_git_reads_it(repo: Repo, tmp_path: Path) -> None:
    """100664, which early git wrote, passes git's fsck: a file, not executable."""
    _forge(repo, [("100664", "old.txt", blob(repo, b"from early git\n"))])
    repo.cp("restore", "cp_099")
    assert not os.stat(repo.path / "old.txt").st_mode & 0o100
    same_as_checkout(repo, "cp_099", tmp_path)


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


def _forge_index(repo: Repo, index_tree: str) -> None:
    """A checkpoint of HEAD's tree whose index (parent 2) is `index_tree`."""
    head = repo.git("rev-parse", "HEAD").strip()
    index = repo.git("commit-tree", index_tree, "-p", head, "-m", "index").strip()
    message = (
        f"checkpoint cp_099 on main: forged\n\nbase_commit: {head}\ntask: main\n"
        "checkpoint_id: cp_099\nauto: false\n"
    )
    commit = repo.git(
        "commit-tree", f"{head}^{{tree}}", "-p", head, "-p", index, "-m", message
    ).strip()
    repo.git("update-ref", "refs/checkpoints/main/cp_099", commit)


def _head_rows(repo: Repo) -> list[tuple[str, str, str]]:
    out = []
    for line in repo.git("ls-tree", "HEAD").splitlines():
        meta, name = line.split("\t", 1)
        mode, _, oid = meta.split()
        out.append((mode.lstrip("0") or "0", name, oid))
    return out


def _key(row: tuple[str, str, str]) -> str:
    return row[1] + ("/" if row[0].startswith("40") else "")
