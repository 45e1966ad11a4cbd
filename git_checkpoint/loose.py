"""Loose objects written as git writes them, for the trees graft.py computes itself.

graft.py already has each new tree's bytes and id (it checks git's answers against
them); writing them here saves the `mktree --batch` process of every save. The object
is zlib-compressed "tree <size>\\0<body>" at objects/<2 hex>/<38 hex>, written to a
temporary name in that folder and renamed into place, read-only: what git's
write_loose_object does (Documentation/gitformat-loose.txt).

`usable` says when git would write elsewhere or otherwise: an object directory or
quarantine from the environment, a shared repository's permissions. The caller asks
git then.
"""

from __future__ import annotations

import contextlib
import os
import zlib
from collections.abc import Iterable, Mapping

_ELSEWHERE = ("GIT_OBJECT_DIRECTORY", "GIT_QUARANTINE_PATH")
_LOOSE_LEVEL = 1  # core.looseCompression's default (git reads any level)


def usable(config: Iterable[tuple[str, str]]) -> bool:
    """Whether git would write this repository's objects as we do here."""
    if any(name in os.environ for name in _ELSEWHERE):
        return False
    for key, value in config:
        if key == "core.sharedrepository":
            return False
        if key == "extensions.objectformat" and value.lower() != "sha1":
            return False
    return True


def write_trees(objects_dir: str | os.PathLike[str], trees: Mapping[str, bytes]) -> None:
    """Store each tree (id -> body). An object there already is left as it is, its date
    renewed (git's freshening: a concurrent prune keeps it)."""
    for oid, body in trees.items():
        folder = os.path.join(objects_dir, oid[:2])
        path = os.path.join(folder, oid[2:])
        try:
            os.utime(path)
            continue
        except FileNotFoundError:
            pass
        os.makedirs(folder, exist_ok=True)
        data = zlib.compress(b"tree %d\0" % len(body) + body, _LOOSE_LEVEL)
        tmp = os.path.join(folder, f"tmp_obj_{os.getpid()}_{os.urandom(4).hex()}")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except BaseException:
            _remove(tmp)
            raise


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)
