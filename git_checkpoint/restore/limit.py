"""A restore of some paths only (`restore CP -- PATH…`): the checkpoint's files, index
entries and overlay at those paths, the workspace's own everywhere else.

The restore then runs as any restore does, towards a target made of both: its managed
set is those paths, so nothing else is written, removed or staged, and its safety
checkpoint (the whole workspace, as always) is what `undo` goes back to. The target is
built from the very snapshot the restore's plan is made from, so a file changed outside
the paths meanwhile is never put back. The checkpoint is checked whole first, as a whole
restore checks it; a path below what the workspace holds as a file, a symlink or a
submodule is refused (restoring it would remove that, outside the paths).
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable

from ..core.errors import Refused, UsageError
from ..gitcore.formats import GITLINK_MODE, SYMLINK_MODE, TREE_MODE
from ..gitcore.repo import Repo
from ..save.capture import Snapshot
from ..storage.commits import ours_for_sure, trees_of
from ..storage.refs import Checkpoint
from .checks import check_overlay, check_tree
from .plan import TreeView, _readable_trees

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    from typing import Any


def clean_paths(paths: Iterable[str]) -> tuple[str, ...]:
    """Paths below the top of the work tree as a restore limits itself to them: `/`
    separated, no `.` or `..` parts, no trailing slash; `.` (or the top) stands for all."""
    out: list[str] = []
    for given in paths:
        path = posixpath.normpath(given.replace("\\", "/")) if given else "."
        if path.startswith("../") or path == ".." or path.startswith("/"):
            raise UsageError(f"{given!r} is outside the work tree")
        if path == ".":
            return (".",)
        if path not in out:
            out.append(path)
    if not out:
        raise UsageError("no path given after --")
    return tuple(out)


def _within(path: str, limits: tuple[str, ...]) -> bool:
    return any(p == "." or path == p or path.startswith(p + "/") for p in limits)


def _in_the_way(odb: Any, trees: Iterable[str | None], paths: Iterable[str]) -> tuple[str, str]:
    """A folder above one of `paths` that the workspace holds as a file, a symlink or a
    submodule (in any of `trees`): restoring below it would remove it, and it is outside
    the paths. (path, what it is), or ("", "") when there is none."""
    import pygit2

    kinds = {SYMLINK_MODE: "symlink", GITLINK_MODE: "submodule"}
    for path in paths:
        parts = path.split("/")
        for depth in range(1, len(parts)):
            above = "/".join(parts[:depth])
            for tree in trees:
                if not tree:
                    continue
                try:
                    entry = odb[tree].peel(pygit2.Tree)[above]
                except KeyError:
                    continue
                if entry.filemode != TREE_MODE:
                    return above, kinds.get(entry.filemode, "file")
    return "", ""


def _not_there(repo: Repo, current: Snapshot, target: Checkpoint, path: str) -> str:
    """Why `path` has nothing to restore: in neither the checkpoint nor what the
    workspace's checkpoints hold, saying which the workspace's file is when it has one."""
    for item in current.left_out:
        if path == item.path.rstrip("/") or path.startswith(item.path.rstrip("/") + "/"):
            return (
                f"{path!r} is not in {target.name}, and checkpoints leave the workspace's "
                f"out ({item.why}): there is nothing to restore it from"
            )
    if os.path.lexists(repo.root / path):
        return (
            f"{path!r} is not in {target.name}, and checkpoints do not hold the "
            "workspace's (ignored or excluded): there is nothing to restore it from"
        )
    return (
        f"{path!r} is in neither {target.name} nor the workspace "
        "(paths are relative to the current folder, as git's are)"
    )


def limited_target(
    repo: Repo, current: Snapshot, target: Checkpoint, paths: tuple[str, ...]
) -> Checkpoint:
    """`target` at `paths`, `current` elsewhere, as a checkpoint commit of its own (not
    referenced: the restore's journal names it, and `undo` never needs it)."""
    import pygit2

    odb = repo.odb
    target_index, target_overlay = trees_of(repo, target)
    _check_whole(repo, current, target, target_index, target_overlay)
    pairs = {
        "worktree": (current.worktree_tree, target.worktree_tree),
        "index": (current.index_tree, target_index),
        "overlay": (current.overlay_tree, target_overlay),
    }
    trees: dict[str, str | None] = {}
    matched: set[str] = set()
    found_there: set[str] = set()  # the paths the checkpoint has something at or below
    for kind, (mine, theirs) in pairs.items():
        index = pygit2.Index()
        if mine:
            index.read_tree(odb[mine].peel(pygit2.Tree))
        for entry in [e for e in index if _within(e.path, paths)]:
            matched.update(p for p in paths if _within(entry.path, (p,)))
            index.remove(entry.path)
        if theirs:
            source = pygit2.Index()
            try:
                source.read_tree(odb[theirs].peel(pygit2.Tree))
            except pygit2.GitError as exc:  # a name git would not check out ("..", ".git")
                raise Refused(f"unsafe checkpoint {target.name}: malformed tree ({exc})") from None
            for entry in source:
                if _within(entry.path, paths):
                    matched.update(p for p in paths if _within(entry.path, (p,)))
                    found_there.update(p for p in paths if _within(entry.path, (p,)))
                    index.add(pygit2.IndexEntry(entry.path, entry.id, entry.mode))
        written = str(index.write_tree(odb))
        trees[kind] = None if kind == "overlay" and len(index) == 0 else written
    brought = [p for p in paths if p in found_there]
    above, what = _in_the_way(
        odb, (current.worktree_tree, current.index_tree, current.overlay_tree), brought
    )
    if above:
        raise Refused(
            f"not restoring below {above!r}: it is a {what} in the workspace and a folder "
            f"in {target.name}; restore {above!r} itself to replace it"
        )
    missing = [p for p in paths if p != "." and p not in matched]
    if missing:
        raise UsageError(_not_there(repo, current, target, missing[0]))
    manifest = _manifest(target.manifest, current, paths)
    base = current.base
    index_commit = repo.commit_tree(
        str(trees["index"]), [base] if base else [], f"index on {target.name} (paths)\n"
    )
    overlay = trees["overlay"]
    overlay_commit = (
        repo.commit_tree(overlay, [], f"untracked files on {target.name} (paths)\n")
        if overlay
        else None
    )
    parents = (
        ([base] if base else []) + [index_commit] + ([overlay_commit] if overlay_commit else [])
    )
    raw = repo.git("cat-file", "commit", target.commit).decode("utf-8", "surrogateescape")
    message = raw.split("\n\n", 1)[1]
    summary, _, _ = message.partition("\n")
    body = _dump(manifest)
    commit = repo.commit_tree(str(trees["worktree"]), parents, f"{summary}\n\n{body}")
    return Checkpoint(
        task=target.task,
        id=target.id,
        ref=target.ref,
        commit=commit,
        worktree_tree=str(trees["worktree"]),
        base=base,
        index_commit=index_commit,
        overlay_commit=overlay_commit,
        message=target.message,
        manifest=manifest,
        problem=None,
    )


def _check_whole(
    repo: Repo, current: Snapshot, target: Checkpoint, index_tree: str, overlay_tree: str | None
) -> None:
    """The checkpoint checked whole, as a restore of all of it is, before a part of it is
    taken: the parts are rewritten by libgit2, which would pass a crafted tree (a name
    twice, out of order, with a slash) off as sound."""
    with _readable_trees(target):
        if not ours_for_sure(repo, target):
            check_tree(repo.objects, target.worktree_tree, current.worktree_tree)
            check_tree(repo.objects, index_tree, current.index_tree)
            check_tree(repo.objects, overlay_tree, current.overlay_tree)
        view = TreeView(repo.objects, target.worktree_tree, overlay_tree)
        check_overlay(target.name, view.overlay, view.tracked)


def _manifest(given: dict[str, Any], current: Snapshot, paths: tuple[str, ...]) -> dict[str, Any]:
    """The target's manifest, its `git add -N` entries taken from the workspace outside
    the paths and from the checkpoint inside them; the base is the workspace's."""
    mine = [p for p in current.intent_to_add if not _within(p, paths)]
    theirs = [p for p in given.get("intent_to_add") or [] if isinstance(p, str)]
    manifest = dict(given)
    manifest["base_commit"] = current.base
    manifest["branch"] = current.branch
    manifest["restored_paths"] = list(paths)
    ita = sorted({*mine, *(p for p in theirs if _within(p, paths))})
    if ita:
        manifest["intent_to_add"] = ita
    else:
        manifest.pop("intent_to_add", None)
    manifest.pop("intent_to_add_total", None)
    return manifest


def _dump(manifest: dict[str, Any]) -> str:
    import yaml

    return str(yaml.safe_dump(manifest, sort_keys=False, allow_unicode=True))
