"""The turn records the prompt hooks keep (`<git dir>/checkpoint/sessions/`) are read as
untrusted: sessions whose ids differ only in characters a file name cannot hold stay
apart, a damaged record never sends `restore --before-turn` to another checkpoint, one
prompt recorded twice is one turn, and a prompt made with GIT_DIR set records its turn
as any other. Driven with the payloads the real agents send."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ..conftest import Repo
from ..helpers import fingerprint, one_line_of

PAYLOADS = Path(__file__).parents[1] / "fixtures" / "agent_payloads"
SESSIONS = ".git/checkpoint/sessions"


def prompt(repo: Repo, session: str, env: dict[str, str] | None = None) -> str:
    text = (PAYLOADS / "claude-code" / "UserPromptSubmit.json").read_text()
    data: dict[str, Any] = json.loads(text.replace("__CWD__", str(repo.path)))
    data["session_id"] = session
    proc = subprocess.run(
        ["git-checkpoint-hook", "claude-code", "UserPromptSubmit"],
        input=json.dumps(data), capture_output=True, text=True, cwd=repo.path,
        env={**os.environ, **(env or {})}, check=True, timeout=60,
    )  # fmt: skip
    return proc.stderr


def sessions(repo: Repo) -> dict[str, int]:
    return {s["id"]: s["turns"] for s in repo.cp_json("list", "--sessions")["sessions"]}


def records(repo: Repo) -> Path:
    (found,) = (repo.path / SESSIONS).iterdir()
    return found


def test_session_ids_that_differ_only_in_unsafe_characters_stay_apart(repo: Repo) -> None:
    ids = ["a/b", "a_b", "a:b", "../../b"]
    for sid in ids:
        repo.write("app.txt", f"before {sid}'s first prompt\n")
        assert "checkpoint saved" in prompt(repo, sid)
    assert sessions(repo) == dict.fromkeys(ids, 1)
    assert len(list((repo.path / SESSIONS).iterdir())) == len(ids)
    assert sorted(p.name for p in repo.path.parent.iterdir()) == ["work"]  # nothing above
    repo.write("app.txt", "later\n")
    repo.cp("restore", "--before-turn", "1", "--session", "a_b")
    assert (repo.path / "app.txt").read_text() == "before a_b's first prompt\n"


@pytest.mark.parametrize("damage", ["no checkpoint", "not an id"])
def test_a_damaged_turn_record_never_restores_another_checkpoint(repo: Repo, damage: str) -> None:
    sid = "5275b130-8f49-4dba-9697-33dc174bb284"
    repo.write("app.txt", "before turn 1\n")
    prompt(repo, sid)
    repo.write("app.txt", "before turn 2\n")
    prompt(repo, sid)
    repo.write("app.txt", "now\n")
    path = records(repo)
    first, second = path.read_text().splitlines()
    record = json.loads(first)
    if damage == "no checkpoint":
        del record["ref"], record["commit"]
    else:
        record.update(ref="refs/heads/main", commit="HEAD")
    path.write_text(f"{json.dumps(record)}\n{second}\n")
    before = fingerprint(repo.path)
    proc = repo.cp("restore", "--before-turn", "1", expect=2)
    assert "turn 1" in one_line_of(proc)
    assert fingerprint(repo.path) == before


def test_one_prompt_recorded_twice_is_one_turn(repo: Repo) -> None:
    sid = "01a24ae7-d451-7ac0-a4a5-cb46207696ea"
    repo.write("app.txt", "before turn 1\n")
    prompt(repo, sid)
    path = records(repo)
    path.write_text(path.read_text() * 2)  # as two hooks of one prompt write it at once
    repo.write("app.txt", "before turn 2\n")
    prompt(repo, sid)
    assert sessions(repo) == {sid: 2}
    proc = repo.cp("restore", "--before-turn", "3", expect=2)
    assert "has turns 1 to 2, not 3" in one_line_of(proc)


def test_a_prompt_with_git_dir_set_records_its_turn(repo: Repo) -> None:
    sid = "8c4601ce-36ed-4913-84c8-c1bd016778d7"
    env = {"GIT_DIR": str(repo.path / ".git"), "GIT_WORK_TREE": str(repo.path)}
    repo.write("app.txt", "before turn 1\n")
    assert "checkpoint saved" in prompt(repo, sid, env)
    repo.write("app.txt", "before turn 2\n")
    prompt(repo, sid, env)
    assert sessions(repo) == {sid: 2}
    repo.write("app.txt", "now\n")
    repo.cp("restore", "--before-turn", "1")
    assert (repo.path / "app.txt").read_text() == "before turn 1\n"
