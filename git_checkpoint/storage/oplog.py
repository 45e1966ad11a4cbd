"""The operation log (`<common dir>/checkpoint/events.jsonl`, newest last) and the id
high-water marks (`ids.json`): local, unshared state of the whole repository."""

from __future__ import annotations

import json
from pathlib import Path

from ..core.records import append_json_line, json_lines, now_iso, write_atomic
from ..gitcore.repo import Repo

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    from typing import Any


def log_event(repo: Repo, op: str, **fields: Any) -> None:
    """Append one line to the operation log."""
    append_json_line(repo.state_dir() / "events.jsonl", {"at": now_iso(), "op": op, **fields})


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


def _high_waters(repo: Repo) -> dict[str, object]:
    try:
        data = json.loads(_ids_path(repo).read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def forget_high_water(repo: Repo, task: str) -> None:
    """Drop a task's mark: only for a task that never was one (the doctor's probe)."""
    data = _high_waters(repo)
    if data.pop(task, None) is not None:
        write_atomic(_ids_path(repo), json.dumps(data, indent=1, sort_keys=True).encode())


def write_high_water(repo: Repo, task: str, number: int) -> None:
    path = _ids_path(repo)
    data = _high_waters(repo)
    mark = data.get(task, 0)
    if isinstance(mark, int) and mark >= number:
        return
    data[task] = number
    # No fsync: the mark counts beside the refs (the next id passes both), and git writes
    # refs without one (core.fsync leaves references out by default).
    write_atomic(path, json.dumps(data, indent=1, sort_keys=True).encode(), durable=False)
