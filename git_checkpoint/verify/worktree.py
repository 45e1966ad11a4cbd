"""A checkpoint materialized in a temporary linked worktree, for verifying it without
touching the user's workspace. Removed afterwards, whatever happens.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ..gitcore.repo import Repo
from ..restore.plan import check_whole_checkpoint
from ..storage.refs import Checkpoint, trees_of


@contextlib.contextmanager
def checkpoint_worktree(repo: Repo, cp: Checkpoint) -> Iterator[Path]:
    """Yield a temporary worktree holding cp's tracked files, overlay and index."""
    check_whole_checkpoint(repo, cp)  # a fetched checkpoint is untrusted, checked out or not
    parent = Path(tempfile.mkdtemp(prefix="checkpoint-verify-"))
    path = parent / "worktree"
    index_tree, overlay_tree = trees_of(repo, cp)
    try:
        repo.git("worktree", "add", "--detach", "--no-checkout", str(path), cp.base or cp.commit)
        wt = Repo.discover(path, user_env=False)
        wt.git("read-tree", cp.worktree_tree)
        wt.git("checkout-index", "-a", "-f")
        if overlay_tree:
            with wt.temp_index() as env:
                wt.git("read-tree", overlay_tree, env=env)
                wt.git("checkout-index", "-a", "-f", env=env)
        wt.git("read-tree", index_tree)
        yield path
    finally:
        with contextlib.suppress(Exception):
            repo.git("worktree", "remove", "--force", str(path))
        shutil.rmtree(parent, ignore_errors=True)
        with contextlib.suppress(Exception):
            repo.git("worktree", "prune")
