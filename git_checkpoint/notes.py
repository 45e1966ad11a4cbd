"""Mutable checkpoint state: JSON Lines events in `refs/notes/checkpoints` (design.md §3).

One self-contained JSON object per line, so notes fetched from several machines merge
with `git notes merge -s cat_sort_uniq`; status is derived from the events.
"""

from __future__ import annotations

import json
from typing import Any

from .errors import GitFailed
from .gitio import Repo
from .manifest import now_iso
from .state import json_lines

NOTES_REF = "refs/notes/checkpoints"


def read_events(repo: Repo, commit: str) -> list[dict[str, Any]]:
    """The JSON Lines note on a checkpoint; lines that are not JSON objects are skipped."""
    import pygit2

    try:
        note = repo.odb.lookup_note(commit, NOTES_REF)
        text = str(note.message)
    except KeyError:
        return []
    except (pygit2.GitError, ValueError) as exc:  # the notes ref points at something odd
        raise GitFailed([f"notes --ref={NOTES_REF}", "show"], 128, str(exc)) from None
    events = json_lines(text)
    events.sort(key=lambda e: str(e.get("at", "")))
    return events


def append_event(repo: Repo, commit: str, event: dict[str, Any]) -> dict[str, Any]:
    """Append one event line to the checkpoint's note (callers hold the lock)."""
    import pygit2

    record = {"at": now_iso(), **event}
    try:
        text = str(repo.odb.lookup_note(commit, NOTES_REF).message).rstrip("\n")
    except KeyError:
        text = ""
    line = json.dumps(record, sort_keys=True, ensure_ascii=False)
    body = f"{text}\n{line}\n" if text else f"{line}\n"
    try:
        who = repo.odb.default_signature
    except (KeyError, pygit2.GitError):
        who = pygit2.Signature("git-checkpoint", "git-checkpoint@localhost")
    repo.odb.create_note(body, who, who, commit, NOTES_REF, True)
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


def verifier_summary(events: list[dict[str, Any]]) -> dict[str, str]:
    """The latest result of each verifier: name -> passed / failed / error."""
    latest: dict[str, str] = {}
    for event in events:
        if event.get("event") == "verifier" and isinstance(event.get("name"), str):
            latest[event["name"]] = str(event.get("status", "unknown"))
    return latest
