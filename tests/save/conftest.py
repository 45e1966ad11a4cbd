"""Reading what a save wrote: trees, blobs and parents of a checkpoint, the JSON of a
save, and git's own strict check of the store."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from ..conftest import Repo


def git_bytes(path: Path, *args: str) -> bytes:
    """git's stdout as bytes; the call must succeed."""
    proc = subprocess.run(["git", *args], cwd=path, capture_output=True, check=False)
    assert proc.returncode == 0, f"git {args}: {proc.stderr.decode()}"
    return proc.stdout


def tree(repo: Repo, rev: str) -> dict[str, tuple[str, str]]:
    """path -> (mode, object id) of every entry under rev (recursive, no submodule descent)."""
    out = git_bytes(repo.path, "ls-tree", "-r", "-z", "--full-tree", rev)
    entries: dict[str, tuple[str, str]] = {}
    for item in out.split(b"\0"):
        if not item:
            continue
        meta, _, name = item.partition(b"\t")
        mode, _kind, oid = meta.decode().split()
        entries[os.fsdecode(name)] = (mode, oid)
    return entries


def blob(repo: Repo, rev: str, path: str) -> bytes:
    """The bytes of `path` in `rev`."""
    return git_bytes(repo.path, "cat-file", "blob", f"{rev}:{path}")


def parents(repo: Repo, rev: str) -> list[str]:
    """The parents of commit `rev`."""
    return repo.git("rev-list", "--no-walk", "--parents", "-n", "1", rev).split()[1:]


def save_json(repo: Repo, *args: str, cwd: Path | None = None) -> dict:
    """`git checkpoint save --json ARGS`, its answer parsed."""
    proc = repo.cp("save", "--json", *args, cwd=cwd)
    return json.loads(proc.stdout)


def write_config(repo: Repo, text: str) -> None:
    repo.write(".checkpoint.yaml", text)


def assert_fsck_clean(repo: Repo) -> None:
    """`git fsck --strict` finds nothing to say."""
    proc = subprocess.run(
        ["git", "fsck", "--strict", "--no-progress"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "error" not in proc.stdout + proc.stderr
