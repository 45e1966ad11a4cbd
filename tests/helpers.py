"""Workspace fingerprints and forged checkpoints, shared by the restore tests."""

from __future__ import annotations

import os
import stat
from pathlib import Path

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
