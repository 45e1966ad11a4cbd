"""Verifiers, notes, promotion, status and resume, with real subprocesses."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import Repo
from .helpers import state

PY = sys.executable


def configure(repo: Repo, *verifiers: str, commit: bool = True) -> None:
    repo.write(".checkpoint.yaml", "verifiers:\n" + "".join(verifiers))
    if commit:
        repo.commit_all("configure verifiers")


def verifier(name: str, command: str, required: bool = True, timeout: float = 60) -> str:
    return (
        f"  - name: {name}\n    command: {json.dumps(command)}\n"
        f"    required: {'true' if required else 'false'}\n    timeout: {timeout}\n"
    )


def note_events(repo: Repo, ref: str) -> list[dict[str, object]]:
    text = repo.git("notes", "--ref=checkpoints", "show", ref)
    return [json.loads(line) for line in text.splitlines()]  # every line must be JSON


def test_passing_verifiers_promote(repo: Repo) -> None:
    configure(repo, verifier("unit", "test -f README.md"), verifier("lint", "true", required=False))
    proc = repo.cp("verify")
    assert "verifier: unit" in proc.stdout and "passed" in proc.stdout
    assert "promoted" in proc.stdout
    events = note_events(repo, "refs/checkpoints/main/cp_001")
    kinds = [e["event"] for e in events]
    assert kinds == ["verifier", "verifier", "promoted"]
    assert all("at" in e for e in events)
    unit = events[0]
    assert unit["name"] == "unit" and unit["exit_code"] == 0 and unit["status"] == "passed"
    assert isinstance(unit["duration_s"], float)
    shown = repo.cp_json("show", "cp_001")
    assert shown["status"] == "promoted"
    assert shown["checkpoint_id"] == "cp_001"
    assert {"name": "unit", "status": "passed"} in shown["verifiers"]
    assert shown["promotion_rule"] == "all_required_pass"
    assert "created_before_step" in shown and "on_failure" in shown
    listed = repo.cp_json("list")["checkpoints"][0]
    assert listed["status"] == "promoted" and listed["verifiers"]["unit"] == "passed"


def test_failing_required_verifier_rejects(repo: Repo) -> None:
    configure(repo, verifier("unit", "echo boom; exit 3"), verifier("opt", "true", required=False))
    proc = repo.cp("verify", expect=1)
    assert "failed (exit 3)" in proc.stdout
    events = note_events(repo, "refs/checkpoints/main/cp_001")
    assert events[0]["exit_code"] == 3 and "boom" in str(events[0]["output_tail"])
    assert events[-1]["event"] == "rejected"
    assert repo.cp_json("show", "cp_001")["status"] == "rejected"
    # the task record learned which verifier failed
    brief = repo.cp_json("resume")
    assert brief["last_failing_verifier"]["name"] == "unit"
    assert brief["last_failing_verifier"]["exit_code"] == 3


def test_optional_failure_still_promotes(repo: Repo) -> None:
    configure(repo, verifier("unit", "true"), verifier("smoke", "false", required=False))
    repo.cp("verify")
    assert repo.cp_json("show", "@")["status"] == "promoted"


def test_seed_single_verifier_form(repo: Repo) -> None:
    repo.write(".checkpoint.yaml", "verifier:\n  command: exit 1\n")
    repo.commit_all("seed form")
    repo.cp("verify", expect=1)
    assert repo.cp_json("show", "@")["status"] == "rejected"


def test_hanging_verifier_is_killed_with_its_children(repo: Repo) -> None:
    pidfile = repo.path.parent / "child.pid"
    command = f"sleep 300 & echo $! > {pidfile}; sleep 300"
    configure(repo, verifier("hang", command, timeout=1))
    started = time.monotonic()
    proc = repo.cp("verify", expect=1)
    assert time.monotonic() - started < 15
    assert "error (timeout)" in proc.stdout
    child = int(pidfile.read_text())
    time.sleep(0.2)
    status = Path(f"/proc/{child}/status")
    assert not status.exists() or "zombie" in status.read_text()
    event = note_events(repo, "refs/checkpoints/main/cp_001")[0]
    assert event["status"] == "error" and event["error"] == "timeout"


def test_verifier_printing_50_mb_stays_bounded(repo: Repo) -> None:
    configure(repo, verifier("loud", "head -c 100000000 /dev/zero | tr '\\0' x; exit 1"))
    # Measured in a fresh process of its own: RUSAGE_CHILDREN of the test worker would
    # hold the peak of every earlier test's children too.
    probe = (
        "import resource, subprocess, sys\n"
        "subprocess.run(['git-checkpoint', 'verify'], capture_output=True, check=False)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=repo.path, capture_output=True, text=True, check=True
    ).stdout
    peak_kib = int(out.strip())
    assert peak_kib < 100_000, f"peak RSS {peak_kib} KiB"
    note = repo.git("notes", "--ref=checkpoints", "show", "refs/checkpoints/main/cp_001")
    assert len(note) < 20_000
    assert "bytes cut" in note


def test_verifying_an_older_checkpoint_leaves_the_workspace_alone(repo: Repo) -> None:
    configure(repo, verifier("old", "grep -q old value.txt && test -f untracked.txt"))
    repo.write("value.txt", "old\n")
    repo.write("untracked.txt", "overlay\n")
    repo.cp("save", "-m", "old")
    repo.write("value.txt", "new\n")
    (repo.path / "untracked.txt").unlink()
    repo.write("scratch.txt", "agent scratch\n")
    before = state(repo)
    worktrees = repo.git("worktree", "list")
    proc = repo.cp("verify", "cp_001")
    assert "temporary worktree" in proc.stdout
    assert state(repo) == before
    assert repo.git("worktree", "list") == worktrees
    event = note_events(repo, "refs/checkpoints/main/cp_001")[0]
    assert event["where"] == "temporary worktree" and event["status"] == "passed"


def test_unknown_verifier_and_no_verifiers(repo: Repo) -> None:
    repo.cp("save")
    proc = repo.cp("verify", expect=2)
    assert "no verifiers configured" in proc.stderr
    configure(repo, verifier("unit", "true"))
    proc = repo.cp("verify", "--verifier", "nope", expect=2)
    assert "unknown verifier 'nope'" in proc.stderr


def test_promote_needs_evidence_and_force_is_recorded(repo: Repo) -> None:
    configure(repo, verifier("unit", "false"))
    repo.cp("save", "-m", "x")
    proc = repo.cp("promote", "cp_001", expect=1)
    assert "unit (not run)" in proc.stdout
    repo.cp("promote", "cp_001", "--force", expect=2)  # --force needs a reason
    repo.cp("verify", "cp_001", expect=1)
    proc = repo.cp("promote", "cp_001", expect=1)
    assert "unit (failed)" in proc.stdout
    repo.cp("promote", "cp_001", "--force", "--reason", "flaky CI, checked by hand")
    forced = note_events(repo, "refs/checkpoints/main/cp_001")[-1]
    assert forced["event"] == "forced_promotion"
    assert forced["reason"] == "flaky CI, checked by hand"
    assert "Test Committer" in str(forced["by"])
    assert repo.cp_json("show", "cp_001")["status"] == "promoted"


def test_promote_with_evidence(repo: Repo) -> None:
    configure(repo, verifier("unit", "true"))
    repo.cp("save")
    repo.cp("verify", "cp_001")
    assert repo.cp_json("promote", "cp_001")["status"] == "promoted"


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
    assert "drift since cp_001: 1 files" in proc.stdout and "src/app.py" in proc.stdout


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


def test_demo_runs(tmp_path: object) -> None:
    proc = subprocess.run(
        ["git", "checkpoint", "demo"], capture_output=True, text=True, check=False, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "verifier: unit" in out and "failed (exit 1)" in out
    assert "workspace matches" in out
    assert "promoted: cp_004" in out
    # wrong once, then right: the second attempt's fix runs, not a stale bytecode cache
    assert "demo done: cp_004 promoted after 2 attempts" in out
    assert "attempt 3/3" not in out
