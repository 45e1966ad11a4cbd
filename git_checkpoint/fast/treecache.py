"""The managed tree of each checkpoint (its tracked files and its overlay in one tree: what
a commit of the whole checkpoint holds), kept in `<common dir>/checkpoint/managed-trees`,
and the question the commit-message hook asks on every commit: can any checkpoint hold
this tree? One `for-each-ref` and that file answer it without loading the tool. A
checkpoint the file does not know yet sends the caller to the full lookup
(verify/evidence.py), which adds it; a ref not named like a checkpoint is none. A commit
names its trees for good, so an entry never goes stale; entries of checkpoints gone are
dropped when the file is written. Standard library only.
"""

from __future__ import annotations

import os

from ..gitcore.spawn import Spawned

TYPE_CHECKING = False
if TYPE_CHECKING:  # the hook path imports this module: no typing at run time
    from collections.abc import Mapping

FILE = "managed-trees"
NO_TREE = "-"  # no managed tree: not a checkpoint, or an overlay that cannot join its files
LISTING = ("for-each-ref", "--format=%(objectname) %(tree) %(refname)", "refs/checkpoints/")
_HEX = frozenset("0123456789abcdef")


def _path(common_dir: str | os.PathLike[str]) -> str:
    return os.path.join(common_dir, "checkpoint", FILE)


def _oid(text: str) -> bool:
    return len(text) in (40, 64) and not set(text) - _HEX


def read(common_dir: str | os.PathLike[str]) -> dict[str, str]:
    """commit -> its managed tree (NO_TREE: none); a line we did not write is skipped."""
    try:
        with open(_path(common_dir), encoding="ascii", errors="replace") as fh:
            text = fh.read()
    except OSError:
        return {}
    found = {}
    for line in text.splitlines():
        commit, _, tree = line.partition(" ")
        if _oid(commit) and (tree == NO_TREE or _oid(tree)):
            found[commit] = tree
    return found


def write(common_dir: str | os.PathLike[str], trees: Mapping[str, str]) -> None:
    """Replace the file with `trees` (commit -> managed tree or NO_TREE). A cache: a
    folder that cannot be written leaves it as it was, and says nothing."""
    path = _path(common_dir)
    tmp = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(tmp, "w", encoding="ascii") as fh:
            fh.write("".join(f"{c} {t}\n" for c, t in sorted(trees.items())))
        os.replace(tmp, path)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def _named_like_one(ref: str) -> bool:
    """Whether `ref` has a checkpoint's name: `…/<task>/cp_NNN`, three digits or more."""
    task, _, name = ref[len("refs/checkpoints/") :].rpartition("/")
    return bool(task) and name[:3] == "cp_" and len(name) >= 6 and name[3:].isdigit()


def index_tree(cwd: str) -> str | None:
    """The tree of the index being committed (git hands its hooks GIT_INDEX_FILE when it
    commits another index than the usual one: `commit -a`, `commit PATH`); None when git
    cannot write it (unmerged entries)."""
    env = {}
    named = os.environ.get("GIT_INDEX_FILE")
    if named:
        env["GIT_INDEX_FILE"] = os.path.join(cwd, named)  # (as is when absolute)
    out = Spawned(["write-tree"], cwd, env).result()
    tree = out.decode("ascii", "replace").strip() if out is not None else ""
    return tree if _oid(tree) else None


def may_hold(cwd: str, common_dir: str | os.PathLike[str], tree: str) -> bool:
    """False when no checkpoint holds `tree`, by its tracked files or its managed set;
    True when one does or may (one the file does not know yet): then ask the full
    lookup."""
    out = Spawned(list(LISTING), cwd).result()
    if out is None:
        return True  # git could not list them: the full lookup will say why
    known = None
    for line in out.decode("utf-8", "replace").splitlines():
        commit, worktree_tree, ref = [*line.split(" ", 2), "", ""][:3]
        if not _named_like_one(ref):
            continue
        if worktree_tree == tree:
            return True
        if known is None:
            known = read(common_dir)
        managed = known.get(commit)
        if managed is None or managed == tree:
            return True
    return False
