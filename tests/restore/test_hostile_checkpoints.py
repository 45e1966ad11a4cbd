"""A checkpoint is hostile until checked (a fetched one, or one made by hand with
plumbing): trees git's fsck would flag, paths outside the work tree, trees nested too
deep or naming the wrong kind of object, a `.checkpoint.yaml` that is not a regular file
or is broken, verifier commands that change. Each is refused in one line with nothing
written, or said before anything runs; a broken configuration brought back can be
undone."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from ..conftest import Repo
from ..helpers import blob, forge_checkpoint, mktree, state


def test_a_checkpoint_with_a_non_regular_config_file_is_refused(repo: Repo) -> None:
    link = blob(repo, b"/dev/zero")
    head_tree = repo.git("rev-parse", "HEAD^{tree}").strip()
    overlay = mktree(repo, [("120000", "blob", link, ".checkpoint.yaml")])
    forge_checkpoint(repo, head_tree, overlay)
    before = state(repo)
    proc = repo.cp("restore", "cp_099", expect=3)
    assert ".checkpoint.yaml" in proc.stderr
    assert state(repo) == before


def _raw_tree(repo: Repo, entries: list[tuple[str, str, str]]) -> str:
    data = b"".join(
        f"{mode} {name}".encode() + b"\0" + bytes.fromhex(oid) for mode, name, oid in entries
    )
    return repo.git("hash-object", "-t", "tree", "-w", "--literally", "--stdin", input=data).strip()


@pytest.mark.parametrize("kind", ["duplicate", "unsorted"])
def test_trees_git_fsck_would_flag_are_refused(repo: Repo, kind: str) -> None:
    one, two = blob(repo, b"one\n"), blob(repo, b"two\n")
    readme = repo.git("rev-parse", "HEAD:README.md").strip()
    if kind == "duplicate":
        rows = [("100644", "README.md", readme), ("100644", "x.txt", one), ("100644", "x.txt", two)]
    else:
        rows = [("100644", "z.txt", one), ("100644", "README.md", readme), ("100644", "a.txt", two)]
    overlay = _raw_tree(repo, rows[1:] if kind == "duplicate" else rows)
    forge_checkpoint(repo, repo.git("rev-parse", "HEAD^{tree}").strip(), overlay)
    before = state(repo)
    proc = repo.cp("restore", "cp_099", expect=3)
    assert "out of order" in proc.stderr
    assert state(repo) == before


def test_a_fetched_checkpoint_that_changes_the_verifiers_says_so(repo: Repo) -> None:
    repo.write(".checkpoint.yaml", "verifiers:\n  - {name: evil, command: 'touch PWNED'}\n")
    repo.cp("save", "-m", "brings its own verifiers")
    commit = repo.git("rev-parse", "refs/checkpoints/main/cp_001").strip()
    repo.git("update-ref", "refs/checkpoints/remotes/origin/main/cp_001", commit)
    repo.git("update-ref", "-d", "refs/checkpoints/main/cp_001")
    (repo.path / ".checkpoint.yaml").unlink()
    proc = repo.cp("restore", "origin/main/cp_001")
    assert "warning:" in proc.stderr and "verifier commands" in proc.stderr
    assert not (repo.path / "PWNED").exists()


def test_a_broken_config_brought_back_by_restore_can_be_undone(repo: Repo) -> None:
    repo.write(".checkpoint.yaml", "verifiers: [\n")  # broken YAML
    saved = repo.cp("save", "-m", "broken config")  # saved, with the default settings
    assert "using the default settings" in saved.stderr
    repo.git("add", ".checkpoint.yaml")
    repo.git("commit", "-q", "-m", "someone committed a broken config")
    (repo.path / ".checkpoint.yaml").write_text("verifiers: []\n")
    repo.cp("save", "-m", "good config")
    repo.git("checkout", "-q", "--", ".checkpoint.yaml")  # the broken one is back on disk
    assert repo.cp("list", expect=2).stderr.count("\n") == 1
    proc = repo.cp("restore", "cp_002")
    assert "using the default settings" in proc.stderr
    assert (repo.path / ".checkpoint.yaml").read_text() == "verifiers: []\n"
    repo.cp("undo")
    assert (repo.path / ".checkpoint.yaml").read_text() == "verifiers: [\n"


def test_a_tree_nested_too_deep_is_a_one_line_refusal(repo: Repo) -> None:
    """06: RecursionError, exit 4."""
    tree = mktree(repo, [("100644", "blob", blob(repo, b"deep\n"), "f")])
    for _ in range(1100):
        tree = mktree(repo, [("040000", "tree", tree, "d")])
    forge_checkpoint(repo, repo.git("rev-parse", "HEAD^{tree}").strip(), tree)
    before = state(repo)
    proc = repo.cp("restore", "cp_099", expect=3)
    assert "too deep" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert state(repo) == before


def test_a_tree_entry_naming_a_blob_is_a_one_line_refusal(repo: Repo) -> None:
    """13: ValueError, exit 4."""
    data = b"40000 evil\0" + bytes.fromhex(blob(repo, b"hi\n"))
    tree = subprocess.run(
        ["git", "hash-object", "-t", "tree", "-w", "--literally", "--stdin"],
        cwd=repo.path, input=data, capture_output=True, check=True,
    ).stdout.decode().strip()  # fmt: skip
    forge_checkpoint(repo, repo.git("rev-parse", "HEAD^{tree}").strip(), tree)
    repo.write("n.txt", "mine\n")
    before = state(repo)
    proc = repo.cp("restore", "cp_099", expect=3)
    assert "malformed tree" in proc.stderr
    assert state(repo) == before


# --- hostile trees ---------------------------------------------------------------------


def _hostile_trees(repo: Repo, outside: Path) -> dict[str, tuple[str, str | None]]:
    evil = blob(repo, b"#!/bin/sh\necho pwned\n")
    head_tree = repo.git("rev-parse", "HEAD^{tree}").strip()
    rows = [tuple(line.split(None, 3)) for line in repo.git("ls-tree", head_tree).splitlines()]
    base_rows = [(m, t, o, n) for m, t, o, n in rows]  # type: ignore[misc]
    hooks = mktree(repo, [("100755", "blob", evil, "post-checkout")])
    dot_git = mktree(repo, [("040000", "tree", hooks, "hooks")])
    inner = mktree(repo, [("100644", "blob", evil, "x")])
    link = blob(repo, str(outside).encode())
    return {
        ".git/hooks": (mktree(repo, [*base_rows, ("040000", "tree", dot_git, ".git")]), None),
        ".GIT": (mktree(repo, [*base_rows, ("040000", "tree", inner, ".GIT")]), None),
        ".Git in a subfolder": (
            mktree(
                repo,
                [
                    *base_rows,
                    ("040000", "tree", mktree(repo, [("040000", "tree", inner, ".Git")]), "sub"),
                ],
            ),
            None,
        ),
        "../x": (mktree(repo, [*base_rows, ("040000", "tree", inner, "..")]), None),
        "symlink then file": (
            mktree(repo, [*base_rows, ("120000", "blob", link, "esc")]),
            mktree(repo, [("040000", "tree", inner, "esc")]),
        ),
    }


def test_hostile_trees_are_refused_with_nothing_written(repo: Repo, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    repo.write("work.txt", "uncommitted work\n")
    hooks_before = sorted(os.listdir(repo.path / ".git"))
    for i, (label, (tree, overlay)) in enumerate(_hostile_trees(repo, outside).items()):
        before = state(repo)
        refs_before = repo.git("for-each-ref", "refs/checkpoints")
        forge_checkpoint(repo, tree, overlay, cp_id=f"cp_{900 + i}")
        refs_before = repo.git("for-each-ref", "refs/checkpoints")
        proc = repo.cp("restore", f"cp_{900 + i}", expect=3)
        assert "unsafe" in proc.stderr, label
        assert "Traceback" not in proc.stderr
        assert state(repo) == before, label
        assert repo.git("for-each-ref", "refs/checkpoints") == refs_before, label
    assert list(outside.iterdir()) == []
    assert not (repo.path / ".git" / "hooks").exists() or not any(
        (repo.path / ".git" / "hooks").iterdir()
    )
    assert set(os.listdir(repo.path / ".git")) - set(hooks_before) <= {"checkpoint"}


def test_unreadable_tree_is_unsafe_not_a_crash(repo: Repo) -> None:
    # git mktree refuses an empty name; a hand-written tree object does not.
    content = b"100644 \0" + bytes.fromhex(blob(repo, b"x\n"))
    tree = repo.git("hash-object", "-t", "tree", "-w", "--literally", "--stdin", input=content)
    forge_checkpoint(repo, tree.strip())
    proc = repo.cp("restore", "cp_099", expect=3)
    assert "unsafe" in proc.stderr and proc.stderr.count("\n") == 1
