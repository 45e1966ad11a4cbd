"""Objects read through `git cat-file --batch`: trees and blobs for restore, the trees on
a save's way to the root for the graft, blobs streamed to the secret scan and to a
restore's staging.

One reader of git's batch format, with two kinds of child: a repository keeps one for
the lookups restore makes one at a time (`objects[oid]`), and a batch of names known at
once (`read_specs`, `stream`) gets a child of its own that ends with it. Trees are
parsed strictly: an entry with an empty name or a slash in it, a bad mode or a truncated
record makes the whole tree unreadable (ValueError), as it would for libgit2.
"""

from __future__ import annotations

import contextlib
import subprocess
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import GitFailed
from ..core.interrupts import held
from . import inprocess
from .formats import TREE_MODE, canonical_mode, is_oid, raw_entries

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    from typing import IO, Any

BATCH = ["cat-file", "--batch"]
# What a write into an empty pipe always takes at once: one page. A request up to this
# size is written inline; a longer one from a thread, while its answers are read, since
# a pipe filled both ways would stop both processes.
_INLINE_REQUEST = 4096


@dataclass(frozen=True)
class TreeEntry:
    """One entry of a tree object: its name, mode and object id."""

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


def _parse(raw: bytes) -> list[TreeEntry]:
    return [
        TreeEntry(name.decode("utf-8", "surrogateescape"), canonical_mode(int(mode, 8)), oid)
        for name, mode, oid in raw_entries(raw)
    ]


class Objects:
    """Objects by id or by `<tree>:<path>`, from one `cat-file --batch` child started on
    first use; each object looked up by id is read once. In the command server's workers,
    what libgit2 can read is read in this process (inprocess.py), the rest through git."""

    def __init__(self, root: Path, env: dict[str, str]) -> None:
        self._root = root
        self._env = env
        self._child: subprocess.Popen[bytes] | None = None
        self._cache: dict[str, Tree | Blob] = {}
        self._lock = threading.Lock()
        self._odb: Any = None  # opened on first use; False: not in this process

    def _here(self) -> Any:
        """libgit2's object database of the repository, when objects may be read here."""
        if self._odb is None:
            self._odb = inprocess.open_odb(self._root, self._env) or False
        return self._odb or None

    def tree_changes(self, old: str, new: str) -> dict[str, inprocess.Change] | None:
        """inprocess.tree_changes, where objects are read in this process; None: ask git."""
        odb = self._here()
        if odb is None:
            return None
        try:
            return inprocess.tree_changes(odb, old, new)
        except (inprocess.Unknown, RecursionError):  # (folders nested deeper than Python goes)
            return None

    def __getitem__(self, oid: str) -> Tree | Blob:
        found = self._cache.get(oid)
        if found is None:
            if not is_oid(oid):
                raise KeyError(oid)
            answer = self._read([oid], keep=True)[0]
            if answer is None:  # "<oid> missing"
                raise KeyError(oid)
            kind, data = answer
            found = Tree(self, data) if kind == "tree" else Blob(data, kind)
            self._cache[oid] = found
        return found

    def read_specs(self, specs: list[str]) -> list[tuple[str, bytes] | None]:
        """Each object `specs` names (an id, or `<tree>:<path>`) as (its kind, its bytes),
        or None where git has none; from a child of their own."""
        return self._read(specs, keep=False)

    def _read(self, specs: list[str], *, keep: bool) -> list[tuple[str, bytes] | None]:
        odb = self._here()
        if odb is None:
            return self._read_git(specs, keep=keep)
        answers: list[tuple[str, bytes] | None] = []
        left: list[int] = []  # for git
        folders: inprocess.Folders = {}
        for n, spec in enumerate(specs):
            try:
                answers.append(inprocess.read(odb, spec, folders=folders))
            except inprocess.Unknown:
                answers.append(None)
                left.append(n)
        from_git = self._read_git([specs[n] for n in left], keep=keep)
        for n, answer in zip(left, from_git, strict=True):
            answers[n] = answer
        return answers

    def _read_git(self, specs: list[str], *, keep: bool) -> list[tuple[str, bytes] | None]:
        answers: list[tuple[str, bytes] | None] = []

        def take(found: tuple[str, int] | None, stream: IO[bytes], line: bytes) -> None:
            if found is None:  # "<spec> missing" (or ambiguous): nothing there
                answers.append(None)
                return
            kind, size = found
            answers.append((kind, b"".join(_chunks(stream, size))))

        self._request([s.encode("utf-8", "surrogateescape") for s in specs], take, keep=keep)
        return answers

    def stream(
        self,
        oids: list[str],
        sink: Callable[[int, Iterator[bytes]], None],
        missing_ok: bool = False,
    ) -> None:
        """Each blob of `oids` handed to `sink(n, chunks)` as it arrives (never whole in
        memory), from a child of their own; GitFailed when one is missing (unless
        `missing_ok`: skipped) or is no blob. Not in the order of `oids`: those read in
        this process come first."""
        odb = self._here()
        numbers = list(range(len(oids)))
        if odb is not None:
            left = []
            for n, oid in enumerate(oids):
                try:
                    found = inprocess.read(odb, oid, limit=inprocess.STREAM_MIN)
                except inprocess.Unknown:
                    found = None
                if found is None or found[0] != "blob":  # git says what is wrong
                    left.append(n)
                    continue
                data = found[1]
                sink(n, (data[i : i + _CHUNK] for i in range(0, len(data), _CHUNK)))
            numbers = left
        count = iter(numbers)

        def take(found: tuple[str, int] | None, stream: IO[bytes], line: bytes) -> None:
            n = next(count)
            if missing_ok and found is None:
                return
            if found is None or found[0] != "blob":
                raise _Broken(line.decode(errors="replace").strip() or "no answer")
            chunks = _chunks(stream, found[1])
            sink(n, chunks)
            for _ in chunks:  # whatever the sink left: the next answer follows it
                pass

        self._request([oids[n].encode() for n in numbers], take, keep=False)

    def _request(
        self,
        names: list[bytes],
        take: Callable[[tuple[str, int] | None, IO[bytes], bytes], None],
        *,
        keep: bool,
    ) -> None:
        """Send `names`, one a line, and hand each answer to `take`: (kind, size) with the
        stream positioned at the object's bytes, which `take` reads whole, or None for a
        name git has no object for; with the answer's line. `keep`: through the child
        this repository keeps (one request at a time), else through one that ends with
        the request."""
        if not names:
            return
        with self._lock if keep else contextlib.nullcontext():
            child = self._start() if keep else self._spawn(stderr=subprocess.PIPE)
            assert child.stdin is not None and child.stdout is not None
            feed, out = child.stdin, child.stdout
            listing = b"".join(name + b"\n" for name in names)

            def write() -> None:
                try:
                    feed.write(listing)
                    feed.flush()
                    if not keep:
                        feed.close()  # the child ends once it has answered them all
                except (OSError, ValueError):  # git gone: the reading says why
                    pass

            writer: threading.Thread | None = None
            try:
                # The child's stdin is empty when a request starts: it read every
                # earlier name before answering it.
                if len(listing) <= _INLINE_REQUEST:
                    write()
                else:
                    writer = threading.Thread(target=write, name="cat-file-names", daemon=True)
                    with held():  # (a Ctrl-C: once it runs, and can be joined)
                        writer.start()
                for _ in names:
                    line = out.readline()
                    if not line:
                        raise _Broken("cat-file ended early")
                    found = _header(line)
                    take(found, out, line)
                    # An object's bytes end in a newline; "<name> missing" has no body.
                    if found is not None and out.read(1) != b"\n":
                        raise _Broken("cat-file answered out of step")
            except _Broken as exc:
                why = self._end(child, writer)
                raise GitFailed(BATCH, 128, why or str(exc)) from None
            except BaseException:
                self._end(child, writer)  # its answers are out of step with us now
                raise
            if writer is not None:
                writer.join()
            if not keep:
                why = self._end(child, writer, kill=False)
                if child.returncode != 0:
                    raise GitFailed(BATCH, child.returncode or 128, why or "cat-file failed")

    def _start(self) -> subprocess.Popen[bytes]:
        if self._child is None:
            self._child = self._spawn(stderr=subprocess.DEVNULL)
        return self._child

    def _spawn(self, *, stderr: int) -> subprocess.Popen[bytes]:
        """A batch child; it only reads, so it never holds our lock. (A Ctrl-C while it
        starts: raised once it is known, and it is stopped.)"""
        child = None
        try:
            with held():
                child = subprocess.Popen(
                    ["git", *BATCH],
                    cwd=self._root,
                    env=self._env,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    stderr=stderr,
                )
        except KeyboardInterrupt:
            if child is not None:
                with child:
                    child.kill()
            raise
        return child

    def _end(
        self,
        child: subprocess.Popen[bytes],
        writer: threading.Thread | None,
        *,
        kill: bool = True,
    ) -> str:
        """Stop `child` (`kill`: a request failed half way) and wait for it and the
        writer; what it said on stderr. The next kept request starts another."""
        if self._child is child:
            self._child = None
        if kill:
            with contextlib.suppress(OSError):
                child.kill()
        if writer is not None:
            writer.join()
        said = b""
        if child.stderr is not None:
            with contextlib.suppress(OSError, ValueError):
                said = child.stderr.read()
        child.wait()
        for stream in (child.stdin, child.stdout, child.stderr):
            if stream is not None:
                with contextlib.suppress(OSError, ValueError):
                    stream.close()
        return said.decode(errors="replace").strip()

    def close(self) -> None:
        child, self._child = self._child, None
        if child is not None:
            assert child.stdin is not None and child.stdout is not None
            with contextlib.suppress(OSError, ValueError):
                child.stdin.close()
            child.stdout.close()
            child.wait()

    def __del__(self) -> None:
        self.close()


_KINDS = {b"blob", b"tree", b"commit", b"tag"}


def _header(line: bytes) -> tuple[str, int] | None:
    """An answer's (kind, size) from its line "<oid> <kind> <size>"; None for anything
    else: "<name> missing", "<name> ambiguous" (a name may hold spaces of its own)."""
    parts = line.split()
    if len(parts) != 3 or parts[1] not in _KINDS or not parts[2].isdigit():
        return None
    if not is_oid(parts[0].decode("ascii", "replace")):
        return None
    return parts[1].decode(), int(parts[2])


class _Broken(Exception):
    """The child's answers cannot be followed any further."""


_CHUNK = 1 << 20  # what a streamed blob comes in


def _chunks(stream: IO[bytes], size: int) -> Iterator[bytes]:
    while size > 0:
        chunk = stream.read(min(size, _CHUNK))
        if not chunk:
            raise _Broken("object cut short")
        size -= len(chunk)
        yield chunk
