"""Workspace -> trees: what a checkpoint captures (design.md §4).

Tracked files go through a temporary copy of the real index (mtime kept, so unchanged
files cost a stat, not a hash, and racily-clean entries stay suspect); untracked files
form the overlay (overlay.py). The user's index and work tree are never written.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..config.model import Config
from ..core.errors import GitFailed, Refused
from ..fast import quickstate
from ..fast.prescan import Early, Prescan
from ..fast.quickstate import include_argv
from ..gitcore.catfile import Tree
from ..gitcore.formats import GITLINK, TREE_MODE, Scan, nul_split, parse_status
from ..gitcore.repo import Repo, concurrently
from ..gitcore.scan import scan
from ..gitcore.spawn import Spawned
from . import graft, keep
from .overlay import LeftOut, Overlay, choose_overlay, exclude_args, overlay_tree
from .staged import (
    TrackedTrees,
    behind_looping_links,
    flagged_entries,
    intent_to_add,
    marks,
    sparse_option,
    staged_capture,
)

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    from typing import Any


@dataclass(frozen=True)
class Snapshot:
    """The workspace hashed into trees (W, I and the overlay), ready to be stored."""

    base: str | None  # HEAD's commit, None on an unborn HEAD
    branch: str | None  # None when detached
    worktree_tree: str
    index_tree: str
    overlay_tree: str | None  # None when the overlay is empty
    overlay_files: tuple[str, ...]
    overlay_bytes: int
    secrets_left_out: tuple[str, ...]
    nested_repos_left_out: tuple[str, ...]
    # Everything the save did not capture, and why (overlay.py).
    left_out: tuple[LeftOut, ...] = ()
    # Index entries marked assume-unchanged ("h") or skip-worktree ("S"): path -> mark.
    flagged: tuple[tuple[str, str], ...] = ()
    # Entries added with `git add -N`: in W (they are tracked), not in the index tree.
    intent_to_add: tuple[str, ...] = ()
    # What the quick auto-save path needs from this capture (only when asked to keep it).
    seed: keep.Seed | None = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class Listing:
    """The includes' `ls-files -o`, started ahead of the capture (start_listing)."""

    argv: list[str]
    child: Spawned


@dataclass(frozen=True)
class ScanFacts:
    """What the capture's scan saw, for finish_snapshot to add the overlay."""

    untracked: tuple[str, ...] | None  # the scan's untracked list (None: ls-files lists)
    deleted: tuple[str, ...] = ()  # tracked in the real index, gone from the work tree
    include_seen: list[str] | None = None  # the includes' listing, when it ran already
    # Stat data of the tracked files W took from disk, taken before anything hashed them.
    changed_stats: dict[str, list[int] | None] = field(default_factory=dict)
    before: quickstate.Before | None = None  # read before the scan (for the quick check)


@dataclass(frozen=True)
class KeptIndex:
    """The temporary index a save keeps for the next quick check."""

    path: str
    stamp_ns: int | None = None  # the date it keeps, when older than the scan's


@dataclass(frozen=True)
class Ahead:
    """The overlay chosen and hashed beside the graft (_overlay_ahead)."""

    overlay: Overlay
    stats: dict[str, list[int] | None]  # taken before hashing them
    tree: str | None
    rules: dict[str, list[int] | None] | None  # the files of attributes (rule_files)


@dataclass(frozen=True)
class PriorOverlay:
    """The last save's overlay: reused when the same files are there, unchanged."""

    stats: dict[str, list[int] | None]
    tree: str | None
    size: int
    rules: dict[str, list[int] | None] = field(default_factory=dict)  # rule_files' then
    stamp_ns: int = 0  # when that save began its scan: what its stat data is trusted by


@dataclass(frozen=True)
class _FastCapture:
    """The tracked snapshot and the scan it came from, for the overlay to build on."""

    tracked: Snapshot
    scanned: Scan
    changed_stats: dict[str, list[int] | None]
    include_seen: list[str]
    ahead: Ahead | None


def start_listing(repo: Repo, cfg: Config) -> Listing | None:
    """Start the includes' `ls-files -o` now, beside what comes before the capture (it
    waits for the scan anyway); capture_workspace takes it when its argv is the same."""
    argv = include_argv(repo.root, exclude_args(cfg), cfg.include)
    if argv is None:
        return None
    return Listing(argv, Spawned(argv, str(repo.root), env={"GIT_LITERAL_PATHSPECS": "1"}))


def capture_workspace(
    repo: Repo,
    cfg: Config,
    *,
    allow_unmerged: bool = False,
    keep: bool = False,
    listing: Listing | None = None,
    prescan: Prescan | None = None,
) -> Snapshot:
    """Hash the workspace into trees without touching the user's index or work tree.

    An index with unmerged paths (a conflicted merge) is refused, unless the caller only
    reads (`status`, `diff`, `resume`: `allow_unmerged`), for which each conflicted path
    counts as its work-tree version. Such a snapshot is never saved.

    One `git status` scan against a copy of the index finds both the changed tracked
    files and the untracked ones; W is the index tree with the changed files grafted in
    (graft.py). The index tree, the index's marks and the includes' listing are read
    beside the scan. A sparse checkout, marked entries, a conflict or a case the graft
    leaves alone take `add -u` + `write-tree` on the copy instead.
    `keep`: also hand back what the quick auto-save needs (`Snapshot.seed`).
    `listing`: the includes' listing, started ahead (start_listing; the caller waits
    for it in the end, whatever became of the capture).
    `prescan`: what the launcher started early (its scan is used when it is this
    repository's and HEAD has not moved since).
    """
    started = prescan.take_scan(str(repo.root), str(repo.git_dir)) if prescan else None
    try:
        return _capture(
            repo,
            cfg,
            allow_unmerged=allow_unmerged,
            keep_index=keep,
            listing=listing,
            started=started,
        )
    except GitFailed as exc:
        odd = _UNSUPPORTED.search(exc.stderr)
        if odd is None:
            raise
        raise Refused(
            f"{odd.group(1)!r} is no file, symlink or folder (a FIFO, a socket or a device): "
            "git cannot store it; move it away, then try again"
        ) from None


# git's words for a tracked path that became a FIFO, a socket or a device.
_UNSUPPORTED = re.compile(r"error: (.+): unsupported file type")


def _capture(
    repo: Repo,
    cfg: Config,
    *,
    allow_unmerged: bool,
    keep_index: bool,
    listing: Listing | None,
    started: Early | None,
) -> Snapshot:
    base, branch = repo.head()
    if started is not None and (started.before is None or started.head != base):
        started.close()  # HEAD moved since the index was copied: its base is unknown
        started = None
    before: quickstate.Before | None = None
    if keep_index:
        if started is not None and started.before is not None:
            before = started.before
        else:
            before = quickstate.before_scan(repo, recording=True)
    sparse = sparse_option(repo)
    kept: KeptIndex | None = None
    with _scratch_indexes(repo, started, wait=bool(sparse)) as (env, tree_env):
        fast = None
        if not sparse:
            fast = _fast_capture(repo, cfg, env, tree_env, started=started, listing=listing)
        if fast is not None:
            # The quick check vouches by stat data: a submodule's folder has none that
            # moves with its commit, so a moved submodule keeps nothing for it.
            scanned = fast.scanned
            moved = any(scanned.modes.get(p) == GITLINK for p in scanned.changed)
            if keep_index and not moved and os.path.exists(env["GIT_INDEX_FILE"]):
                kept = KeptIndex(keep.keep_path(repo))
                os.replace(env["GIT_INDEX_FILE"], kept.path)  # a rename keeps the mtime
            tracked = fast.tracked
            facts = ScanFacts(
                untracked=scanned.untracked,
                deleted=scanned.deleted,
                include_seen=fast.include_seen,
                changed_stats=fast.changed_stats,
                before=before,
            )
        else:
            trees, staged_scan = staged_capture(repo, env, sparse, allow_unmerged)
            tracked = _tracked(trees)
            facts = ScanFacts(
                untracked=staged_scan.untracked if staged_scan is not None else None,
                deleted=staged_scan.deleted if staged_scan is not None else (),
                before=before,
            )
    return finish_snapshot(
        repo,
        cfg,
        replace(tracked, base=base, branch=branch),
        facts,
        kept=kept,
        ahead=fast.ahead if fast is not None else None,
    )


@contextlib.contextmanager
def _scratch_indexes(
    repo: Repo, started: Early | None, wait: bool
) -> Iterator[tuple[dict[str, str], dict[str, str]]]:
    """Two copies of the index (the scan's, and write-tree's): the early scan's when the
    launcher started one (`wait`: once its git commands are done), else new ones."""
    if started is not None:
        with started:
            if wait:  # done with their copies before anyone else writes them
                started.wait()
            yield started.env, started.tree_env
        return
    index = repo.git_dir / "index"
    with repo.temp_index(seed=index) as env, repo.temp_index(seed=index) as tree_env:
        yield env, tree_env


def _fast_capture(
    repo: Repo,
    cfg: Config,
    env: dict[str, str],
    tree_env: dict[str, str],
    *,
    started: Early | None,
    listing: Listing | None,
) -> _FastCapture | None:
    """The common case: the scan (on `env`'s index), the index tree (`tree_env`'s copy:
    write-tree writes its index), the marks and the includes' listing, side by side
    (the first three from the early scan when it ran them without a failure); then W's
    graft beside the overlay's tree."""
    argv = include_argv(repo.root, exclude_args(cfg), cfg.include)

    def list_includes() -> list[str]:
        if listing is not None and listing.argv == argv:
            out = listing.child.result()
            if out is not None:  # else it failed: run again, and say why
                return nul_split(out)
        return repo.git_lines(*argv, env={"GIT_LITERAL_PATHSPECS": "1"}) if argv else []

    outputs, seen = (
        concurrently(lambda: started.results(marks), list_includes) if started else (None, None)
    )
    try:
        if started is not None and outputs is not None and seen is not None:
            status, tree, flagged = outputs
            scanned = parse_status(status).with_errors(started.status_errors)
            index_tree = tree.decode().strip()
        else:
            scanned, index_tree, flagged, seen = concurrently(
                lambda: scan(repo, Path(env["GIT_INDEX_FILE"])),
                lambda: repo.git("write-tree", env=tree_env).decode().strip(),
                lambda: flagged_entries(repo, tree_env),
                list_includes,
            )
    except GitFailed as exc:
        if "unmerged" in exc.stderr or "merge" in exc.stderr:
            return None  # the staged path refuses it, or resolves it for a read-only caller
        raise
    if flagged or scanned.unmerged:
        return None
    scanned = behind_looping_links(repo, index_tree, scanned, seen)
    added = intent_to_add(repo, tree_env, index_tree)
    changed_stats = quickstate.overlay_stats(repo.root, scanned.changed)  # before hashing
    worktree_tree, hashed = concurrently(
        lambda: graft.graft(repo, index_tree, {p: scanned.modes[p] for p in scanned.changed}),
        lambda: _overlay_ahead(repo, cfg, scanned, seen, index_tree),
    )
    if worktree_tree is None:
        return None
    tracked = _tracked(TrackedTrees(worktree_tree, index_tree, {}, added))
    return _FastCapture(tracked, scanned, changed_stats, seen, hashed)


def _overlay_ahead(
    repo: Repo, cfg: Config, scanned: Scan, seen: list[str], index_tree: str
) -> Ahead:
    """finish_snapshot's overlay, chosen and hashed beside the graft (what it leaves
    out is never hashed); the files the last save hashed, unchanged since, are not
    hashed again."""
    overlay, _ = choose_overlay(repo, cfg, scanned.untracked, seen)
    stats = quickstate.overlay_stats(repo.root, overlay.files)  # before hashing them
    rules = quickstate.rule_files(repo, overlay.files, repo.config_pairs())  # (likewise)
    moved = (*scanned.changed, *scanned.deleted, *scanned.untracked)
    prior = prior_overlay(repo, quickstate.load(repo), index_tree, moved)
    known = reusable_entries(repo, prior, stats, rules)
    return Ahead(overlay, stats, overlay_tree(repo, overlay.files, known), rules)


def prior_overlay(
    repo: Repo, saved: dict[str, Any] | None, index_tree: str, moved: Iterable[str]
) -> PriorOverlay | None:
    """The overlay of the save that recorded `saved` (its quick state), when hashing a
    file now could give what it gave then: the same repository, index tree and
    configuration, no `.gitattributes` among the paths that moved then (`saved`) or now
    (`moved`), and that save's checkpoint still the one its task's refs name (so its
    objects are kept). None when anything differs. (The files of attributes are
    compared file by file: reusable_entries.)"""
    if saved is None:
        return None
    trees = saved.get("trees")
    if not isinstance(trees, dict) or trees.get("index") != index_tree:
        return None
    tree = trees.get("overlay")
    paths = [os.path.realpath(p) for p in (repo.root, repo.git_dir, repo.common_dir)]
    if (
        not tree
        or saved.get("paths") != paths
        or saved.get("config") != [list(p) for p in repo.config_pairs()]
        or not isinstance(saved.get("attributes"), dict)
    ):
        return None
    try:
        before = [*saved["changed"], *saved["untracked"], *saved["deleted"]]
        if any(graft.is_attributes(str(p)) for p in (*before, *moved)):
            return None
        if quickstate.refs_seen(repo, saved["task"], saved["ref"]) != saved["refs"]:
            return None
        return PriorOverlay(
            dict(saved["overlay"]),
            str(tree),
            int(saved["overlay_bytes"]),
            rules=dict(saved["attributes"]),
            stamp_ns=int(saved["stamp_ns"]),
        )
    except (KeyError, TypeError, ValueError, AttributeError):  # a state.json not of ours
        return None


def reusable_entries(
    repo: Repo,
    prior: PriorOverlay | None,
    stats: dict[str, list[int] | None],
    rules: dict[str, list[int] | None] | None,
) -> dict[str, tuple[str, str]]:
    """The prior overlay's entry (mode, id) of each file whose stat data is what it was
    when that save took it, before hashing it, and whose files of attributes (`rules`,
    quickstate.rule_files: taken before hashing too) are as they were then. That save's
    stat data is trusted (it was kept only if every file was older than its scan by
    quickstate.RACY_NS; the files of attributes are held to the same), and a write since
    would have moved a file's ctime: the content is the one it hashed, under the same
    rules. A `.gitattributes` among the overlay's files that moved: nothing is reused."""
    if prior is None or prior.tree is None or rules is None:
        return {}
    moved = {f for f, s in stats.items() if prior.stats.get(f) != s} | (
        set(prior.stats) - set(stats)
    )
    if any(graft.is_attributes(f) for f in moved):
        return {}
    same_rules = {
        path
        for path, now in rules.items()
        if path in prior.rules
        and prior.rules[path] == now
        and quickstate.rules_trusted(now, prior.stamp_ns)
    }
    if not all(p in same_rules for p in quickstate.WHOLE_TREE_RULES):
        return {}
    same = [
        f
        for f, s in stats.items()
        if s is not None and prior.stats.get(f) == s and _rules_held(f, same_rules)
    ]
    if not same:
        return {}
    entries = _flattened(repo, prior.tree)
    return {f: entries[f] for f in same if f in entries}


def _rules_held(path: str, same: set[str]) -> bool:
    """Whether the `.gitattributes` of every folder on the way to `path` is unchanged."""
    folder = path
    while folder:
        folder = folder.rpartition("/")[0]
        if (f"{folder}/.gitattributes" if folder else ".gitattributes") not in same:
            return False
    return True


def _flattened(repo: Repo, tree: str) -> dict[str, tuple[str, str]]:
    """A tree's files: path -> (octal mode, id)."""
    out: dict[str, tuple[str, str]] = {}
    folders = [("", tree)]
    while folders:
        prefix, oid = folders.pop()
        try:
            found = repo.objects[oid]
        except (KeyError, ValueError):  # (a state.json not of our making)
            return {}
        if not isinstance(found, Tree):
            return {}
        for entry in found:
            if entry.filemode == TREE_MODE:
                folders.append((f"{prefix}{entry.name}/", str(entry.id)))
            else:
                out[f"{prefix}{entry.name}"] = (f"{int(entry.filemode):o}", str(entry.id))
    return out


def _tracked(trees: TrackedTrees) -> Snapshot:
    """A snapshot of the tracked files (finish_snapshot adds the overlay)."""
    return Snapshot(
        base=None,
        branch=None,
        worktree_tree=trees.worktree_tree,
        index_tree=trees.index_tree,
        overlay_tree=None,
        overlay_files=(),
        overlay_bytes=0,
        secrets_left_out=(),
        nested_repos_left_out=(),
        flagged=tuple(trees.flagged.items()),
        intent_to_add=tuple(trees.intent_to_add),
    )


def finish_snapshot(
    repo: Repo,
    cfg: Config,
    tracked: Snapshot,
    facts: ScanFacts,
    *,
    kept: KeptIndex | None = None,
    prior: PriorOverlay | None = None,
    ahead: Ahead | None = None,
) -> Snapshot:
    """Add the overlay to a snapshot of the tracked files. `kept`: the temporary index to
    hand to the quick check (save/keep.py); `prior`: the last save's overlay, reused when
    the same files are there with the same stat data; `ahead`: the overlay hashed
    already (_overlay_ahead) from the same scan."""
    before = facts.before
    if ahead is not None:
        overlay, stats, tree, rules = ahead.overlay, ahead.stats, ahead.tree, ahead.rules
        include_seen = facts.include_seen or []
    else:
        try:
            overlay, include_seen = choose_overlay(repo, cfg, facts.untracked, facts.include_seen)
        except BaseException:
            keep.discard_path(kept.path if kept else None)
            raise
        stats = quickstate.overlay_stats(repo.root, overlay.files)  # before hashing them
        rules = quickstate.rule_files(repo, overlay.files, repo.config_pairs())
        known = reusable_entries(repo, prior, stats, rules)
        tree = overlay_tree(repo, overlay.files, known)
    files, size = overlay.files, overlay.size
    seed = None
    if kept is not None and before is not None and facts.untracked is not None:
        seed = keep.Seed(
            before=before,
            index_path=kept.path,
            index_stamp_ns=kept.stamp_ns,
            changed=facts.changed_stats,
            untracked=facts.untracked,
            deleted=facts.deleted,
            include_others=tuple(include_seen),
            includes=tuple(cfg.include),
            exclude_args=tuple(exclude_args(cfg)),
            overlay=stats,
            rules=rules,
            config=repo.config_pairs(),
            intent_to_add=tracked.intent_to_add,
            overlay_bytes=size,
        )
    return replace(
        tracked,
        overlay_tree=tree,
        overlay_files=tuple(files),
        overlay_bytes=size,
        secrets_left_out=overlay.secrets,
        nested_repos_left_out=overlay.unstorable,
        left_out=overlay.left_out,
        seed=seed,
    )
