"""Mutable checkpoint state: JSON Lines events in `refs/notes/checkpoints` (design.md §3).

One self-contained JSON object per line, so notes fetched from several machines merge
with `git notes merge -s cat_sort_uniq`; status is derived from the events.
"""

from __future__ import annotations

import json
import os
from typing import Any

from ..core.errors import GitFailed
from ..core.records import json_lines, now_iso
from ..gitcore.repo import Repo

NOTES_REF = "refs/notes/checkpoints"


def _note_text(repo: Repo, commit: str) -> str:
    import pygit2

    try:
        return str(repo.odb.lookup_note(commit, NOTES_REF).message)
    except KeyError:
        return ""
    except (pygit2.GitError, ValueError) as exc:  # the notes ref points at something odd
        raise GitFailed([f"notes --ref={NOTES_REF}", "show"], 128, str(exc)) from None


def read_events(repo: Repo, commit: str) -> list[dict[str, Any]]:
    """The events on a checkpoint, oldest first; lines that are not JSON objects skipped."""
    events = json_lines(_note_text(repo, commit))
    events.sort(key=lambda e: str(e.get("at", "")))
    return events


def append_event(repo: Repo, commit: str, event: dict[str, Any]) -> dict[str, Any]:
    """Append one event line to the checkpoint's note (callers hold the lock)."""
    import pygit2

    # `id`: two runs alike to the second (two machines, one verifier) stay two lines
    # when cat_sort_uniq merges the notes, which drops lines that are the same.
    record = {"at": now_iso(), "id": os.urandom(6).hex(), **event}
    text = _note_text(repo, commit).rstrip("\n")
    line = json.dumps(record, sort_keys=True, ensure_ascii=False)
    body = f"{text}\n{line}\n" if text else f"{line}\n"
    try:
        who = repo.odb.default_signature
    except (KeyError, pygit2.GitError):
        who = pygit2.Signature("git-checkpoint", "git-checkpoint@localhost")
    try:
        repo.odb.create_note(body, who, who, commit, NOTES_REF, True)
    except (pygit2.GitError, ValueError) as exc:
        raise GitFailed([f"notes --ref={NOTES_REF}", "add"], 128, str(exc)) from None
    return record


def derive_status(events: list[dict[str, Any]]) -> str:
    status = "candidate"
    for event in events:
        kind = event.get("event")
        if kind in ("promoted", "forced_promotion"):
            status = "promoted"
        elif kind == "rejected":
            status = "rejected"
    return status


def latest_results(events: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The latest `verifier` event of each verifier, by name."""
    latest: dict[str, dict[str, Any]] = {}
    for event in events:
        if event.get("event") == "verifier" and isinstance(event.get("name"), str):
            latest[event["name"]] = event
    return latest


def verifier_summary(events: list[dict[str, Any]]) -> dict[str, str]:
    """The latest result of each verifier: name -> passed / failed / error."""
    return {name: str(e.get("status", "unknown")) for name, e in latest_results(events).items()}
