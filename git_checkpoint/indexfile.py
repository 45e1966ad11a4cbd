"""The few index files graft.py reads and writes itself, in git's version-2 format.

The graft adds a handful of changed files to a small scratch index seeded with their own
entries, so that `git update-index --add` applies every rule `git add` would. Writing
that seed here and reading the result back saves two git processes per save
(`update-index --index-info` and `ls-files -s`). Only the plain case is read: an index
in another version, or one git split (core.splitIndex), answers None, and the caller
asks `ls-files` instead.

Format (Documentation/gitformat-index.txt): "DIRC", version, entry count; each entry's
stat data, mode, object id, flags and NUL-padded path, sorted by path; extensions; the
SHA-1 of everything before it.
"""

from __future__ import annotations

import struct
from collections.abc import Mapping

try:  # CPython's own SHA-1: hashlib's OpenSSL start-up costs the hook path 2 ms
    from _sha1 import sha1  # type: ignore[import-not-found,unused-ignore]
except ImportError:  # pragma: no cover - another Python
    from hashlib import sha1

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
    if len(data) < _HEADER.size + _SHA1:
        return None
    signature, version, count = _HEADER.unpack_from(data)
    if signature != b"DIRC" or version not in (2, 3):
        return None
    end = len(data) - _SHA1
    out: dict[str, tuple[str, str]] = {}
    pos = _HEADER.size
    try:
        for _ in range(count):
            mode = _STAT.unpack_from(data, pos)[6]
            (flags,) = struct.unpack_from(">H", data, pos + 60)
            if flags & _STAGE:
                return None
            start = pos + _FIXED + (2 if flags & _EXTENDED else 0)
            stop = data.index(b"\0", start, end)
            name = data[start:stop].decode("utf-8", "surrogateescape")
            out[name] = (f"{mode:o}", data[pos + 40 : pos + 60].hex())
            pos += (stop - pos + 8) & ~7
        while pos + 8 <= end:  # extensions: "link" means the entries are elsewhere too
            signature, size = struct.unpack_from(">4sI", data, pos)
            if signature == b"link":
                return None
            pos += 8 + size
    except (struct.error, ValueError):
        return None
    return out if pos == end else None
