"""Verifier evidence in git notes: each note line carries an `id`, so two machines that
ran the same verifier in the same second keep two lines when their notes merge
(`cat_sort_uniq` drops lines that are the same); lines without an `id` read as before,
never show in human output, and survive a push and a fetch; a broken notes ref is one
line."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from git_checkpoint.gitcore.repo import Repo as GitRepo
from git_checkpoint.storage import notes

from ..conftest import Repo
from ..launcher import REAL_GIT

EVENT = {"event": "verifier", "name": "unit", "status": "passed", "duration_s": 0.01}


def test_the_same_event_twice_is_two_lines(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(notes, "now_iso_precise", lambda: "2026-12-01T00:00:00.000000Z")
    repo.cp("save", "-m", "one")
    commit = repo.git("rev-parse", "refs/checkpoints/main/cp_001").strip()
    found = GitRepo.discover(repo.path)
    notes.append_event(found, commit, dict(EVENT))  # machine A
    repo.git("update-ref", "refs/notes/a", notes.NOTES_REF)
    repo.git("update-ref", "-d", notes.NOTES_REF)
    notes.append_event(GitRepo.discover(repo.path), commit, dict(EVENT))  # machine B
    repo.git(
        "notes", f"--ref={notes.NOTES_REF}", "merge", "-q", "-s", "cat_sort_uniq", "refs/notes/a"
    )
    events = notes.read_events(GitRepo.discover(repo.path), commit)
    assert len(events) == 2 and events[0]["id"] != events[1]["id"]
    assert all(
        {k: v for k, v in e.items() if k != "id"} == {"at": "2026-12-01T00:00:00.000000Z", **EVENT}
        for e in events
    )


def test_events_of_one_second_keep_their_order_when_the_merge_sorts_the_lines(
    repo: Repo,
) -> None:
    """A merged note's lines are sorted, not in the order they were written: two events of
    one second (a verify here, a reviewer's verify fetched) are still read oldest first."""
    repo.cp("save", "-m", "one")
    commit = repo.git("rev-parse", "refs/checkpoints/main/cp_001").strip()
    found = GitRepo.discover(repo.path)
    written = [notes.append_event(found, commit, {**EVENT, "name": f"v{i}"}) for i in range(8)]
    lines = sorted(json.dumps(e, sort_keys=True) for e in written)  # as cat_sort_uniq leaves them
    repo.git("notes", f"--ref={notes.NOTES_REF}", "add", "-f", "-m", "\n".join(lines), commit)
    read = notes.read_events(GitRepo.discover(repo.path), commit)
    assert [e["name"] for e in read] == [f"v{i}" for i in range(8)]


def _old_lines(repo: Repo, commit: str, *events: Any) -> None:
    """Note lines without an `id`, as earlier versions of the tool wrote them."""
    text = "".join(json.dumps(e, sort_keys=True) + "\n" for e in events)
    repo.git("notes", f"--ref={notes.NOTES_REF}", "add", "-f", "-m", text.rstrip("\n"), commit)


def test_old_lines_without_id_mixed_with_new_ones(repo: Repo) -> None:
    repo.cp("save", "-m", "one")
    commit = repo.git("rev-parse", "refs/checkpoints/main/cp_001").strip()
    at = "2026-01-01T00:00:00Z"
    verifier = {"at": at, "event": "verifier", "name": "unit", "status": "failed",
                "exit_code": 1, "duration_s": 0.5, "where": "here", "required": True,
                "command": "false", "output_tail": ""}  # fmt: skip
    _old_lines(repo, commit, verifier, {"at": at, "event": "rejected", "reason": "old"})
    record = notes.append_event(
        GitRepo.discover(repo.path), commit, {"event": "promoted", "rule": "manual"}
    )
    assert len(record["id"]) == 12
    events = notes.read_events(GitRepo.discover(repo.path), commit)
    assert [e.get("event") for e in events] == ["verifier", "rejected", "promoted"]
    assert notes.derive_status(events) == "promoted"
    assert notes.verifier_summary(events) == {"unit": "failed"}
    shown = repo.cp_json("show", "cp_001")
    assert shown["status"] == "promoted"
    listed = repo.cp_json("list")["checkpoints"]
    assert [c["status"] for c in listed] == ["promoted"]
    human = repo.cp("show", "cp_001").stdout + repo.cp("list").stdout
    human += repo.cp("review", expect=None).stdout + repo.cp("status", expect=None).stdout
    assert record["id"] not in human


def test_old_and_new_lines_survive_a_push_and_fetch(repo: Repo, tmp_path: Path) -> None:
    origin = tmp_path / "origin.git"
    subprocess.run([REAL_GIT, "init", "-q", "--bare", str(origin)], check=True)
    repo.git("remote", "add", "origin", str(origin))
    repo.cp("save", "-m", "one")
    commit = repo.git("rev-parse", "refs/checkpoints/main/cp_001").strip()
    old = {"at": "2026-01-01T00:00:00Z", "event": "rejected", "reason": "old"}
    _old_lines(repo, commit, old)
    repo.cp("push", "origin", expect=None)
    new = notes.append_event(GitRepo.discover(repo.path), commit, {"event": "promoted"})
    repo.cp("push", "origin", expect=None)
    repo.cp("fetch", "origin", expect=None)
    repo.cp("push", "origin", expect=None)  # twice round: nothing doubles
    text = repo.git("notes", f"--ref={notes.NOTES_REF}", "show", commit)
    lines = [json.loads(x) for x in text.splitlines() if x.strip()]
    assert old in lines and new in lines
    assert len(lines) == len({json.dumps(x, sort_keys=True) for x in lines})


def test_a_broken_notes_ref_is_one_line(repo: Repo) -> None:
    repo.cp("save")
    junk = repo.git("hash-object", "-w", "--stdin", input=b"not a notes commit\n").strip()
    repo.git("update-ref", "refs/notes/checkpoints", junk)
    proc = repo.cp("list", expect=4)
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
