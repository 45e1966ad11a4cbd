"""Trees -> a plan: what a restore must write and remove so that the managed set equals
a checkpoint (design.md §4, §9).

The plan is a tree-to-tree diff between a fresh snapshot of the workspace (which becomes
the safety checkpoint) and the target, so the cost grows with the difference, not the
repository. Every path is checked before anything is written: the target may be a
fetched, hostile tree.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from ..config.model import CONFIG_NAME
from ..core.errors import GitFailed, Refused
from ..gitcore.formats import EXECUTABLE_MODE, FILE_MODE, GITLINK_MODE, SYMLINK_MODE, TREE_MODE
from ..gitcore.repo import Repo
from ..save.capture import Snapshot
from ..save.graft import is_attributes
from ..storage.commits import ours_for_sure, trees_of
from ..storage.refs import Checkpoint
from .checks import (
    Entry,
    check_overlay,
    check_path,
    check_tree,
    cwd_in,
    disk_holds,
    unadoptable,
)
from .reconvert import converted_differently, files_below

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    from typing import Any

    from ..gitcore.catfile import Objects


@dataclass(frozen=True)
class Write:
    """A file the restore writes: its path, mode and blob."""

    path: str
    mode: int
    oid: str


@dataclass(frozen=True)
class Plan:
    """Everything a restore changes, worked out before anything is written."""

    index_tree: str
    writes: tuple[Write, ...]
    removes: tuple[str, ...]
    # Index entries that differ from the target's: (path, (mode, id)), or None to drop.
    index_changes: tuple[tuple[str, Entry | None], ...] = ()
    # Marks (assume-unchanged, skip-worktree) to put back on entries that were rewritten.
    marks: tuple[tuple[str, str], ...] = ()
    # Paths to mark again with `git add -N`, as they were when the target was saved.
    intent_to_add: tuple[str, ...] = ()
    # Those of them whose file the target does not have (deleted after `git add -N`).
    intent_gone: tuple[str, ...] = ()
    # The target's index entry of every written path (None: not in the index).
    index_entries: tuple[tuple[str, Entry | None], ...] = ()
    # Submodules whose recorded commit differs: never entered, only reported.
    gitlinks: tuple[tuple[str, Entry], ...] = ()
    # W's entries before the restore, of the paths the tree diff named (TreeView.blobs).
    before: dict[str, Entry | None] = field(default_factory=dict)
    # Writes of content the workspace holds already, that a rule change converts
    # otherwise (reconvert.py): left as they are where their bytes are git's already.
    reconverted: frozenset[str] = frozenset()
    # The `.gitattributes` files that differ from the target's, in the workspace or where
    # an interrupted restore began: the index's stat data of a file below one may be that
    # of other bytes of the same blob (apply.update_index sets it for each file written).
    rules_changed: tuple[str, ...] = ()


class TreeView:
    """The managed set of a checkpoint or snapshot: tracked tree W plus overlay tree U.

    `blobs`: W's entries a tree diff already gave (None: no file there, maybe a folder),
    so a path need not be looked up one tree at a time (1,000 paths: 2,000 trees read).
    """

    def __init__(self, odb: Objects, worktree: str, overlay: str | None) -> None:
        self.odb = odb
        self.worktree: Any = odb[worktree]
        self.worktree_id = worktree
        self.blobs: dict[str, Entry | None] = {}
        self.overlay: dict[str, Entry] = {}
        if overlay is not None:
            self.walk(odb[overlay], "", self.overlay)

    def walk(self, tree: Any, prefix: str, out: dict[str, Entry]) -> None:
        for entry in tree:
            path = f"{prefix}{entry.name}"
            if entry.filemode == TREE_MODE:
                self.walk(self.odb[entry.id], f"{path}/", out)
            else:
                out[path] = (int(entry.filemode), str(entry.id))

    def tracked(self, path: str) -> Entry | None:
        known = self.blobs.get(path)
        if known is not None:
            return known
        try:
            entry = self.worktree[path]
        except (KeyError, ValueError):
            return None
        return (int(entry.filemode), str(entry.id))

    def get(self, path: str) -> Entry | None:
        found = self.blobs[path] if path in self.blobs else self.tracked(path)
        if found is None or found[0] == TREE_MODE:
            return self.overlay.get(path)
        return found


Change = tuple[Entry | None, Entry | None]  # a path's entry in two trees (None: no file)


def _changes(repo: Repo, old: str, new: str) -> dict[str, Change]:
    """Paths whose entry differs between two trees, with both entries: read in this
    process where objects are (inprocess.tree_changes), else by git. Both skip equal
    subtrees, so the cost follows the difference (libgit2's tree diff walks every
    entry)."""
    if old == new:
        return {}
    here = repo.objects.tree_changes(old, new)
    if here is not None:
        return here
    argv = ["diff-tree", "-r", "-z", "--no-renames", "--ignore-submodules=none", "--raw"]
    out = repo.git(*argv, old, new, env=repo.no_index())
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    changes: dict[str, Change] = {}
    for meta, path in zip(fields[0::2], fields[1::2], strict=False):
        if not meta.startswith(":"):
            break
        old_mode, new_mode, old_id, new_id, _ = meta[1:].split(" ")
        changes[path] = (_entry(old_mode, old_id), _entry(new_mode, new_id))
    return changes


def _entry(mode: str, oid: str) -> Entry | None:
    number = int(mode, 8)
    return (number, oid) if number else None


def _learn(changes: dict[str, Change], before: TreeView, after: TreeView) -> None:
    """What a diff of W's trees says of each path, kept in both views."""
    for path, (old, new) in changes.items():
        before.blobs[path] = old
        after.blobs[path] = new


def _views(repo: Repo, current: Snapshot, target: Checkpoint) -> tuple[TreeView, TreeView]:
    now = TreeView(repo.objects, current.worktree_tree, current.overlay_tree)
    return now, _view(repo, target)


def _view(repo: Repo, cp: Checkpoint) -> TreeView:
    return TreeView(repo.objects, cp.worktree_tree, trees_of(repo, cp)[1])


def _candidates(repo: Repo, now: TreeView, then: TreeView) -> set[str]:
    """Paths that may differ between two managed sets, found by tree-to-tree diffs."""
    changes = _changes(repo, now.worktree_id, then.worktree_id)
    _learn(changes, now, then)
    paths = set(changes)
    paths |= set(now.overlay) ^ set(then.overlay)
    paths |= {p for p in set(now.overlay) & set(then.overlay) if now.overlay[p] != then.overlay[p]}
    return paths


@contextlib.contextmanager
def _readable_trees(target: Checkpoint) -> Iterator[None]:
    """A tree git would not check out (an empty or slashed name) is an unsafe checkpoint."""
    try:
        yield
    except RecursionError:
        raise Refused(f"unsafe checkpoint {target.name}: its trees nest too deep") from None
    except GitFailed as exc:
        raise Refused(f"unsafe checkpoint {target.name}: unreadable tree ({exc})") from None
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        # a tree entry that names a blob, a missing object, a truncated tree
        raise Refused(f"unsafe checkpoint {target.name}: malformed tree ({exc})") from None


def managed_differences(repo: Repo, current: Snapshot, target: Checkpoint) -> list[str]:
    """Paths of the managed set whose content, mode or presence differs from `target`."""
    with _readable_trees(target):
        now, then = _views(repo, current, target)
        return sorted(p for p in _candidates(repo, now, then) if now.get(p) != then.get(p))


def check_whole_checkpoint(repo: Repo, target: Checkpoint) -> None:
    """Every path of every tree of `target` checked, for a full checkout (verify)."""
    with _readable_trees(target):
        index_tree, overlay_tree = trees_of(repo, target)
        if not ours_for_sure(repo, target):
            for tree in (target.worktree_tree, index_tree, overlay_tree):
                check_tree(repo.objects, tree)
        tracked: dict[str, Entry] = {}
        then = TreeView(repo.objects, target.worktree_tree, overlay_tree)
        then.walk(then.worktree, "", tracked)
        staged: dict[str, Entry] = {}
        then.walk(repo.objects[index_tree], "", staged)
    for path in [*tracked, *then.overlay, *staged]:
        check_path(path)
    check_overlay(target.name, then.overlay, then.tracked)


def plan_restore(
    repo: Repo,
    current: Snapshot,
    target: Checkpoint,
    *,
    began: Checkpoint | None = None,
    within: tuple[str, ...] = (),
) -> Plan:
    """What must be written and removed so the managed set equals `target`.

    Valid only while the work tree equals `current` — which it does right after the
    snapshot that becomes the safety checkpoint. `began`: the state an interrupted
    restore began from (its safety checkpoint), for `--continue`: the rule files it
    changed are changed still, though they are in place. `within`: a restore of these
    paths only (limit.py): a rule file it changes converts no file outside them.
    """
    with _readable_trees(target):
        target_index, target_overlay = trees_of(repo, target)
        if not ours_for_sure(repo, target):
            # What libgit2's diff would take on trust: order and uniqueness, checked
            # first (the cost follows the difference: all of it in a wholesale change).
            check_tree(repo.objects, target.worktree_tree, current.worktree_tree)
            check_tree(repo.objects, target_index, current.index_tree)
            check_tree(repo.objects, target_overlay, current.overlay_tree)
        now, then = _views(repo, current, target)
        candidates = _candidates(repo, now, then)
        index_diff = _changes(repo, current.index_tree, target_index)
        index_paths = set(index_diff)
    for path in sorted(candidates | index_paths | set(then.overlay)):
        check_path(path, (then.get(path) or (FILE_MODE,))[0])
    check_overlay(target.name, then.overlay, then.tracked)
    config_entry = then.get(CONFIG_NAME)
    if config_entry is not None and config_entry[0] not in (FILE_MODE, EXECUTABLE_MODE):
        raise Refused(f"unsafe checkpoint: its {CONFIG_NAME} is not a regular file")

    writes: list[Write] = []
    removes: list[str] = []
    gitlinks: list[tuple[str, Entry]] = []
    for path in sorted(candidates):
        before, after = now.get(path), then.get(path)
        if before == after:
            continue
        if after is None:
            if before is not None and before[0] != GITLINK_MODE:
                removes.append(path)
        elif after[0] == GITLINK_MODE:
            gitlinks.append((path, after))
            if before is not None and before[0] != GITLINK_MODE:
                removes.append(path)  # a file or symlink: its folder goes there
        else:
            writes.append(Write(path, after[0], after[1]))
    writes += _under_removed(removes, writes, now, then)
    flagged = {p for p, _ in current.flagged}
    with _readable_trees(target):
        earlier = [_view(repo, began)] if began is not None else []
        changed = _rules_changed(repo, candidates, (now, then), earlier)
        skip = flagged | {w.path for w in writes}
        reconverted = _reconverted(repo, changed, (now, then), earlier, skip=skip)
    if within and within != (".",):
        reconverted = [
            w for w in reconverted if any(w.path == p or w.path.startswith(p + "/") for p in within)
        ]
    writes += reconverted
    check_writes(repo, writes, removes, now, then, adopt=target.remote is None)
    wanted_index = TreeView(repo.objects, target_index, None)
    wanted_index.blobs.update((p, new) for p, (_, new) in index_diff.items())
    index_changes = [(p, wanted_index.tracked(p)) for p in sorted(index_paths)]
    # `git add -N` entries are in no index tree: carry them by name (manifest) instead.
    then_ita, gone_ita = _intent_to_add_of(target, then, wanted_index)
    index_changes += [
        (p, None)
        for p in current.intent_to_add
        if p not in then_ita and p not in index_paths and wanted_index.tracked(p) is None
    ]
    return Plan(
        index_tree=target_index,
        writes=tuple(writes),
        removes=tuple(removes),
        index_changes=tuple(c for c in index_changes if c[1] is None or c[1][0] != TREE_MODE),
        marks=tuple((p, m) for p, m in current.flagged if wanted_index.tracked(p) is not None),
        intent_to_add=tuple(p for p in then_ita if p not in current.intent_to_add),
        intent_gone=tuple(p for p in gone_ita if p not in current.intent_to_add),
        index_entries=_index_entries(repo, target, writes, then, wanted_index),
        gitlinks=tuple(gitlinks),
        before=now.blobs,
        reconverted=frozenset(w.path for w in reconverted),
        rules_changed=tuple(sorted(changed)),
    )


def _rules_changed(
    repo: Repo, candidates: set[str], views: tuple[TreeView, TreeView], earlier: list[TreeView]
) -> set[str]:
    """The `.gitattributes` files that differ between the target and the workspace, or
    the state an interrupted restore began from (`earlier`). `candidates`: the paths
    that may differ between the workspace and the target."""
    now, then = views
    changed = {p for p in candidates if is_attributes(p) and now.get(p) != then.get(p)}
    for view in earlier:
        since = _candidates(repo, view, then)
        changed |= {p for p in since if is_attributes(p) and view.get(p) != then.get(p)}
    return changed


def _reconverted(
    repo: Repo,
    changed: set[str],
    views: tuple[TreeView, TreeView],
    earlier: list[TreeView],
    *,
    skip: set[str],
) -> list[Write]:
    """The target's files whose content the workspace holds already, below a
    `.gitattributes` of `changed` (_rules_changed), that the rules convert otherwise
    than the workspace's rules or those of the state an interrupted restore began from
    (`earlier`): git's checkout under the target's rules may write other bytes
    (reconvert.py); rule files included. Not those in `skip` (written anyway, or marked
    skip-worktree or assume-unchanged)."""
    now, then = views
    if not changed:
        return []
    folders = sorted({p.rpartition("/")[0] for p in changed})
    found = files_below(repo, then.worktree_id, then.overlay, folders)
    paths = sorted(
        p
        for p, entry in found.items()
        if entry[0] in (FILE_MODE, EXECUTABLE_MODE) and p not in skip and now.get(p) == entry
    )
    states = [(view.worktree_id, view.overlay) for view in (now, *earlier)]
    differ = converted_differently(repo, paths, (then.worktree_id, then.overlay), states)
    return [Write(p, *found[p]) for p in paths if p in differ]


def _under_removed(
    removes: list[str], writes: list[Write], now: TreeView, then: TreeView
) -> list[Write]:
    """The target's files below a path the plan removes (a file or a symlink where the
    target has a folder): nothing is there once it is gone, whatever the snapshot says
    (git's status skips the tracked files below a looping symlink)."""
    out: list[Write] = []
    writing = {w.path for w in writes}
    for path in removes:
        found = then.tracked(path)
        if found is None or found[0] != TREE_MODE:
            continue
        below: dict[str, Entry] = {}
        then.walk(then.odb[found[1]], f"{path}/", below)
        for child, (mode, oid) in sorted(below.items()):
            if child not in writing and mode != GITLINK_MODE:
                check_path(child, mode)
                out.append(Write(child, mode, oid))
    return out


# From this many writes, their index entries come from a diff of the target's W and I
# (one git process) rather than from looking each path up, one tree at a time.
INDEX_DIFF_FROM = 64


def _index_entries(
    repo: Repo, target: Checkpoint, writes: list[Write], then: TreeView, index: TreeView
) -> tuple[tuple[str, Entry | None], ...]:
    """The target's index entry of each written path: where the target's index and W
    agree (their diff names the paths where they do not), W's, which `then` knows."""
    if len(writes) < INDEX_DIFF_FROM:
        return tuple((w.path, index.tracked(w.path)) for w in writes)
    staged = _changes(repo, target.worktree_tree, index.worktree_id)
    out: list[tuple[str, Entry | None]] = []
    for write in writes:
        in_w = then.blobs.get(write.path)
        if write.path in staged:
            entry = staged[write.path][1] or index.tracked(write.path)
        elif in_w is not None:
            entry = in_w  # the same entry in the index
        else:
            entry = index.tracked(write.path)
        out.append((write.path, entry))
    return tuple(out)


def _intent_to_add_of(
    target: Checkpoint, then: TreeView, index: TreeView
) -> tuple[list[str], list[str]]:
    """The target's `git add -N` paths: named in its manifest and not in I; all of them,
    and those whose file it does not have (in no tree of the target)."""
    named = target.manifest.get("intent_to_add")
    if not isinstance(named, list):
        return [], []
    paths = [p for p in named if isinstance(p, str)]
    for path in paths:
        check_path(path)
    marked = [p for p in paths if index.tracked(p) is None]
    return marked, [p for p in marked if then.tracked(p) is None]


def check_writes(
    repo: Repo,
    writes: list[Write],
    removes: list[str],
    now: TreeView,
    then: TreeView,
    *,
    adopt: bool,
) -> None:
    """Refuse writes through symlinks, over big unmanaged files, or outside the work
    tree. An unmanaged file the target holds (ignored or excluded now, under rules the
    restore puts back first) is kept in the safety checkpoint before it is overwritten
    (recovery: adopted), up to ADOPT_MAX_BYTES; unless the target was fetched (`adopt`
    False): another machine's checkpoint never replaces a file this one ignores (an
    `.env`, a credentials file), it is refused as before.
    """
    root = repo.root
    removing = set(removes)
    folders: dict[str, str] = {}  # every folder a write passes through -> one such write
    in_w: set[str] = set()  # of those, the folders above a file of the target's W
    for write in writes:
        parts = write.path.split("/")
        tracked = then.blobs.get(write.path) is not None
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth])
            folders.setdefault(folder, write.path)
            if tracked:
                in_w.add(folder)
    fresh: set[str] = set()  # folders that will be created: nothing below them to check
    for folder in sorted(folders, key=lambda f: f.count("/")):
        path = folders[folder]
        # A folder of W is no symlink there, nor in the overlay (plan_restore refuses
        # an overlay path W holds): only the others are looked up.
        entry = None if folder in in_w else then.get(folder)
        if entry is not None and entry[0] == SYMLINK_MODE:
            raise Refused(
                f"unsafe checkpoint: {path!r} would be written through symlink {folder!r}"
            )
        parent = folder.rpartition("/")[0]
        if parent in fresh or folder in removing:
            fresh.add(folder)  # removed first, or below something created fresh
            continue
        try:
            st = os.lstat(root / folder)
        except (FileNotFoundError, NotADirectoryError):
            fresh.add(folder)
            continue
        if stat.S_ISLNK(st.st_mode):
            raise Refused(f"refusing to write {path!r} through the symlink {folder!r}")
        if not stat.S_ISDIR(st.st_mode):
            raise Refused(f"{folder!r} is in the way of {path!r} and is not managed")
    base = os.fspath(root)  # a str, not a Path: one lstat for each of many paths
    here = cwd_in(base)
    for write in writes:
        if write.path.rpartition("/")[0] in fresh:
            continue  # its folder is made new (a symlink there removed first): not followed
        try:
            st = os.lstat(f"{base}/{write.path}")
        except OSError:
            continue  # nothing there to overwrite
        mode = st.st_mode
        if stat.S_ISDIR(mode):
            if here is not None and (here == write.path or here.startswith(f"{write.path}/")):
                raise Refused(  # as git since 2.35: never the folder a shell stands in
                    f"restore would replace the folder {write.path!r}, which this command "
                    "runs in, with a file; run it from another folder"
                )
            # A folder (or a submodule's checkout) where a file goes: only what the plan
            # removes may be in it (a submodule not checked out is an empty folder, which
            # git's checkout replaces too).
            inside = (
                os.path.relpath(os.path.join(d, f), root)
                for d, _, files in os.walk(root / write.path)
                for f in files
            )
            unmanaged = [p for p in inside if p not in removing]
            if unmanaged:
                what = "submodule" if (now.get(write.path) or (0,))[0] == GITLINK_MODE else "folder"
                raise Refused(
                    f"restore would replace the {what} {write.path!r}, which holds files "
                    f"outside the managed set: {', '.join(unmanaged[:3])}"
                )
        elif now.get(write.path) is None and not disk_holds(
            repo, write.path, (write.mode, write.oid)
        ):
            why = unadoptable(write.path, st, adopt)
            if why:
                raise Refused(
                    f"restore would overwrite {write.path!r}, which is outside the managed "
                    f"set (ignored or excluded), and {why}; move it away or add it to "
                    "untracked.include"
                )


def under_rules(path: str, rules: Iterable[str]) -> bool:
    """Whether the `.gitattributes` files `rules` can convert `path` (one of them none)."""
    if is_attributes(path):
        return False
    return any(not f or path.startswith(f"{f}/") for f in (r.rpartition("/")[0] for r in rules))


def attributes_touched(plan: Plan) -> list[str]:
    """The `.gitattributes` files the plan changes (writes or removes; not those it
    writes only to convert them otherwise, whose rules stay)."""
    touched = (*(w.path for w in plan.writes if w.path not in plan.reconverted), *plan.removes)
    return [p for p in touched if is_attributes(p)]
