"""A reviewer's evidence travels back: a machine that verified a checkpoint fetched from
a remote sends its notes back with a plain `git checkpoint push` (the checkpoints are
there already: only notes go), and the machine that made the checkpoint fetches them and
reviews both machines' runs, each with who ran it."""

from __future__ import annotations

from pathlib import Path

from ..conftest import Repo
from ..servers import bare_repo, clone, publish, remote_refs

REVIEWER = {"GIT_COMMITTER_NAME": "Rita Reviewer", "GIT_COMMITTER_EMAIL": "rita@example.com"}


def test_a_reviewers_verify_goes_back_with_a_plain_push(repo: Repo, tmp_path: Path) -> None:
    url = bare_repo(tmp_path / "server.git").as_uri()
    a = publish(repo, url)
    a.write("src/app.py", "print('fixed')\n")
    a.cp("save", "-m", "the fix")
    a.cp("verify")
    a.cp("push")
    refs_before = remote_refs(a)

    b = clone(url, tmp_path / "b")
    b.cp("fetch")
    b.cp("verify", "origin/main/cp_001", env=REVIEWER)
    proc = b.cp("push")  # B has no checkpoint of its own in task main
    assert proc.stdout.splitlines() == [
        "pushed the notes of 1 checkpoint, merged into origin's: main/cp_001"
    ]
    refs_after = remote_refs(a)
    assert refs_after.pop("refs/notes/checkpoints") != refs_before.pop("refs/notes/checkpoints")
    assert refs_after == refs_before  # no checkpoint ref made or moved: only the notes
    assert b.cp("push").stdout.strip() == "origin is up to date"  # nothing new to send

    a.cp("fetch")
    runs = a.cp_json("review")["timeline"]["entries"][0]["verifiers"]
    assert [(r["name"], r["status"], r["by"], r["where"]) for r in runs] == [
        ("unit", "passed", "Test Committer <committer@example.com>", "workspace"),
        ("unit", "passed", "Rita Reviewer <rita@example.com>", "temporary worktree"),
    ]
    text = a.cp("review").stdout
    assert "verifier unit: passed by Rita Reviewer <rita@example.com> in temporary worktree" in (
        text
    )
    markdown = a.cp("review", "--format", "markdown").stdout
    assert "| unit passed by Test Committer; unit passed by Rita Reviewer |" in markdown
    assert "- unit passed by Rita Reviewer \\<rita@example.com\\> in temporary worktree" in (
        markdown  # escaped: no raw HTML
    )


def test_evidence_for_another_task_and_a_named_push(repo: Repo, tmp_path: Path) -> None:
    """Every checkpoint fetched from the remote sends its notes back, whatever its task;
    a push that names checkpoints sends only theirs."""
    url = bare_repo(tmp_path / "server.git").as_uri()
    a = publish(repo, url)
    a.write("src/app.py", "print('one')\n")
    a.cp("save", "--task", "fix-card", "-m", "card")
    a.cp("push", "--task", "fix-card")

    b = clone(url, tmp_path / "b")
    b.write("notes.txt", "b's own\n")
    b.cp("save", "-m", "b's work")
    b.cp("fetch")
    b.cp("promote", "origin/fix-card/cp_001", "--force", "--reason", "read it", env=REVIEWER)
    proc = b.cp("push", "origin", "main/cp_001")  # named: only that one, and its notes
    assert "pushed 1 checkpoint to origin: main/cp_001" in proc.stdout
    assert "notes" not in proc.stdout
    proc = b.cp("push")  # the current task (main), and the evidence on fix-card
    assert "already on origin: main/cp_001" in proc.stdout
    assert "pushed the notes of 1 checkpoint, merged into origin's: fix-card/cp_001" in (
        proc.stdout
    )
    a.cp("fetch")
    forced = a.cp_json("review", "fix-card")["timeline"]["entries"][0]["forced"]
    assert [(f["by"], f["reason"]) for f in forced] == [
        ("Rita Reviewer <rita@example.com>", "read it")
    ]


def test_nothing_to_push_and_no_evidence_is_still_an_error(repo: Repo, tmp_path: Path) -> None:
    url = bare_repo(tmp_path / "server.git").as_uri()
    a = publish(repo, url)
    a.write("src/app.py", "print('one')\n")
    a.cp("save")
    a.cp("push")
    b = clone(url, tmp_path / "b")
    b.cp("fetch")  # fetched, but B recorded nothing on it: no note of B's to send
    proc = b.cp("push", expect=2)
    assert "task 'main' has no checkpoints to push" in proc.stderr
