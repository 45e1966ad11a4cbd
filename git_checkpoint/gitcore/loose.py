"""Loose objects written as git writes them: the trees the save's graft computes
itself, and the checkpoints' commits (Repo.store_trees and Repo.commit_tree use it;
nothing else).

The graft already has each new tree's bytes and id (it checks git's answers against
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
import re
import struct
import zlib
from collections.abc import Iterable, Mapping

from .formats import object_id, sha1

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
    """Store each tree (id -> body)."""
    write_objects(objects_dir, b"tree", trees)


def write_commit(objects_dir: str | os.PathLike[str], body: bytes) -> str:
    """Store a commit; its id."""
    oid = object_id(b"commit", body)
    write_objects(objects_dir, b"commit", {oid: body})
    return oid


def write_pack(
    objects_dir: str | os.PathLike[str], kind: int, objects: Mapping[str, bytes]
) -> bool:
    """Store objects of one kind (git's type number: 2 for a tree; id -> body) as one
    pack and its index, as index-pack writes them (Documentation/gitformat-pack.txt:
    pack version 2 without deltas, index version 2), the pack renamed into place first,
    read-only. False for a pack past 2 GiB (its index would need 64-bit offsets)."""
    parts = [b"PACK", struct.pack(">II", 2, len(objects))]
    offset = 12
    entries: list[tuple[bytes, int, int]] = []  # (raw id, crc32 of its bytes, offset)
    for oid, body in objects.items():
        size = len(body)
        byte, size = (kind << 4) | (size & 0x0F), size >> 4
        header = bytearray()
        while size:
            header.append(byte | 0x80)
            byte, size = size & 0x7F, size >> 7
        header.append(byte)
        packed = bytes(header) + zlib.compress(body, _LOOSE_LEVEL)
        entries.append((bytes.fromhex(oid), zlib.crc32(packed), offset))
        parts.append(packed)
        offset += len(packed)
    if offset >= 1 << 31:
        return False
    data = b"".join(parts)
    checksum: bytes = sha1(data).digest()
    entries.sort()
    fanout = [0] * 256
    for raw, _, _ in entries:
        fanout[raw[0]] += 1
    for n in range(1, 256):
        fanout[n] += fanout[n - 1]
    index = b"".join(
        [
            b"\377tOc",
            struct.pack(">I", 2),
            struct.pack(">256I", *fanout),
            *(raw for raw, _, _ in entries),
            *(struct.pack(">I", crc) for _, crc, _ in entries),
            *(struct.pack(">I", at) for _, _, at in entries),
            checksum,
        ]
    )
    index_sum: bytes = sha1(index).digest()
    folder = os.path.join(objects_dir, "pack")
    name = os.path.join(folder, f"pack-{checksum.hex()}")
    # Both written before either is renamed (a full disk stops it with neither in
    # place); the index renamed last: git looks for it.
    pack = _write_temp(folder, data + checksum, "tmp_pack")
    try:
        idx = _write_temp(folder, index + index_sum, "tmp_idx")
    except BaseException:
        _remove(pack)
        raise
    had = os.path.exists(f"{name}.pack")  # (the same objects, packed before)
    try:
        os.replace(pack, f"{name}.pack")
        os.replace(idx, f"{name}.idx")
    except BaseException:
        _remove(pack)
        _remove(idx)
        if not had and not os.path.exists(f"{name}.idx"):
            _remove(f"{name}.pack")  # never a pack without its index
        raise
    return True


def _write_new(folder: str, path: str, data: bytes, prefix: str) -> None:
    """A read-only file written under a temporary name in `folder` (as git names its
    own: `prefix`_...) and renamed into place."""
    tmp = _write_temp(folder, data, prefix)
    try:
        os.replace(tmp, path)
    except BaseException:
        _remove(tmp)
        raise


def _write_temp(folder: str, data: bytes, prefix: str) -> str:
    """A read-only file of `data` under a temporary name in `folder`; its path."""
    tmp = os.path.join(folder, f"{prefix}_{os.getpid()}_{os.urandom(4).hex()}")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
    except BaseException:
        _remove(tmp)
        raise
    return tmp


def write_objects(
    objects_dir: str | os.PathLike[str], kind: bytes, objects: Mapping[str, bytes]
) -> None:
    """Store each object (id -> body) of one kind. An object there already is left as it
    is, its date renewed (git's freshening: a concurrent prune keeps it)."""
    for oid, body in objects.items():
        folder = os.path.join(objects_dir, oid[:2])
        path = os.path.join(folder, oid[2:])
        try:
            os.utime(path)
            continue
        except OSError:  # not there; or not ours to renew, and git then writes it again
            pass
        os.makedirs(folder, exist_ok=True)
        data = zlib.compress(b"%s %d\0" % (kind, len(body)) + body, _LOOSE_LEVEL)
        _write_new(folder, path, data, "tmp_obj")


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


# Commits: what `git commit-tree` writes, when the identity is plain to see.
# A signature, an encoding header, an identity only from config (git refuses $EMAIL then).
_GIT_CHOOSES = ("commit.gpgsign", "i18n.commitencoding", "user.useconfigonly")
_CRUD = "".join(chr(c) for c in range(33)) + ".,:;<>\"\\'"


def commit_body(
    config: Iterable[tuple[str, str]], tree: str, parents: list[str], message: str
) -> bytes | None:
    """The commit `git commit-tree` would write now, or None where git decides more
    (a date or signature asked for, an identity it would have to guess or clean)."""
    if not usable(config) or len(set(parents)) != len(parents):
        return None  # (git drops a parent named twice, with a warning)
    values: dict[str, str] = {}
    for key, value in config:
        if key in _GIT_CHOOSES:
            return None
        values[key] = value  # the last one counts, as in git
    author = _ident(values, "AUTHOR", "author")
    committer = _ident(values, "COMMITTER", "committer")
    if author is None or committer is None:
        return None
    authored, committed = _date("GIT_AUTHOR_DATE"), _date("GIT_COMMITTER_DATE")
    if authored is None or committed is None:
        return None
    head = f"tree {tree}\n" + "".join(f"parent {p}\n" for p in parents)
    head += f"author {author} {authored}\ncommitter {committer} {committed}\n\n"
    return (head + message).encode("utf-8")


_EPOCH_DAY = 719163  # datetime.date(1970, 1, 1).toordinal()
_ISO_DATE = re.compile(r"(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(Z|[+-]\d{4})", re.ASCII)
_RAW_DATE = re.compile(r"@(\d{1,10}) ([+-]\d{4})", re.ASCII)
_LAST = 4102444800  # 2100-01-01, where git's calendar ends (tm_to_time_t); later: git


def _date(env: str) -> str | None:
    """`<seconds> <zone>` as git would write it: now, or the environment's date in one of
    two exact forms (ISO 8601 with its zone, git's own `@<seconds> <zone>`); None for
    any other form, which git parses."""
    import time

    text = os.environ.get(env)
    if text is None:
        now = int(time.time())
        offset = time.localtime(now).tm_gmtoff
        minutes = abs(offset) // 60  # as git's local_tzoffset: seconds of a zone dropped
        return f"{now} {'-' if offset < 0 else '+'}{minutes // 60:02d}{minutes % 60:02d}"
    found = _RAW_DATE.fullmatch(text) or _ISO_DATE.fullmatch(text)
    if not found:
        return None
    zone = found.groups()[-1]
    zone = "+0000" if zone in ("Z", "-0000") else zone  # git writes no negative zero
    if int(zone[1:3]) >= 24 or int(zone[3:5]) >= 60:
        return None  # git ignores such a zone, or reads it its own way
    if found.re is _RAW_DATE:
        return f"{int(found[1])} {zone}" if int(found[1]) < _LAST else None
    import datetime  # (the save path has it loaded already)

    year, month, day, hour, minute, second = (int(found[i]) for i in range(1, 7))
    if not (1970 <= year <= 2099 and 1 <= month <= 12 and hour < 24 and minute < 60):
        return None  # git has its own view of those
    try:
        days = datetime.date(year, month, day).toordinal() - _EPOCH_DAY
    except ValueError:  # no such day in that month
        return None
    if second >= 60:
        return None
    sign = -1 if zone[0] == "-" else 1
    offset = sign * (int(zone[1:3]) * 3600 + int(zone[3:5]) * 60)
    at = days * 86400 + hour * 3600 + minute * 60 + second - offset
    return f"{at} {zone}" if 0 <= at < _LAST else None  # (before 1970: git wraps it)


def _ident(values: Mapping[str, str], env: str, role: str) -> str | None:
    """`Name <email>` as git's fmt_ident finds it (environment, <role>.*, user.*,
    $EMAIL), or None when it would fall back to a guess or clean what it found."""
    name = os.environ.get(f"GIT_{env}_NAME")
    if name is None:
        name = values.get(f"{role}.name") or values.get("user.name")
    email = os.environ.get(f"GIT_{env}_EMAIL")
    if email is None:
        email = values.get(f"{role}.email") or values.get("user.email") or os.environ.get("EMAIL")
    for part in (name, email):
        if not part or part.strip(_CRUD) != part or any(c in part for c in "<>\n\ufffd"):
            return None  # (U+FFFD: config that was not UTF-8, read with errors="replace")
        if not part.isascii():
            try:  # bytes of the environment that are not UTF-8: git re-encodes them
                part.encode("utf-8")
            except UnicodeEncodeError:
                return None
    return f"{name} <{email}>"
