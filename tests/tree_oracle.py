"""git itself as the oracle of the tree a save records: `git add -u` + `git write-tree`
on a copy of the index."""

from __future__ import annotations

import os
import shutil
import subprocess

from .conftest import Repo


def reference_tree(repo: Repo) -> str:
    """What `add -u` + `write-tree` make of the work tree, on a copy of the index."""
    index = repo.path / ".git" / "ref-index"
    shutil.copy2(repo.path / ".git" / "index", index)
    env = {**os.environ, "GIT_INDEX_FILE": str(index)}
    try:
        for argv in (["add", "-u"], ["write-tree"]):
            proc = subprocess.run(
                ["git", *argv], cwd=repo.path, env=env, capture_output=True, check=True
            )
    finally:
        index.unlink()
    return proc.stdout.decode().strip()
