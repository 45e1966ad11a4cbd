"""A tree diff read in the process (inprocess.tree_changes, in the command server's
workers) names the paths `git diff-tree -r` names, with the same entry on each side:
files that became folders and back, links, submodules, executable bits, deep folders
changed or not; and leaves to git any tree that is not in git's order."""

from __future__ import annotations

import os
import random
import subprocess

import pytest

from git_checkpoint.gitcore.catfile import Objects
from git_checkpoint.gitcore.spawn import child_env

from ..conftest import Repo

Changes = dict[str, tuple[tuple[int, str] | None, tuple[int, str] | None]]


def git(repo: Repo, *args: str, stdin: bytes = b"", env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        ["git", *args], cwd=repo.path, input=stdin, capture_output=True, check=True,
        env={**os.environ, **(env or {})},
    )  # fmt: skip
    return proc.stdout.decode("utf-8", "surrogateescape")


def by_git(repo: Repo, old: str, new: str) -> Changes:
    argv = ["diff-tree", "-r", "-z", "--no-renames", "--ignore-submodules=none", "--raw"]
    fields = repo.git(*argv, old, new).split("\0")
    out: Changes = {}
    for meta, path in zip(fields[0::2], fields[1::2], strict=False):
        if not meta.startswith(":"):
            break
        old_mode, new_mode, old_id, new_id, _ = meta[1:].split(" ")
        out[path] = (
            (int(old_mode, 8), old_id) if int(old_mode, 8) else None,
            (int(new_mode, 8), new_id) if int(new_mode, 8) else None,
        )
    return out


def here(repo: Repo, old: str, new: str) -> Changes | None:
    objects = Objects(repo.path, child_env())
    try:
        return objects.tree_changes(old, new)
    finally:
        objects.close()


def random_tree(repo: Repo, rng: random.Random, blobs: list[str]) -> str:
    """A tree of a few folders deep: files, executables, links, submodules, and names
    that are a file in one tree and a folder in another."""
    names = ["a", "b", "a.b", "a-b", "c d", "uni\u00e9", "z"]
    lines = []
    taken: set[str] = set()
    for _ in range(rng.randint(0, 14)):
        depth = rng.randint(1, 3)
        path = "/".join(rng.choice(names) for _ in range(depth))
        parts = path.split("/")
        above = {"/".join(parts[:k]) for k in range(1, len(parts))}
        if path in taken or above & taken or any(t.startswith(path + "/") for t in taken):
            continue
        taken.add(path)
        kind = rng.choice(["100644", "100644", "100755", "120000", "160000"])
        oid = rng.choice(["1" * 40, "2" * 40]) if kind == "160000" else rng.choice(blobs)
        lines.append(f"{kind} {oid}\t{path}")
    env = {"GIT_INDEX_FILE": os.fspath(repo.path / ".git" / "random-index")}
    (repo.path / ".git" / "random-index").unlink(missing_ok=True)
    if lines:
        listing = ("\n".join(lines) + "\n").encode()
        git(repo, "update-index", "--index-info", stdin=listing, env=env)
    return git(repo, "write-tree", env=env).strip()


def test_every_change_is_named_as_diff_tree_names_it(repo: Repo, in_process: None) -> None:
    rng = random.Random(11)
    blobs = [git(repo, "hash-object", "-w", "--stdin", stdin=c).strip() for c in (b"x", b"y")]
    trees = [random_tree(repo, rng, blobs) for _ in range(30)]
    compared = 0
    for old in trees:
        for new in rng.sample(trees, 5):
            got = here(repo, old, new)
            assert got == by_git(repo, old, new), (old, new)
            compared += bool(got)
    assert compared > 100


def test_a_tree_out_of_order_is_left_to_git(repo: Repo, in_process: None) -> None:
    blob = git(repo, "hash-object", "-w", "--stdin", stdin=b"x\n").strip()
    listing = f"100644 blob {blob}\ta\n100644 blob {blob}\tb\n".encode()
    good = git(repo, "mktree", stdin=listing).strip()
    raw = bytes.fromhex(blob)
    odd = git(
        repo, "hash-object", "-w", "-t", "tree", "--literally", "--stdin",
        stdin=b"100644 b\0" + raw + b"100644 a\0" + raw,
    ).strip()  # fmt: skip
    assert here(repo, good, odd) is None


def test_without_the_server_git_answers(repo: Repo) -> None:
    blob = git(repo, "hash-object", "-w", "--stdin", stdin=b"x\n").strip()
    tree = git(repo, "mktree", stdin=f"100644 blob {blob}\ta\n".encode()).strip()
    assert here(repo, tree, git(repo, "mktree").strip()) is None


@pytest.mark.parametrize(
    "entries",
    [
        [(b"100644", b"a"), (b"40000", b"a")],  # a file and a folder of one name
        [(b"644", b"a")],  # a mode git never writes (it reads it as a submodule)
        [(b"100644", b"a"), (b"100644", b"a")],  # one name twice
    ],
)
def test_a_tree_git_reads_its_own_way_is_left_to_git(
    repo: Repo, in_process: None, entries: list[tuple[bytes, bytes]]
) -> None:
    blob = git(repo, "hash-object", "-w", "--stdin", stdin=b"x\n").strip()
    inner = git(repo, "mktree", stdin=f"100644 blob {blob}\tb\n".encode()).strip()
    raw = b"".join(
        mode + b" " + name + b"\0" + bytes.fromhex(inner if mode == b"40000" else blob)
        for mode, name in entries
    )
    odd = git(repo, "hash-object", "-w", "-t", "tree", "--literally", "--stdin", stdin=raw).strip()
    empty = git(repo, "mktree").strip()
    assert here(repo, empty, odd) is None


def test_the_empty_tree_is_read_here_though_not_stored(repo: Repo, in_process: None) -> None:
    """git knows the empty tree without its object: a diff from or to it is answered
    here as git answers it, whether or not it is stored."""
    rng = random.Random(7)
    blobs = [git(repo, "hash-object", "-w", "--stdin", stdin=b"x").strip()]
    tree = random_tree(repo, rng, blobs)
    empty = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
    (repo.path / ".git" / "objects" / empty[:2] / empty[2:]).unlink(missing_ok=True)
    for old, new in ((empty, tree), (tree, empty)):
        got = here(repo, old, new)
        assert got is not None and got == by_git(repo, old, new) and got
