"""Parsed manifests kept between commands, by commit id (`<common dir>/checkpoint/
manifests.json`).

Listing a task's checkpoints parses every manifest in it, and every save lists its
task's checkpoints: YAML adds up. A commit never changes, so what our
parser made of its message once holds for good; only results that JSON gives back
exactly are kept (a hostile manifest with, say, integer keys is parsed each time).
A cache that cannot be read or written is no cache: nothing else changes.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from ..core.errors import UsageError
from ..core.records import read_regular_file
from ..gitcore.repo import Repo

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    from typing import Any

    Parsed = tuple[dict[str, Any], str | None]  # a manifest, and its problem if any

NAME = "manifests.json"
MOST = 4096  # entries kept; the oldest go first
CACHE_MAX_BYTES = 256 * 1024 * 1024  # 4,096 manifests of up to 1 MiB would be more


def _task_of(entry: list[Any]) -> Any:
    manifest = entry[0] if entry else None
    return manifest.get("task") if isinstance(manifest, dict) else None


class ManifestCache:
    def __init__(self, repo: Repo) -> None:
        self._path = os.path.join(repo.common_dir, "checkpoint", NAME)
        self._entries: dict[str, list[Any]] = {}
        self._dirty = False
        try:  # a regular file only: a FIFO or a link to /dev/zero is no cache
            raw = read_regular_file(Path(self._path), CACHE_MAX_BYTES)
            data = json.loads(raw) if raw is not None else None
            if isinstance(data, dict):
                self._entries = data
        except (UsageError, ValueError, RecursionError):
            pass

    def get(self, oid: str) -> Parsed | None:
        entry = self._entries.get(oid)
        if (
            isinstance(entry, list)
            and len(entry) == 2
            and isinstance(entry[0], dict)
            and (entry[1] is None or isinstance(entry[1], str))
        ):
            return entry[0], entry[1]
        return None

    def put(self, oid: str, parsed: Parsed) -> None:
        entry = [parsed[0], parsed[1]]
        try:
            if json.loads(json.dumps(entry)) != entry:
                return  # JSON would not give it back as it is
        except (TypeError, ValueError):
            return
        self._entries[oid] = entry
        self._dirty = True

    def save(self, seen: set[str], task: str | None) -> None:
        """Write the cache back, without what is gone: every entry not `seen` when this
        was a listing of all checkpoints, else those of `task` not seen."""
        gone = [
            oid
            for oid, entry in self._entries.items()
            if oid not in seen
            and (task is None or (isinstance(entry, list) and _task_of(entry) == task))
        ]
        for oid in gone:
            del self._entries[oid]
        if not self._dirty and not gone:
            return
        entries = self._entries
        if len(entries) > MOST:
            entries = dict(list(entries.items())[-MOST:])
        tmp = f"{self._path}.{os.getpid()}.tmp"
        with contextlib.suppress(OSError):
            os.makedirs(os.path.dirname(self._path), exist_ok=True)
            with open(tmp, "w", encoding="utf-8") as fh:  # one string: json.dump would make
                fh.write(json.dumps(entries, separators=(",", ":")))  # a write of each piece
            os.replace(tmp, self._path)
            self._dirty = False
        with contextlib.suppress(OSError):
            os.unlink(tmp)
