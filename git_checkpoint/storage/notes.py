"""Mutable checkpoint state: JSON Lines events in `refs/notes/checkpoints` (design.md §3).

One self-contained JSON object per line, so notes fetched from several machines merge
with `git notes merge -s cat_sort_uniq`; status is derived from the events, in the order
this repository saw them: an event is dated by its `at`, except that a fetched one dated
after the fetch that brought it (another machine's clock, or a forged date) counts as
seen at that fetch, so it never outranks what this repository records later.
"""

from __future__ import annotations

import json
import os

from ..core.errors import GitFailed
from ..core.records import append_json_line, json_lines, now_iso_precise
from ..gitcore.formats import EXECUTABLE_MODE, FILE_MODE, SYMLINK_MODE
from ..gitcore.repo import Repo

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    from typing import Any

NOTES_REF = "refs/notes/checkpoints"
# Fetched events dated after their fetch: {"event": <its line, canonical>, "seen": <when>}.
SEEN_LATE = "notes-seen.jsonl"


def _note_text(repo: Repo, commit: str) -> str:
    import pygit2

    try:
        return str(repo.odb.lookup_note(commit, NOTES_REF).message)
    except KeyError:
        return ""
    except (pygit2.GitError, ValueError) as exc:  # the notes ref points at something odd
        raise GitFailed([f"notes --ref={NOTES_REF}", "show"], 128, str(exc)) from None


def read_events(repo: Repo, commit: str) -> list[dict[str, Any]]:
    """The events on a checkpoint in the order this repository saw them, oldest first;
    lines that are not JSON objects skipped."""
    events = json_lines(_note_text(repo, commit))
    seen = _seen_late(repo)

    def when(event: dict[str, Any]) -> str:
        at = str(event.get("at", ""))
        if seen and at > seen.earliest:
            return min(at, seen.at.get(_canonical(event), at))
        return at

    events.sort(key=when)
    return events


def _canonical(event: dict[str, Any]) -> str:
    return json.dumps(event, sort_keys=True, ensure_ascii=False)


class _SeenLate:
    def __init__(self, at: dict[str, str]) -> None:
        self.at = at
        self.earliest = min(at.values(), default="")


def _seen_late(repo: Repo) -> _SeenLate | None:
    """The fetched events dated after their fetch, read once per file version."""
    path = repo.state_dir() / SEEN_LATE
    try:
        st = os.stat(path)
    except OSError:
        return None
    stamp = (st.st_mtime_ns, st.st_size, st.st_ino)
    cached = repo.__dict__.get("_seen_late")
    if cached is not None and cached[0] == stamp:
        return cached[1]  # type: ignore[no-any-return]
    at: dict[str, str] = {}
    for record in json_lines(path.read_text(encoding="utf-8", errors="replace")):
        event, when = record.get("event"), record.get("seen")
        if isinstance(event, str) and isinstance(when, str):
            at.setdefault(event, when)
    found = _SeenLate(at) if at else None
    repo.__dict__["_seen_late"] = (stamp, found)
    return found


def record_fetched(repo: Repo, before: str | None, after: str | None) -> int:
    """A fetch is merging the notes commit `after` into `before`: remember, for each
    event it brings that is dated later than now, that it was seen now. Returns how
    many. Reads only the notes that differ."""
    if after is None or after == before:
        return 0
    import pygit2

    odb = repo.odb
    now = now_iso_precise()
    new_tree = odb[after].peel(pygit2.Tree)
    changed: list[tuple[Any, Any]]
    if before is None:
        changed = [(None, blob) for blob in _blobs(new_tree)]
    else:
        old_tree = odb[before].peel(pygit2.Tree)
        changed = [
            (d.old_file.id if _is_note(d.old_file.mode) else None, d.new_file.id)
            for d in old_tree.diff_to_tree(new_tree).deltas
            if _is_note(d.new_file.mode)
        ]
    late = []
    for old, new in changed:
        had: set[str] = set()
        if old is not None:
            had = set(odb[old].read_raw().decode("utf-8", "replace").splitlines())
        for line in odb[new].read_raw().decode("utf-8", "replace").splitlines():
            if line in had:
                continue
            for event in json_lines(line):
                if str(event.get("at", "")) > now:
                    late.append({"event": _canonical(event), "seen": now})
    for record in late:
        append_json_line(repo.state_dir() / SEEN_LATE, record)
    return len(late)


def _blobs(tree: Any) -> list[Any]:
    """Every blob id below a notes tree (notes may sit in fan-out folders)."""
    import pygit2

    out = []
    for entry in tree:
        if entry.type == pygit2.GIT_OBJECT_TREE:
            out.extend(_blobs(entry))
        elif _is_note(entry.filemode):
            out.append(entry.id)
    return out


def _is_note(mode: int) -> bool:
    """Whether a notes tree entry of this mode can be a note: a blob (a fetched notes
    tree may hold a submodule entry, naming an object that is not here)."""
    return mode in (FILE_MODE, EXECUTABLE_MODE, SYMLINK_MODE)


def append_event(repo: Repo, commit: str, event: dict[str, Any]) -> dict[str, Any]:
    """Append one event line to the checkpoint's note (callers hold the lock)."""
    import pygit2

    # `at` to the microsecond: the merged note's lines are sorted (cat_sort_uniq), so
    # their times alone must order two events of one second. `id`: two runs alike to
    # the microsecond (two machines, one verifier) stay two lines when the merge drops
    # lines that are the same.
    record = {"at": now_iso_precise(), "id": os.urandom(6).hex(), **event}
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
