"""An auto-save's snapshot built on the last save's kept index, from the quick check's
scan (fast/quickcheck.py): the work tree is not scanned a second time, and W is grafted
on the index tree that save recorded (graft.py).

Valid because HEAD, the real index (so the index tree, its `add -N` entries and its
marks), the configuration and the task's refs were what that save saw, which the check
verified; under the lock we verify that the state is still the one the check read.
"""

from __future__ import annotations

import os

from ..config.model import Config
from ..fast import quickstate
from ..fast.quickcheck import Found
from ..gitcore.formats import GITLINK
from ..gitcore.repo import Repo
from ..gitcore.spawn import link_or_copy
from . import keep
from .capture import KeptIndex, ScanFacts, Snapshot, finish_snapshot, prior_overlay
from .graft import graft


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
        or quickstate.refs_seen(repo, saved["task"], saved["ref"]) != saved["refs"]
    ):
        return None
    scan = found.scan
    if any(scan.modes.get(p) == GITLINK for p in scan.changed):
        return None  # a moved submodule: no stat data vouches for it (capture_workspace)
    index = os.path.join(quickstate.folder(repo), str(saved["saved_index"]))
    trees = saved["trees"]
    worktree_tree = graft(repo, trees["index"], {p: scan.modes[p] for p in scan.changed})
    if worktree_tree is None:
        return None
    kept = keep.keep_path(repo)
    link_or_copy(index, kept)  # the same index serves the next check: a second name
    head = found.before.head_text.strip()
    branch = head[len("ref: refs/heads/") :] if head.startswith("ref: refs/heads/") else None
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
    facts = ScanFacts(
        untracked=scan.untracked,
        deleted=scan.deleted,
        include_seen=found.include_seen,
        changed_stats=found.changed_stats,
        before=found.before,
    )
    moved = (*scan.changed, *scan.deleted, *scan.untracked)
    return finish_snapshot(
        repo,
        cfg,
        tracked,
        facts,
        kept=KeptIndex(kept, stamp_ns=int(saved["index_stamp_ns"])),
        prior=prior_overlay(repo, saved, trees["index"], moved),
    )
