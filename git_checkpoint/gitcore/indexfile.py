"""The few index files the save's graft reads and writes itself, in git's version-2 format.

The graft adds a handful of changed files to a small scratch index seeded with their own
entries, so that `git update-index --add` applies every rule `git add` would. Writing
that seed here and reading the result back saves two git processes per save
(`update-index --index-info` and `ls-files -s`). A restore that wrote many files sets
their stat data in the real index (set_stats), where `update-index --refresh` would
hash each file again. Only the plain case is read: an index in another version, or
one git split (core.splitIndex), answers None, and the caller asks git instead.

Format (Documentation/gitformat-index.txt): "DIRC", version, entry count; each entry's
stat data, mode, object id, flags and NUL-padded path, sorted by path; extensions; the
SHA-1 of everything before it.
"""

from __future__ import annotations

import contextlib
import os
import struct
from collections.abc import Callable, Iterator, Mapping

from ..core.procs import running
from .formats import sha1

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    from typing import Any

_HEADER = struct.Struct(">4sII")
_STAT = struct.Struct(">10I")  # ctime s/ns, mtime s/ns, dev, ino, mode, uid, gid, size
_FIXED = 62  # the stat data, a 20-byte id and the 16-bit flags
_EXTENDED = 0x4000
_STAGE = 0x3000
_NAME_MAX = 0xFFF
_SHA1 = 20


def write_seed(path: str, entries: Mapping[str, tuple[str, str]]) -> None:
    """A version-2 index of `entries` (path -> (octal mode, SHA-1 id)), as
    `update-index --index-info` makes it: zero stat data, so git hashes each file again."""
    body = [_HEADER.pack(b"DIRC", 2, len(entries))]
    for name, (mode, oid) in sorted(
        (p.encode("utf-8", "surrogateescape"), e) for p, e in entries.items()
    ):
        entry = (
            _STAT.pack(0, 0, 0, 0, 0, 0, int(mode, 8), 0, 0, 0)
            + bytes.fromhex(oid)
            + struct.pack(">H", min(len(name), _NAME_MAX))
            + name
        )
        body.append(entry + b"\0" * (8 - len(entry) % 8))  # 1 to 8 NULs: a multiple of 8
    data = b"".join(body)
    with open(path, "wb") as fh:
        fh.write(data + sha1(data).digest())


def read_entries(path: str) -> dict[str, tuple[str, str]] | None:
    """path -> (octal mode, id) of a version-2 or -3 SHA-1 index with no conflict; None
    for anything else (version 4, a split index, a stage): ask `ls-files -s`."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    out: dict[str, tuple[str, str]] = {}
    mode_at = struct.Struct(">I").unpack_from
    try:
        for pos, flags, name in _walk(data):
            if flags & _STAGE:
                return None
            (mode,) = mode_at(data, pos + 24)
            out[name.decode("utf-8", "surrogateescape")] = (
                f"{mode:o}",
                data[pos + 40 : pos + 60].hex(),
            )
    except _Unread:
        return None
    return out


def set_stats(index: str, files: Mapping[str, tuple[int, str, os.stat_result]]) -> set[str]:
    """Set the stat data of `files` (path -> (mode, id, the file's stat right after it was
    written with that blob's bytes)) in the index at `index`, where the entry holds that
    mode and id, as a checkout sets it; the paths set. None is set in an index read
    elsewhere (not a plain version 2 or 3, split) or one another git holds locked.

    Written as git writes an index (a lock file renamed over it), after any file it
    records: an entry whose mtime is the index's own is racy to git, which then
    compares that file's bytes, as after any checkout. SIGTERM and SIGHUP wait while
    the lock is held: git removes its lock files before it dies of them, and a lock
    left behind stops every git command (Ctrl-C is an exception here: `finally` runs)."""
    import hashlib  # OpenSSL's SHA-1, for megabytes: the whole index, twice
    import signal

    held = {signal.SIGTERM, signal.SIGHUP}
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, held)
    try:
        return _set_stats(index, files, hashlib.sha1)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, blocked)


def _set_stats(
    index: str,
    files: Mapping[str, tuple[int, str, os.stat_result]],
    hasher: Callable[[memoryview], Any],
) -> set[str]:
    lock = index + ".lock"
    try:
        fd = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o666)
    except OSError:
        return set()
    claim = _claim(index)
    done: set[str] = set()
    renamed = False
    try:
        held = os.fstat(fd)
        with contextlib.suppress(OSError), open(claim, "w") as fh:  # (for a SIGKILL from
            fh.write(f"{os.getpid()} {held.st_dev} {held.st_ino}\n")  # here: release_stale_lock)
        with open(index, "rb") as fh:
            data = bytearray(fh.read())
            os.fchmod(fd, os.fstat(fh.fileno()).st_mode & 0o7777)
        body = memoryview(data)[: len(data) - _SHA1]
        trailer = bytes(data[len(body) :])
        if trailer != bytes(_SHA1) and hasher(body).digest() != trailer:
            return set()  # not whole: leave it to git
        names = {os.fsencode(p): p for p in files}
        for pos, name in _positions(data, names) or ():
            path = names[name]
            mode, oid, st = files[path]
            if _STAT.unpack_from(data, pos)[6] != mode or data[pos + 40 : pos + 60].hex() != oid:
                continue  # the index holds something else there now
            _STAT.pack_into(data, pos, *_stat_data(st, mode))
            done.add(path)
        if not done:
            return set()
        if trailer != bytes(_SHA1):  # index.skipHash keeps it zero
            data[len(body) :] = hasher(body).digest()
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.close(fd)
        fd = -1
        os.replace(lock, index)
        renamed = True
        return done
    except OSError:
        return set()
    finally:
        if fd >= 0:
            os.close(fd)
        if not renamed:
            with contextlib.suppress(OSError):
                os.unlink(lock)
        with contextlib.suppress(OSError):
            os.unlink(claim)


def _claim(index: str) -> str:
    """Where set_stats names the index.lock it holds: our pid, the lock's device and inode."""
    return os.path.join(os.path.dirname(index), "checkpoint", "index-lock-held")


def release_stale_lock(index: str) -> bool:
    """Remove the index.lock a killed set_stats left (a SIGKILL cannot wait): only the
    very file it made (same device and inode), and only once its process is gone. A
    lock any git holds is never touched. True when one was removed."""
    claim = _claim(index)
    try:
        with open(claim) as fh:
            pid, dev, ino = (int(x) for x in fh.read().split())
    except (OSError, ValueError):
        return False
    if running(pid):
        return False  # still running (or its pid taken since: never guess)
    removed = False
    with contextlib.suppress(OSError):
        st = os.lstat(index + ".lock")
        if (st.st_dev, st.st_ino) == (dev, ino):
            os.unlink(index + ".lock")
            removed = True
    with contextlib.suppress(OSError):
        os.unlink(claim)
    return removed


def _stat_data(st: os.stat_result, mode: int) -> tuple[int, ...]:
    """An entry's ten stat fields as git's fill_stat_data takes them (each cut to 32
    bits; the mode is the entry's own)."""
    low = 0xFFFFFFFF
    return (
        (st.st_ctime_ns // 1_000_000_000) & low,
        st.st_ctime_ns % 1_000_000_000,
        (st.st_mtime_ns // 1_000_000_000) & low,
        st.st_mtime_ns % 1_000_000_000,
        st.st_dev & low,
        st.st_ino & low,
        mode,
        st.st_uid & low,
        st.st_gid & low,
        st.st_size & low,
    )


def _positions(data: bytearray, names: Mapping[bytes, str]) -> list[tuple[int, bytes]] | None:
    """Where each entry named in `names` starts (stage 0 only), or None for an index not
    read here."""
    try:
        return [
            (pos, name) for pos, flags, name in _walk(data) if name in names and not flags & _STAGE
        ]
    except _Unread:
        return None


class _Unread(Exception):
    """An index not read here: another version, a split one, a malformed one."""


def _walk(data: bytes | bytearray) -> Iterator[tuple[int, int, bytes]]:
    """(where it starts, its flags, its path) of each entry of a version-2 or -3 index;
    _Unread, once the entries are read, for anything else."""
    if len(data) < _HEADER.size + _SHA1:
        raise _Unread
    signature, version, count = _HEADER.unpack_from(data)
    if signature != b"DIRC" or version not in (2, 3):
        raise _Unread
    end = len(data) - _SHA1
    pos = _HEADER.size
    flags_at = struct.Struct(">H").unpack_from
    try:
        for _ in range(count):
            (flags,) = flags_at(data, pos + 60)
            start = pos + _FIXED + (2 if flags & _EXTENDED else 0)
            size = flags & _NAME_MAX
            stop = data.index(b"\0", start + size, end) if size == _NAME_MAX else start + size
            yield pos, flags, bytes(data[start:stop])
            pos += (stop - pos + 8) & ~7
        while pos + 8 <= end:  # extensions: "link" means the entries are elsewhere too
            signature, size = struct.unpack_from(">4sI", data, pos)
            if signature == b"link":
                raise _Unread
            pos += 8 + size
    except (struct.error, ValueError):
        raise _Unread from None
    if pos != end:
        raise _Unread
