"""The operation log (`<common dir>/checkpoint/events.jsonl`, newest last) and the id
high-water marks (`ids.json`): local, unshared state of the whole repository."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..core.records import append_json_line, json_lines, now_iso, write_atomic
from ..gitcore.repo import Repo


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
    # refs without one (core.fsync leaves references out by default).
    write_atomic(path, json.dumps(data, indent=1, sort_keys=True).encode(), durable=False)
