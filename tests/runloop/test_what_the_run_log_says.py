"""The run log says what the loop did to the workspace and where things are: a branch
moved back (and where the attempt's commits are kept), an attempt that repeated an
earlier one (its evidence stands, recorded once), the feedback file by its path; and a
failing verifier is shown with its last lines wherever its result is shown."""

from __future__ import annotations

import json
from pathlib import Path

from ..conftest import Repo
from ..helpers import configure, verifier


def test_an_attempt_that_committed_is_moved_off_the_branch_and_said(repo: Repo) -> None:
    configure(repo, verifier("unit", "test -f fixed"))
    before = repo.git("rev-parse", "HEAD").strip()
    agent = "echo work > work.txt && git add work.txt && git commit -qm 'agent commit'"
    proc = repo.cp("run", "--attempts", "1", "--", "sh", "-c", agent, expect=1)
    agent_commit = repo.git("rev-parse", "refs/checkpoints/main/cp_002^1").strip()
    assert agent_commit != before
    said = (
        f"head: moved main back from {agent_commit[:12]} to {before[:12]}; "
        f"the attempt's commits ({agent_commit[:12]}) are kept in cp_002"
    )
    assert said in proc.stdout
    assert repo.git("rev-parse", "HEAD").strip() == before
    assert "agent commit" in repo.git("log", "--format=%s", "refs/checkpoints/main/cp_002")


def test_an_attempt_that_repeats_an_earlier_one_is_recorded_once(repo: Repo) -> None:
    configure(repo, verifier("unit", "test -f fixed"))
    proc = repo.cp("run", "--attempts", "2", "--", "sh", "-c", "echo same > try.txt", expect=1)
    log = proc.stdout
    assert "checkpoint saved: cp_002 (attempt 1)" in log
    assert "unchanged since cp_002" in log
    assert "checkpoint saved: cp_002 (attempt 2)" not in log
    assert "attempt 2 changed nothing that attempt 1 had not" in log
    assert log.count("verifier: unit") == 1
    notes = repo.git(
        "notes", "--ref=refs/notes/checkpoints", "show", "refs/checkpoints/main/cp_002"
    )
    events = [json.loads(line) for line in notes.splitlines() if line.strip()]
    assert [e["event"] for e in events].count("verifier") == 1
    review = repo.cp("review").stdout
    assert review.count("unit") == 1, review
    assert not (repo.path / "try.txt").exists()  # rolled back after each attempt


def test_the_next_action_names_the_feedback_file(repo: Repo) -> None:
    configure(repo, verifier("unit", "false"))
    proc = repo.cp("run", "--attempts", "2", "--", "sh", "-c", "echo $RANDOM > n.txt", expect=1)
    line = next(x for x in proc.stdout.splitlines() if x.startswith("next action: attempt 2"))
    path = Path(line.rsplit("see ", 1)[1])
    assert path.is_file() and json.loads(path.read_text())["task"] == "main"


def test_verify_and_show_print_the_failing_verifiers_last_lines(repo: Repo) -> None:
    configure(repo, verifier("unit", "printf 'collecting\\nE   assert 1 == 2\\n'; exit 1"))
    repo.write("src/app.py", "print('changed')\n")
    proc = repo.cp("verify", expect=1)
    assert "verifier: unit" in proc.stdout and "its last lines:" in proc.stdout
    assert "  | E   assert 1 == 2" in proc.stdout
    shown = repo.cp("show", "@").stdout
    assert "  | E   assert 1 == 2" in shown


def test_verifier_names_from_notes_never_reach_the_terminal_raw(repo: Repo) -> None:
    repo.cp("save", "-m", "one")
    event = {"event": "verifier", "name": "unit\x1b[2K", "status": "failed\x1b]0;x\x07",
             "exit_code": 1, "output_tail": "boom\x1b[31m"}  # fmt: skip
    repo.git(
        "notes", "--ref=refs/notes/checkpoints", "add", "-m", json.dumps(event),
        "refs/checkpoints/main/cp_001",
    )  # fmt: skip
    for args in (("show", "cp_001"), ("status",), ("resume",)):
        out = repo.cp(*args).stdout
        assert "\x1b" not in out and "\x07" not in out, (args, out)


def test_the_attempt_is_quoted_as_a_shell_would_and_a_pass_ends_with_a_summary(
    repo: Repo,
) -> None:
    configure(repo, verifier("unit", "grep -q b a.txt"))
    proc = repo.cp("run", "--attempts", "2", "--", "sh", "-c", "echo b >> a.txt")
    lines = proc.stdout.splitlines()
    assert "attempt 1/2: sh -c 'echo b >> a.txt'" in lines
    assert lines[-1] == "done: cp_002 promoted after 1 attempt; the workspace is cp_002"


def test_each_rollback_is_in_the_operation_log(repo: Repo) -> None:
    configure(repo, verifier("unit", "test -f fixed"))
    proc = repo.cp("run", "--attempts", "2", "--", "sh", "-c", "echo $$ > try.txt", expect=1)
    assert "all 2 attempts failed; workspace is at cp_001" in proc.stdout
    events = repo.cp_json("log")["events"]
    rollbacks = [e for e in events if e["op"] == "rollback"]
    assert [(e["attempt"], e["checkpoint"]) for e in reversed(rollbacks)] == [
        (1, "cp_001"),
        (2, "cp_001"),
    ]
    assert all(e["safety"].startswith("main/cp_") for e in rollbacks)
    assert "rollback" in repo.cp("log").stdout


def test_one_failed_attempt_is_said_in_the_singular(repo: Repo) -> None:
    configure(repo, verifier("unit", "test -f fixed"))
    proc = repo.cp("run", "--attempts", "1", "--", "true", expect=1)
    assert "the attempt failed; workspace is at cp_001" in proc.stdout
