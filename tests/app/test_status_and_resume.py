"""`status` and `resume`: drift since the last checkpoint, the task record (kept through a
restore), the last failing verifier and what resolved it, one JSON object each."""

from __future__ import annotations

import json

import pytest

from ..conftest import Repo
from ..helpers import configure, verifier


def test_status_and_drift(repo: Repo) -> None:
    configure(repo, verifier("unit", "true"))
    repo.cp("task", "set", "--hypothesis", "h1", "--next", "run the unit tests")
    repo.cp("verify")
    st = repo.cp_json("status")
    assert st["latest"] == "cp_001" and st["last_good"] == "cp_001"
    assert st["drift"] == [] and st["verifiers"] == {"unit": "passed"}
    assert st["next_move"] == "run the unit tests"
    repo.cp("status", "--exit-code")
    repo.write("src/app.py", "changed\n")
    proc = repo.cp("status", "--exit-code", expect=1)
    assert "drift since cp_001: 1 file\n" in proc.stdout and "src/app.py" in proc.stdout


def test_task_record_survives_restore(repo: Repo) -> None:
    repo.cp("save", "--hypothesis", "the cache key is wrong", "--next", "clear the cache")
    repo.write("src/app.py", "attempt\n")
    repo.cp("task", "set", "--hypothesis", "no, the key is fine; TTL is wrong")
    repo.cp("restore")
    brief = repo.cp("resume").stdout
    assert "hypothesis: no, the key is fine; TTL is wrong" in brief
    assert "next safe move: clear the cache" in brief
    manifest = repo.cp_json("show", "cp_001", "--manifest")["manifest"]
    assert manifest["hypothesis"] == "the cache key is wrong"


@pytest.mark.parametrize("cmd", [["status"], ["resume"], ["task", "set", "--next", "x"]])
def test_json_is_one_object(repo: Repo, cmd: list[str]) -> None:
    repo.cp("save")
    out = repo.cp(*cmd, "--json").stdout
    assert isinstance(json.loads(out), dict)


def test_resume_marks_a_failing_verifier_resolved(repo: Repo) -> None:
    repo.write(".checkpoint.yaml", "verifiers:\n  - {name: unit, command: 'test -f fixed'}\n")
    repo.commit_all("verifier")
    repo.cp("verify", expect=1)  # saves cp_001 and fails on it
    brief = repo.cp_json("resume")
    assert brief["last_failing_verifier"]["name"] == "unit"
    assert brief["last_failing_verifier_resolved_by"] is None
    assert "resolved" not in repo.cp("resume").stdout
    repo.write("fixed", "yes\n")
    repo.cp("verify")  # saves cp_002 and passes
    brief = repo.cp_json("resume")
    assert brief["last_failing_verifier_resolved_by"] == "cp_002"
    assert "last failing verifier: unit (exit 1 on cp_001), resolved: it passed on cp_002" in (
        repo.cp("resume").stdout
    )
