"""An auto-save's snapshot built on the last save's kept index, from the quick check's
scan (quicksave.py): the work tree is not scanned a second time.

Valid because HEAD, the real index (so the index tree, its `add -N` entries and its marks),
the configuration and the task's refs were what that save saw, which the check verified;
under the lock we verify that the state is still the one the check read.
"""

from __future__ import annotations

import os
from pathlib import Path

from . import quickstate
from .config import Config
from .gitio import Repo
from .quicksave import Found
from .scan import stage
from .snapshot import STAGE_PATHS_MAX, Snapshot, finish_snapshot


def build_on(repo: Repo, cfg: Config, found: Found) -> Snapshot | None:
    """The workspace as a snapshot, or None when the kept state no longer applies."""
    saved = found.saved
    current = quickstate.load(repo)
    if (
        current is None
        or current.get("saved_index") != saved["saved_index"]
        or current.get("commit") != saved["commit"]
        or [os.path.realpath(p) for p in (repo.root, repo.git_dir, repo.common_dir)]
        != saved["paths"]
        or quickstate.refs_seen(repo, saved["task"]) != saved["refs"]
    ):
        return None
    index = Path(quickstate.folder(repo)) / str(saved["saved_index"])
    changed = found.changed
    with repo.temp_index(seed=index) as env:
        if len(changed) > STAGE_PATHS_MAX:
            repo.git("add", "-u", env=env)
        else:
            stage(repo, env, changed)
        worktree_tree = repo.git("write-tree", env=env).decode().strip()
        kept = quickstate.keep_path(repo)
        os.replace(env["GIT_INDEX_FILE"], kept)  # a rename keeps the mtime
    head = found.before.head_text.strip()
    branch = head[len("ref: refs/heads/") :] if head.startswith("ref: refs/heads/") else None
    trees = saved["trees"]
    tracked = Snapshot(
        base=trees["base"],
        branch=branch,
        worktree_tree=worktree_tree,
        index_tree=trees["index"],
        overlay_tree=None,
        overlay_files=(),
        overlay_bytes=0,
        secrets_left_out=(),
        nested_repos_left_out=(),
        flagged=(),
        intent_to_add=tuple(saved["intent_to_add"]),
    )
    return finish_snapshot(
        repo,
        cfg,
        tracked,
        untracked=tuple(found.untracked),
        deleted=tuple(sorted(set(saved["deleted"]) | set(found.deleted))),
        before=found.before,
        kept=kept,
        include_seen=found.include_seen,
        prior_overlay=(saved["overlay"], trees["overlay"], int(saved["overlay_bytes"])),
    )
