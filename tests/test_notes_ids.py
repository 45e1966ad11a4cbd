"""Events alike to the second stay two events: each note line carries an `id`, so two
machines that ran the same verifier in the same second keep two lines when their notes
merge (`cat_sort_uniq` drops lines that are the same). test_sharing's round trip saw one
run instead of A's and B's once saves got faster."""

from __future__ import annotations

import pytest

from git_checkpoint.gitcore.repo import Repo as GitRepo
from git_checkpoint.storage import notes

from .conftest import Repo

EVENT = {"event": "verifier", "name": "unit", "status": "passed", "duration_s": 0.01}


def test_the_same_event_twice_is_two_lines(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(notes, "now_iso", lambda: "2026-12-01T00:00:00Z")
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
        {k: v for k, v in e.items() if k != "id"} == {"at": "2026-12-01T00:00:00Z", **EVENT}
        for e in events
    )
