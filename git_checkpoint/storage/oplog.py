"""Local, unshared state under `<git common dir>/checkpoint/`: the lock, the operation
log (`events.jsonl`) and the id high-water marks. (The restore journal belongs to one
work tree, so it lives in that worktree's git dir: `restore.py`.)
"""

from __future__ import annotations

import contextlib
import datetime as dt
import fcntl
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..core.errors import Refused, UsageError
from ..fast import prescan as early
from ..gitcore import maintenance
from ..gitcore import repo as gitio
from ..gitcore.repo import Repo


@contextlib.contextmanager
def locked(repo: Repo, timeout: float) -> Iterator[None]:
    """Hold the repository's checkpoint lock; wait up to `timeout` seconds, then refuse.
    Once it is released after the work went through, git's auto maintenance runs if the
    objects written pass git's thresholds (maintenance.py), as after git's own commit."""
    path = repo.state_dir() / "lock"
    adopted = early.adopt_lock(str(path))  # taken before the early scan, for this command
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644) if adopted is None else adopted
    try:
        deadline = time.monotonic() + timeout
        while adopted is None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    holder = _read_holder(path)
                    raise Refused(
                        f"another git-checkpoint is running{holder}; waited {timeout:g}s for {path}"
                    ) from None
                time.sleep(0.05)
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        gitio.INHERITED_FDS.append(fd)
        try:
            yield
        finally:
            gitio.INHERITED_FDS.remove(fd)
    finally:
        os.close(fd)  # closing releases the flock (once no git child holds it either)
    maintenance.after(repo)


def lock_holder(repo: Repo) -> int | None:
    """The pid holding the checkpoint lock right now, or None when it is free (a
    journal left with a free lock is an interrupted restore, not one in progress).
    """
    path = repo.state_dir() / "lock"
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        held = _read_holder(path).strip(" ()pid")
        return int(held) if held.isdigit() else -1
    finally:
        os.close(fd)
    return None


def _read_holder(path: Path) -> str:
    try:
        pid = path.read_text().strip()
    except OSError:
        return ""
    return f" (pid {pid})" if pid else ""


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


def log_event(repo: Repo, op: str, **fields: Any) -> None:
    """Append one line to the operation log."""
    append_json_line(repo.state_dir() / "events.jsonl", {"at": now_iso(), "op": op, **fields})


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


def read_events_log(repo: Repo) -> list[dict[str, Any]]:
    path = repo.state_dir() / "events.jsonl"
    try:
        return json_lines(path.read_text(encoding="utf-8", errors="replace"))
    except FileNotFoundError:
        return []


def _ids_path(repo: Repo) -> Path:
    return repo.state_dir() / "ids.json"


def read_high_water(repo: Repo, task: str) -> int:
    """The highest id number ever handed out for the task (ids are never reused)."""
    try:
        data = json.loads(_ids_path(repo).read_text())
    except (OSError, ValueError):
        return 0
    value = data.get(task, 0) if isinstance(data, dict) else 0
    return value if isinstance(value, int) else 0


def write_high_water(repo: Repo, task: str, number: int) -> None:
    path = _ids_path(repo)
    try:
        data = json.loads(path.read_text())
        if not isinstance(data, dict):
            data = {}
    except (OSError, ValueError):
        data = {}
    if data.get(task, 0) >= number:
        return
    data[task] = number
    # No fsync: the mark counts beside the refs (the next id passes both), and git writes
    # refs without one (core.fsync leaves references out by default). 1.4 ms a save.
    write_atomic(path, json.dumps(data, indent=1, sort_keys=True).encode(), durable=False)


def write_atomic(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Replace `path` with `data` in one rename; `durable`: on disk before the rename."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "wb") as fh:
        fh.write(data)
        if durable:
            fh.flush()
            os.fsync(fh.fileno())
    os.replace(tmp, path)
