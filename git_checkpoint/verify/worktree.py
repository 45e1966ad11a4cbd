"""A checkpoint materialized in a temporary linked worktree, for verifying it without
touching the user's workspace. Removed afterwards, whatever happens.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ..core.errors import CheckpointError
from ..gitcore.repo import Repo
from ..restore.plan import check_whole_checkpoint
from ..storage.commits import trees_of
from ..storage.refs import Checkpoint


@contextlib.contextmanager
def temporary_worktree(
    repo: Repo, commit: str, *, prefix: str, checkout: bool = True
) -> Iterator[Path]:
    """A linked worktree of `repo` at `commit` (detached) in a temporary folder, removed
    with its administrative files afterwards, whatever happens. `checkout`: its files
    checked out (else an empty work tree over an index of `commit`)."""
    parent = Path(tempfile.mkdtemp(prefix=prefix))
    path = parent / "worktree"
    try:
        options = () if checkout else ("--no-checkout",)
        repo.git("worktree", "add", "--detach", *options, str(path), commit)
        yield path
    finally:
        with contextlib.suppress(CheckpointError, OSError):
            repo.git("worktree", "remove", "--force", str(path))
        shutil.rmtree(parent, ignore_errors=True)
        with contextlib.suppress(CheckpointError, OSError):
            repo.git("worktree", "prune")


@contextlib.contextmanager
def checkpoint_worktree(repo: Repo, cp: Checkpoint) -> Iterator[Path]:
    """Yield a temporary worktree holding cp's tracked files, overlay and index."""
    check_whole_checkpoint(repo, cp)  # a fetched checkpoint is untrusted, checked out or not
    index_tree, overlay_tree = trees_of(repo, cp)
    start = cp.base or cp.commit
    with temporary_worktree(repo, start, prefix="checkpoint-verify-", checkout=False) as path:
        wt = Repo.discover(path, user_env=False)
        wt.git("read-tree", cp.worktree_tree)
        wt.git("checkout-index", "-a", "-f")
        if overlay_tree:
            with wt.temp_index() as env:
                wt.git("read-tree", overlay_tree, env=env)
                wt.git("checkout-index", "-a", "-f", env=env)
        wt.git("read-tree", index_tree)
        yield path
