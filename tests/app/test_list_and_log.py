"""`list` and `log`: the task's checkpoints with their status, and the operation log
newest first, a damaged line skipped."""

from __future__ import annotations

import re

from ..conftest import Repo
from ..helpers import REF1


def test_list(repo: Repo) -> None:
    assert repo.cp("list").stdout.strip() == "no checkpoints in task 'main'"
    repo.write("README.md", "1\n")
    repo.cp("save", "-m", "first")
    repo.write("u1.txt", "u\n")
    repo.write("u2.txt", "uu\n")
    repo.cp("save", "-m", "second")
    repo.cp("save", "--task", "other", "-m", "elsewhere")
    data = repo.cp_json("list")
    assert data["task"] == "main"
    rows = data["checkpoints"]
    assert [r["id"] for r in rows] == ["cp_001", "cp_002"]
    assert [r["message"] for r in rows] == ["first", "second"]
    assert [r["overlay_files"] for r in rows] == [0, 2]
    assert rows[1]["overlay_bytes"] == 5
    assert all(r["status"] == "candidate" for r in rows)
    assert rows[0]["commit"] == repo.git("rev-parse", REF1).strip()
    human = repo.cp("list").stdout.splitlines()
    assert len(human) == 2
    assert human[0].startswith("cp_001") and "first" in human[0]
    assert "+2 untracked" in human[1]
    every = repo.cp_json("list", "--all")["checkpoints"]
    assert sorted(r["name"] for r in every) == ["main/cp_001", "main/cp_002", "other/cp_001"]
    other = repo.cp_json("list", "--task", "other")["checkpoints"]
    assert [r["name"] for r in other] == ["other/cp_001"]


def test_log_newest_first(repo: Repo) -> None:
    assert repo.cp_json("log")["events"] == []
    repo.write("README.md", "1\n")
    repo.cp("save")
    repo.cp("save")  # unchanged: not an operation
    repo.write("README.md", "2\n")
    repo.cp("save")
    repo.cp("drop", "cp_001")
    events = repo.cp_json("log")["events"]
    assert [(e["op"], e["checkpoint"]) for e in events] == [
        ("drop", "cp_001"),
        ("save", "cp_002"),
        ("save", "cp_001"),
    ]
    for e in events:
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", e["at"])
    assert [e["op"] for e in repo.cp_json("log", "-n", "1")["events"]] == ["drop"]
    human = repo.cp("log").stdout.splitlines()
    assert len(human) == 3
    assert "drop" in human[0] and "cp_001" in human[0]
    assert "save" in human[2] and "cp_001" in human[2]


def test_log_skips_a_damaged_line(repo: Repo) -> None:
    repo.cp("save")
    log_file = repo.path / ".git" / "checkpoint" / "events.jsonl"
    with log_file.open("a") as fh:
        fh.write("{not json\n")
    repo.write("README.md", "2\n")
    repo.cp("save")
    events = repo.cp_json("log")["events"]
    assert [e["checkpoint"] for e in events] == ["cp_002", "cp_001"]
