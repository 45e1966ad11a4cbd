"""`review`: a task's timeline — checkpoints and attempts, statuses, verifier evidence,
forced promotions with reasons, diffstats against the rollback point and the previous
attempt — as text, markdown and JSON, touching nothing."""

from __future__ import annotations

from ..conftest import Repo
from ..helpers import state

AGENT = "echo $CHECKPOINT_ATTEMPT > answer.txt"


def run_loop(repo: Repo) -> None:
    repo.write(
        ".checkpoint.yaml", "verifiers:\n  - {name: answer, command: grep -q 2 answer.txt}\n"
    )
    repo.commit_all("config")
    repo.cp("run", "--attempts", "2", "--", "sh", "-c", AGENT)


def test_review_shows_attempts_against_rollback_and_previous(repo: Repo) -> None:
    run_loop(repo)
    before = state(repo)
    entries = repo.cp_json("review")["timeline"]["entries"]
    assert [(e["id"], e["kind"], e["status"]) for e in entries] == [
        ("cp_001", "rollback point", "candidate"),
        ("cp_002", "attempt 1", "rejected"),
        ("cp_004", "attempt 2", "promoted"),  # cp_003, the safety checkpoint, is hidden
    ]
    second = entries[2]
    assert second["against_rollback"] == {
        "against": "cp_001",
        "files": 1,
        "insertions": 1,
        "deletions": 0,
    }
    assert second["against_previous"]["against"] == "cp_002"
    assert (second["against_previous"]["insertions"], second["against_previous"]["deletions"]) == (
        1,
        1,
    )
    assert [(v["name"], v["status"]) for v in entries[1]["verifiers"]] == [("answer", "failed")]
    assert [(v["name"], v["status"]) for v in second["verifiers"]] == [("answer", "passed")]
    text = repo.cp("review").stdout
    assert "cp_002 [attempt 1]" in text and "verifier answer: failed (exit 1)" in text
    assert "1 file +1 -0 vs cp_001" in text
    # The first attempt's rollback point is its previous one too: said once.
    first = text[text.index("cp_002 [attempt 1]") : text.index("cp_004 [attempt 2]")]
    assert first.count("vs cp_001") == 1, first
    assert state(repo) == before  # a review touches nothing


def test_review_markdown_pastes_into_a_pull_request(repo: Repo) -> None:
    repo.write("a.txt", "x | y\n")
    repo.cp("save", "-m", "pipes | in | message")
    repo.cp("promote", "cp_001", "--force", "--reason", "hotfix approved by lead")
    md = repo.cp("review", "--format", "markdown").stdout.splitlines()
    assert md[0].startswith("### Checkpoints: task main")
    assert md[2] == "| checkpoint | kind | created | status | verifiers | changes | message |"
    row = md[4]
    assert row.startswith("| `cp_001` | checkpoint |") and "promoted" in row
    assert "pipes \\| in \\| message" in row  # a | in a cell does not break the table
    assert row.count(" | ") == 6
    assert any("hotfix approved by lead" in line for line in md if line.startswith("- `cp_001`"))
    assert repo.cp_json("review", "--format", "json")["timeline"]["entries"][0]["forced"][0][
        "reason"
    ] == ("hotfix approved by lead")


def test_review_of_an_unknown_task(repo: Repo) -> None:
    proc = repo.cp("review", "nope", expect=2)
    assert "no checkpoints in task 'nope'" in proc.stderr
    assert "bad task name" in repo.cp("review", "../x", expect=2).stderr
