"""Trees and blobs read through one `git cat-file --batch` child: what restore reads.

Restore looks up a few hundred tree entries at most; pygit2 would cost 40 ms to import
and 15 MB of memory before the first one. The objects here answer the few questions
restore asks (a tree's entries, an entry by path, an object's raw bytes) and parse trees
strictly: an entry with an empty name or a slash in it, a bad mode or a truncated
record makes the whole tree unreadable (ValueError), as it would for libgit2.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ..core.errors import GitFailed

TREE_MODE = 0o040000


@dataclass(frozen=True)
class TreeEntry:
    name: str
    filemode: int
    id: str


class Blob:
    """A non-tree object's raw bytes; `kind` says what git calls it (blob, commit, tag)."""

    def __init__(self, data: bytes, kind: str = "blob") -> None:
        self._data = data
        self.kind = kind

    def read_raw(self) -> bytes:
        return self._data


class Tree:
    """A tree's entries in stored order; `tree["a/b"]` looks one up by path."""

    def __init__(self, objects: Objects, data: bytes) -> None:
        self._objects = objects
        self._data = data
        self.entries = _parse(data)
        self._by_name = {e.name: e for e in self.entries}

    def read_raw(self) -> bytes:
        return self._data

    def __iter__(self) -> Iterator[TreeEntry]:
        return iter(self.entries)

    def __getitem__(self, path: str) -> TreeEntry:
        tree: Tree = self
        *folders, name = path.split("/")
        for folder in folders:
            entry = tree._by_name[folder]
            if entry.filemode != TREE_MODE:
                raise KeyError(path)
            found = self._objects[entry.id]
            if not isinstance(found, Tree):
                raise KeyError(path)
            tree = found
        return tree._by_name[name]


def canonical_mode(mode: int) -> int:
    """The mode git reads an entry as (canon_mode): `40755` is a folder, `100775` an
    executable file, `120777` a symlink; an unknown kind stays as it is (and is refused
    where it is used)."""
    kind = mode & 0o170000
    if kind == 0o100000:
        return 0o100755 if mode & 0o100 else 0o100644
    if kind in (0o040000, 0o120000, 0o160000):
        return kind
    return mode


def raw_entries(raw: bytes) -> list[tuple[bytes, bytes, str]]:
    """A tree's entries as stored: (name, mode as written, hex id). Strict: an empty
    name, a slash in one, a mode that is not digits or a truncated record is a
    ValueError, as libgit2 refused them."""
    entries = []
    pos = 0
    while pos < len(raw):
        space = raw.index(b" ", pos)
        nul = raw.index(b"\0", space)
        if nul + 21 > len(raw):
            raise ValueError("truncated tree entry")
        mode, name = raw[pos:space], raw[space + 1 : nul]
        if not name or b"/" in name or not mode.isdigit():
            raise ValueError(f"malformed tree entry {name!r}")
        entries.append((name, mode, raw[nul + 1 : nul + 21].hex()))
        pos = nul + 21
    return entries


def _parse(raw: bytes) -> list[TreeEntry]:
    return [
        TreeEntry(name.decode("utf-8", "surrogateescape"), canonical_mode(int(mode, 8)), oid)
        for name, mode, oid in raw_entries(raw)
    ]


class Objects:
    """Objects by id, from one `cat-file --batch` child started on first use; each
    object is read once."""

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self._root = root
        self._env = env
        self._child: subprocess.Popen[bytes] | None = None
        self._cache: dict[str, Tree | Blob] = {}

    def __getitem__(self, oid: str) -> Tree | Blob:
        found = self._cache.get(oid)
        if found is None:
            kind, data = self._read(oid)
            found = Tree(self, data) if kind == b"tree" else Blob(data, kind.decode())
            self._cache[oid] = found
        return found

    def _read(self, oid: str) -> tuple[bytes, bytes]:
        if len(oid) not in (40, 64) or not all(c in "0123456789abcdef" for c in oid):
            raise KeyError(oid)
        child = self._start()
        assert child.stdin is not None and child.stdout is not None
        try:
            child.stdin.write(oid.encode() + b"\n")
            child.stdin.flush()
            header = child.stdout.readline().split()
            if len(header) != 3:  # "<oid> missing"
                raise KeyError(oid)
            size = int(header[2])
            data = child.stdout.read(size)
            child.stdout.read(1)  # the newline after each object
        except (BrokenPipeError, ValueError) as exc:
            raise GitFailed(["cat-file", "--batch"], 128, str(exc)) from None
        if len(data) != size:
            raise GitFailed(["cat-file", "--batch"], 128, "object cut short")
        return header[1], data

    def _start(self) -> subprocess.Popen[bytes]:
        if self._child is None:  # it only reads: it never holds our lock (no pass_fds)
            self._child = subprocess.Popen(
                ["git", "cat-file", "--batch"],
                cwd=self._root,
                env=self._env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        return self._child

    def close(self) -> None:
        child, self._child = self._child, None
        if child is not None:
            assert child.stdin is not None and child.stdout is not None
            child.stdin.close()
            child.stdout.close()
            child.wait()

    def __del__(self) -> None:
        self.close()


def stream_blobs(
    root: Path,
    oids: list[str],
    sink: Callable[[int, Iterator[bytes]], None],
    missing_ok: bool = False,
) -> None:
    """Each blob of `oids` from one `cat-file --batch`, handed to `sink(n, chunks)` as
    it arrives (never whole in memory; the sink takes every chunk); GitFailed when one
    is missing (unless `missing_ok`: skipped) or no blob. The ids go in from a thread
    while the blobs are read: a pipe filled both ways never deadlocks (a temporary file
    did the same, but importing tempfile cost every save 2.6 ms)."""
    import threading  # (subprocess has imported it)

    from .spawn import child_env

    child = subprocess.Popen(
        ["git", "cat-file", "--batch"],
        cwd=root,
        env=child_env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert child.stdin is not None and child.stdout is not None and child.stderr is not None
    listing = "".join(f"{oid}\n" for oid in oids).encode()
    feed = child.stdin

    def write() -> None:
        with contextlib.suppress(OSError):  # git gone early: its answer says why
            feed.write(listing)
        with contextlib.suppress(OSError):
            feed.close()

    writer = threading.Thread(target=write, name="cat-file-ids", daemon=True)
    writer.start()
    header: list[bytes] = []
    try:
        for n in range(len(oids)):
            header = child.stdout.readline().split()
            if missing_ok and header[1:] == [b"missing"]:
                continue
            if len(header) != 3 or header[1] != b"blob":
                break  # "<oid> missing", or not a blob
            sink(n, _chunks(child.stdout, int(header[2])))
            child.stdout.read(1)  # the newline after each object
        else:
            header = []
    finally:
        child.stdout.close()  # (git, if still writing, ends on the closed pipe)
        writer.join()
        err = child.stderr.read()
        child.stderr.close()
        code = child.wait()
    if header or code != 0:
        why = err.decode(errors="replace").strip() or b" ".join(header).decode(errors="replace")
        raise GitFailed(["cat-file", "--batch"], code or 128, why)


def _chunks(stream: IO[bytes], size: int) -> Iterator[bytes]:
    while size > 0:
        chunk = stream.read(min(size, 1 << 20))
        if not chunk:
            raise GitFailed(["cat-file", "--batch"], 128, "object cut short")
        size -= len(chunk)
        yield chunk
