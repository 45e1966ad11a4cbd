"""What the prepare-commit-msg hook decides before loading the tool, on every commit:
whether the message is one to give trailers (not a merge's or a squash's, which git
prepares from what it merges), the tree being committed, and whether a checkpoint may
hold it or the message carries trailers of ours already (an amend, `commit -c`): only
then is the full lookup worth loading (verify/trailers.py). Standard library only.
"""

from __future__ import annotations

import os

from ..gitcore.locate import find_repo
from . import treecache

# git's message sources (githooks(5)): a merge's message lists what it merges, and a
# squash's the commits it squashes; trailers of the tree go on the commits themselves.
SKIPPED_SOURCES = ("merge", "squash")
# Sources where git opens an editor on a message nobody has written yet: there git's
# "an empty message aborts the commit" must still hold, so no trailer is added.
UNWRITTEN_SOURCES = ("", "template")
KEYS = ("checkpoint:", "verified-by:")


class Plan:
    """The message file to add to, the tree being committed, whether it is unwritten."""

    __slots__ = ("message", "tree", "unwritten")

    def __init__(self, message: str, tree: str, unwritten: bool) -> None:
        self.message = message
        self.tree = tree
        self.unwritten = unwritten


def plan(cwd: str, args: list[str]) -> Plan | None:
    """`args`: the hook's (message file, source, commit). None: nothing to do."""
    if not args or not args[0]:
        return None
    source = args[1] if len(args) > 1 else ""
    if source in SKIPPED_SOURCES:
        return None
    message = os.path.join(cwd, args[0])
    tree = treecache.index_tree(cwd)
    if tree is None:
        return None  # git could not write the index as a tree: git will say why
    unwritten = source in UNWRITTEN_SOURCES
    if not unwritten and _has_ours(message):
        return Plan(message, tree, unwritten)
    paths = find_repo(cwd, whatever_env=True)
    if paths is not None and not treecache.may_hold(cwd, paths.common_dir, tree):
        return None
    return Plan(message, tree, unwritten)


def _has_ours(path: str) -> bool:
    try:
        with open(path, "rb") as fh:
            text = fh.read(1 << 20).decode("utf-8", "replace")
    except OSError:
        return False
    return any(line.lower().startswith(KEYS) for line in text.splitlines())
