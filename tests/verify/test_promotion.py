"""Verifiers and promotion: passing required verifiers promote, a failing one rejects,
an optional one counts under `all_pass`; `promote` needs evidence or --force with a
reason; the last good checkpoint follows; the promoted checkpoint holds what the
verifiers saw, and `verify` says which checkpoint it saved."""

from __future__ import annotations

import json

from ..conftest import Repo
from ..helpers import configure, note_events, verifier


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
    assert {"name": "unit", "status": "passed", "output_tail": ""} in shown["verifiers"]
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


def test_promoted_checkpoint_holds_what_the_verifiers_saw(repo: Repo) -> None:
    configure(repo, verifier("c", "grep -q good src/app.py && echo generated > src/app.py"))
    out = repo.cp("run", "--attempts", "1", "--", "sh", "-c", "echo good > src/app.py").stdout
    assert "warning: the verifiers changed the workspace" in out
    promoted = next(line for line in out.splitlines() if line.startswith("promoted: "))
    cp_id = promoted.split()[-1]
    assert repo.git("show", f"refs/checkpoints/main/{cp_id}:src/app.py") == "good\n"


def test_all_pass_rejects_on_an_optional_failure(repo: Repo) -> None:
    repo.write(
        ".checkpoint.yaml",
        "promotion_rule: all_pass\nverifiers:\n  - {name: a, command: 'true'}\n"
        "  - {name: o, command: 'false', required: false}\n",
    )
    repo.commit_all("all_pass")
    repo.cp("verify", expect=1)
    assert repo.cp_json("show", "@")["status"] == "rejected"


def test_last_good_follows_promotion_and_rejection(repo: Repo) -> None:
    configure(repo, verifier("a", "test ! -f broken"))
    repo.cp("save")
    repo.cp("promote", "cp_001", "--force", "--reason", "checked by hand")
    assert repo.cp_json("status")["last_good"] == "cp_001"
    repo.write("broken", "x\n")
    repo.git("add", "broken")
    repo.git("commit", "-qm", "break")
    repo.cp("verify", "cp_001", expect=0)  # verified in a worktree of cp_001: still good
    assert repo.cp_json("status")["last_good"] == "cp_001"
    repo.cp("save")
    repo.cp("verify", "cp_002", expect=1)
    assert repo.cp_json("promote", "cp_002", expect=1)["status"] == "rejected"


def test_verify_without_a_checkpoint_says_which_it_saved(repo: Repo) -> None:
    repo.write(".checkpoint.yaml", "verifiers:\n  - {name: unit, command: 'true'}\n")
    repo.commit_all("verifier")
    out = repo.cp("verify").stdout.splitlines()
    assert out[0] == "checkpoint saved: cp_001"
    assert out[-1] == "status: main/cp_001 promoted"
    assert repo.cp("verify").stdout.splitlines()[0] == "unchanged since cp_001"
    repo.write("src/app.py", "print(3)\n")
    proc = repo.cp("verify", "--json")
    assert "checkpoint saved: cp_002" in proc.stderr
    assert json.loads(proc.stdout)["saved"] is True
    assert repo.cp_json("verify", "cp_001")["saved"] is None  # named: nothing saved
