"""The doctor's round trip runs under a task of its own that leaves nothing behind: no
refs, no task record, no id mark, no line in the operation log. It saves through the one
save sequence in a temporary worktree."""

from __future__ import annotations

import json
import time

import pytest

from ..conftest import Repo


def state(repo: Repo) -> dict[str, object]:
    folder = repo.path / ".git/checkpoint"
    events = (folder / "events.jsonl").read_text() if (folder / "events.jsonl").exists() else ""
    ids = json.loads((folder / "ids.json").read_text()) if (folder / "ids.json").exists() else {}
    tasks = (
        sorted(p.name for p in (folder / "tasks").glob("*")) if (folder / "tasks").exists() else []
    )
    return {
        "refs": repo.git("for-each-ref", "--format=%(refname) %(objectname)"),
        "events": events,
        "tasks": tasks,
        "ids": ids,
        "worktrees": repo.git("worktree", "list", "--porcelain"),
        "quick": sorted(p.name for p in (folder / "quick").glob("*")),
    }


@pytest.fixture
def saved(repo: Repo) -> Repo:
    repo.write(".checkpoint.yaml", "retention: {keep_last: 1, auto: true}\n")
    repo.commit_all("config")
    repo.write("src/app.py", "print('work')\n")
    time.sleep(1.1)
    repo.cp("save", "-m", "mine")
    return repo


def test_no_refs_records_log_lines_or_worktrees(saved: Repo) -> None:
    before = state(saved)
    saved.cp("doctor")
    after = state(saved)
    for key in ("refs", "events", "tasks", "worktrees", "quick"):
        assert after[key] == before[key], key


def test_no_id_marks_either(saved: Repo) -> None:
    before = state(saved)
    saved.cp("doctor")
    assert state(saved)["ids"] == before["ids"]
