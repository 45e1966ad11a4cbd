"""Shared by the tests of every layer: workspace fingerprints, checkpoints forged by hand,
what a checkpoint holds, one-line errors, and the small setups several layers need
(verifiers in `.checkpoint.yaml`, diverged branches, an immutable file)."""

from __future__ import annotations

import contextlib
import json
import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import Repo

Fingerprint = dict[str, tuple[str, bytes, bool]]


def fingerprint(root: Path, skip: tuple[str, ...] = (".git",)) -> Fingerprint:
    """Every file and symlink below root: kind, bytes (or link target), exec bit."""
    out: Fingerprint = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        dirnames[:] = [
            d for d in dirnames if os.path.normpath(os.path.join(rel_dir, d)) not in skip
        ]
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            full = os.path.join(dirpath, name)
            rel = os.path.normpath(os.path.join(rel_dir, name))
            try:
                st = os.lstat(full)
                if stat.S_ISLNK(st.st_mode):
                    out[rel] = ("link", os.readlink(full).encode(), False)
                else:
                    with open(full, "rb") as fh:
                        out[rel] = ("file", fh.read(), bool(st.st_mode & 0o100))
            except FileNotFoundError:
                # gone while we looked: a git child of a killed run (save reads the
                # index beside the scan) may still be finishing in a temporary folder
                continue
    return out


def workspace_files(root: Path) -> dict[str, tuple[str, bytes]]:
    """rel path -> (kind, bytes): kind is 'link' (bytes = target), 'exec' or 'file'."""
    found: dict[str, tuple[str, bytes]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = Path(dirpath).relative_to(root)
        if rel_dir == Path("."):
            dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in list(dirnames) + filenames:
            p = Path(dirpath) / name
            rel = (rel_dir / name).as_posix()
            if p.is_symlink():
                found[rel] = ("link", os.fsencode(os.readlink(p)))
            elif p.is_file():
                kind = "exec" if os.access(p, os.X_OK) else "file"
                found[rel] = (kind, p.read_bytes())
    return found


def state(repo: Repo) -> tuple[Fingerprint, str]:
    """The work tree and the index (ls-files -s), for before/after comparisons."""
    return fingerprint(repo.path), repo.git("ls-files", "-s")


# --- checkpoints made by hand, as a hostile remote could ------------------------------


def mktree(repo: Repo, entries: list[tuple[str, str, str, str]]) -> str:
    """A tree from (mode, type, id, name) rows; names are taken as git mktree takes them."""
    text = "".join(f"{mode} {kind} {oid}\t{name}\n" for mode, kind, oid, name in entries)
    return repo.git("mktree", input=text.encode()).strip()


def blob(repo: Repo, data: bytes) -> str:
    return repo.git("hash-object", "-w", "--stdin", input=data).strip()


def forge_checkpoint(
    repo: Repo,
    worktree_tree: str,
    overlay_tree: str | None = None,
    cp_id: str = "cp_099",
    task: str = "main",
) -> str:
    """Write a stash-shaped checkpoint by hand, as a hostile remote could."""
    head = repo.git("rev-parse", "HEAD").strip()
    index = repo.git("commit-tree", f"{head}^{{tree}}", "-p", head, "-m", "index").strip()
    parents = ["-p", head, "-p", index]
    if overlay_tree:
        parents += ["-p", repo.git("commit-tree", overlay_tree, "-m", "untracked").strip()]
    message = (
        f"checkpoint {cp_id} on {task}: forged\n\nbase_commit: {head}\ntask: {task}\n"
        f"checkpoint_id: {cp_id}\nauto: false\n"
    )
    commit = repo.git("commit-tree", worktree_tree, *parents, "-m", message).strip()
    repo.git("update-ref", f"refs/checkpoints/{task}/{cp_id}", commit)
    return commit


# --- what a checkpoint holds ----------------------------------------------------------


REF1 = "refs/checkpoints/main/cp_001"


REF2 = "refs/checkpoints/main/cp_002"


def checkpoint_refs(repo: Repo) -> list[str]:
    return repo.git("for-each-ref", "--format=%(refname)", "refs/checkpoints/").split()


def latest_ref(repo: Repo) -> str:
    """The last checkpoint ref, all tasks, in ref name order."""
    refs = repo.git("for-each-ref", "--sort=refname", "--format=%(refname)", "refs/checkpoints")
    return refs.split()[-1]


def rev(repo: Repo, name: str) -> str:
    """The object id git resolves `name` to."""
    return repo.git("rev-parse", name).strip()


def checkpoint_parents(repo: Repo, name: str) -> list[str]:
    """The parents of checkpoint `name` of task main: base, I, U."""
    return repo.git("rev-parse", f"refs/checkpoints/main/{name}^@").split()


def saved_paths(repo: Repo, ref: str) -> tuple[list[str], list[str]]:
    """(paths in W, paths in the overlay U) of a checkpoint."""
    parents = repo.git("log", "-1", "--format=%P", ref).split()
    w = repo.git("ls-tree", "-r", "-z", "--name-only", ref).split("\0")
    u: list[str] = []
    head = repo.git("rev-parse", "-q", "--verify", "HEAD", check=False).strip()
    overlay_at = 2 if head and parents and parents[0] == head else 1
    if len(parents) > overlay_at:
        u = repo.git("ls-tree", "-r", "-z", "--name-only", parents[overlay_at]).split("\0")
    return [p for p in w if p], [p for p in u if p]


def trees(repo: Repo, ref: str) -> tuple[str, ...]:
    """W, then each parent's tree (base, I, U): what a checkpoint holds."""
    parents = repo.git("log", "-1", "--format=%P", ref).split()
    return tuple(repo.git("rev-parse", f"{c}^{{tree}}").strip() for c in [ref, *parents])


def blob_stored(repo: Repo, content: bytes) -> bool:
    """Whether a blob of `content` is in the repository's object store."""
    oid = repo.git("hash-object", "--stdin", input=content).strip()
    found = subprocess.run(
        ["git", "cat-file", "-e", oid], cwd=repo.path, capture_output=True, check=False
    )
    return found.returncode == 0


# --- one-line errors ------------------------------------------------------------------


def one_line_error(stderr: str) -> str:
    """The one line on `stderr` (and no traceback)."""
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, f"wanted one line on stderr, got: {stderr!r}"
    assert "Traceback" not in stderr
    return lines[0]


def one_line_of(proc: subprocess.CompletedProcess[str]) -> str:
    """The one line `proc` wrote on stderr (no traceback, no internal error)."""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    return lines[0]


# --- repositories set up for a test ---------------------------------------------------


def configure(repo: Repo, *verifiers: str, commit: bool = True) -> None:
    """A `.checkpoint.yaml` with these verifiers, committed unless told not to."""
    repo.write(".checkpoint.yaml", "verifiers:\n" + "".join(verifiers))
    if commit:
        repo.commit_all("configure verifiers")


def verifier(name: str, command: str, required: bool = True, timeout: float = 60) -> str:
    """One verifier's entry, for configure()."""
    return (
        f"  - name: {name}\n    command: {json.dumps(command)}\n"
        f"    required: {'true' if required else 'false'}\n    timeout: {timeout}\n"
    )


def note_events(repo: Repo, ref: str) -> list[dict[str, object]]:
    """The events of the checkpoint's note, one JSON object a line."""
    text = repo.git("notes", "--ref=checkpoints", "show", ref)
    return [json.loads(line) for line in text.splitlines()]  # every line must be JSON


def diverged(repo: Repo) -> None:
    """main and feature each one commit past the start; feature checked out."""
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("feature.txt", "feature\n")
    repo.commit_all("feature work")
    repo.git("checkout", "-q", "main")
    repo.write("main.txt", "main\n")
    repo.commit_all("main work")
    repo.git("checkout", "-q", "feature")


@contextlib.contextmanager
def immutable(path: Path) -> Iterator[None]:
    """`path` immutable (chattr +i) for the block; skipped where the file system has no
    such flag."""
    if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0:
        pytest.skip(f"this file system takes no immutable flag ({path})")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


def replace_with_endless(path: Path, kind: str) -> None:
    """Put at `path` what a reader must never wait on or read to its end: a FIFO no one
    writes (`kind` "fifo"), else a link to /dev/zero."""
    path.unlink()
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")
