"""Small records on disk: the clock every record is stamped with, atomic replacement of
a file, JSON Lines (one object a line, appended whole by concurrent writers), and the
bounded read of a file anyone could have replaced (a FIFO, a link to /dev/zero)."""

from __future__ import annotations

import datetime as dt
import errno
import json
import os
import stat
from pathlib import Path

from .errors import UsageError

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    from typing import Any


def now() -> dt.datetime:
    """The current time (UTC). GIT_CHECKPOINT_NOW fixes it, for tests only: an ISO 8601
    time like 2026-01-15T12:00:00Z, or seconds since the epoch.
    """
    fixed = os.environ.get("GIT_CHECKPOINT_NOW", "").strip()
    if fixed:
        try:
            if fixed.lstrip("@").isdigit():
                return dt.datetime.fromtimestamp(int(fixed.lstrip("@")), dt.UTC)
            stamp = dt.datetime.fromisoformat(fixed.replace("Z", "+00:00"))
            return stamp.astimezone(dt.UTC) if stamp.tzinfo else stamp.replace(tzinfo=dt.UTC)
        except (ValueError, OverflowError, OSError):
            raise UsageError(
                f"GIT_CHECKPOINT_NOW={fixed!r}: expected a time like 2026-01-15T12:00:00Z"
            ) from None
    return dt.datetime.now(dt.UTC)


def now_iso() -> str:
    return now().strftime("%Y-%m-%dT%H:%M:%SZ")


def now_iso_precise() -> str:
    """The current time to the microsecond: for records whose order is read back from
    their times alone, where a second would tie."""
    return now().strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def to_the_second(at: str) -> str:
    """A record's time as people read it: `2026-01-15T12:00:00.123456Z` → `…:00Z`."""
    head, dot, tail = at.partition(".")
    return f"{head}Z" if dot and tail.endswith("Z") and tail[:-1].isdigit() else at


def append_json_line(path: Path, record: dict[str, Any]) -> None:
    """One JSON object as one line; O_APPEND keeps concurrent lines whole."""
    line = (json.dumps(record, ensure_ascii=False, sort_keys=False) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def json_lines(text: str) -> list[dict[str, Any]]:
    """The JSON objects of a JSON Lines text; other lines (torn, foreign) are skipped."""
    out: list[dict[str, Any]] = []
    for line in text.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict):
            out.append(event)
    return out


def write_atomic(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Replace `path` with `data` in one rename; `durable`: on disk before the rename."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        if durable:
            fh.flush()
            os.fsync(fh.fileno())
    os.replace(tmp, path)


def read_regular_file(path: Path, max_bytes: int) -> bytes | None:
    """The bytes of `path` if it is a regular file, None if there is nothing there.

    Never through a symlink, never from a FIFO, device or folder, never more than
    `max_bytes`: a checkpoint can put anything at `.checkpoint.yaml`, and every command
    reads it first. Anything else is a one-line UsageError.
    """
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)  # O_NONBLOCK: opening a FIFO must not wait for a writer
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UsageError(f"{path}: is a symbolic link; it must be a regular file") from None
        raise UsageError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UsageError(f"{path}: not a regular file; remove it or replace it with one")
        chunks: list[bytes] = []
        size = 0
        while size <= max_bytes and (chunk := os.read(fd, max_bytes + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
        if size > max_bytes:
            raise UsageError(f"{path}: larger than {max_bytes} bytes; is it the right file?")
        return b"".join(chunks)
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror}") from None
    finally:
        os.close(fd)
