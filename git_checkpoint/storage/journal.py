"""This worktree's record of its restores: the journal of the one in progress and the log
of the finished ones, both in the worktree's own git dir (`checkpoint/`).

They are the local evidence `undo` trusts: it goes back only to a safety checkpoint this
worktree made itself, never to one found under a ref (a fetched one may claim anything).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from ..core.errors import UsageError
from ..core.procs import running
from ..core.records import append_json_line, json_lines, now_iso, write_atomic
from ..fast import quickstate
from ..gitcore.repo import Repo

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    from typing import Any

    from .refs import Checkpoint


@dataclass(frozen=True)
class Journal:
    """A restore that has begun: what it goes to, and the way back."""

    target: str  # commit of the checkpoint being restored
    target_name: str
    safety: str  # commit of the safety checkpoint (the way back)
    safety_name: str
    head_from: str | None
    head_to: str | None
    move_head: bool
    started_at: str
    pid: int
    task: str = ""
    kind: str = "restore"  # restore, undo, continue
    # Safety checkpoints taken by `restore --continue` runs of this same restore.
    continued_from: tuple[str, ...] = ()
    continued_names: tuple[str, ...] = ()  # their names, in the same order
    # An interrupted restore this one stands in for (a rollback of a failed undo of it),
    # as its journal's JSON: left again once this one is done, whichever way.
    resume: str = ""
    # A restore of some paths only: those paths, and the checkpoint they come from (the
    # target above is built from it and the workspace; --continue builds it again).
    paths: tuple[str, ...] = ()
    paths_from: str = ""


_TYPES: dict[str, tuple[type, ...]] = {
    "target": (str,),
    "target_name": (str,),
    "safety": (str,),
    "safety_name": (str,),
    "head_from": (str, type(None)),
    "head_to": (str, type(None)),
    "move_head": (bool,),
    "started_at": (str,),
    "pid": (int,),
    "task": (str,),
    "kind": (str,),
    "continued_from": (list, tuple),
    "continued_names": (list, tuple),
    "resume": (str,),
    "paths": (list, tuple),
    "paths_from": (str,),
}


def _folder(repo: Repo) -> Path:
    folder = repo.git_dir / "checkpoint"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def journal_path(repo: Repo) -> Path:
    return _folder(repo) / "restore-journal.json"


def _from_json(data: Any) -> Journal:
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    known = {f.name for f in fields(Journal)}
    unknown = set(data) - known
    if unknown:
        raise ValueError(f"unknown fields {sorted(unknown)}")
    for name, value in data.items():
        if not isinstance(value, _TYPES[name]) or (name == "pid" and isinstance(value, bool)):
            raise ValueError(f"field {name!r} has the wrong type")
    for name in ("continued_from", "continued_names", "paths"):
        if name in data:
            if not all(isinstance(x, str) for x in data[name]):
                raise ValueError(f"field {name!r} has the wrong type")
            data = {**data, name: tuple(data[name])}
    if len(data.get("continued_from", ())) != len(data.get("continued_names", ())):
        raise ValueError("fields 'continued_from' and 'continued_names' do not match")
    return Journal(**data)


def resumed(journal: Journal | None) -> Journal | None:
    """The interrupted restore `journal` stands in for, if any."""
    if journal is None or not journal.resume:
        return None
    try:
        return _from_json(json.loads(journal.resume))
    except (ValueError, TypeError):
        return None  # (a journal we wrote: never expected)


def encoded(journal: Journal) -> str:
    return json.dumps(asdict(journal))


def read_journal(repo: Repo) -> Journal | None:
    path = journal_path(repo)
    try:
        with open(path, "rb") as fh:
            raw = fh.read(1 << 20)
        return _from_json(json.loads(raw))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError) as exc:
        raise UsageError(f"restore journal {path} is unreadable: {exc}") from None


def set_journal_aside(repo: Repo) -> None:
    path = journal_path(repo)
    path.replace(path.with_name(f"{path.name}.unreadable"))


def write_journal(repo: Repo, journal: Journal) -> None:
    write_atomic(journal_path(repo), json.dumps(asdict(journal), indent=1).encode())


def clear_journal(repo: Repo) -> None:
    journal_path(repo).unlink(missing_ok=True)


# --- an older checkpoint put in place for its verifiers ----------------------------------


def mark_in_place(repo: Repo, checkpoint: str, kept_in: Checkpoint) -> None:
    """A verify in place put `checkpoint` over the workspace, which is kept in `kept_in`;
    cleared once the workspace is put back (or a restore or undo chooses another)."""
    record = {
        "pid": os.getpid(),
        "checkpoint": checkpoint,
        "kept_in": kept_in.name,
        "kept_commit": kept_in.commit,
    }
    write_atomic(_folder(repo) / quickstate.IN_PLACE, json.dumps(record).encode())


def clear_in_place(repo: Repo) -> None:
    (_folder(repo) / quickstate.IN_PLACE).unlink(missing_ok=True)


def in_place_left(repo: Repo) -> str | None:
    """What a verify in place that was killed before it put the workspace back left,
    and the way back from there (None: there is none, it is still running, or it had
    put the workspace back)."""
    record = _in_place(repo)
    if record is None:
        return None
    if not record:
        return (
            "a verify in place left an unreadable record: the workspace may hold the "
            "checkpoint it verified; `git checkpoint list` names the safety checkpoint "
            "that keeps what was there before"
        )
    if record["pid"] != os.getpid() and running(record["pid"]):
        return None
    cut, kept_in = f"a verify of {record['checkpoint']} in place was killed", record["kept_in"]
    if quickstate.journal_pending(repo):  # killed while it put the workspace back
        return (
            f"{cut} while it put your work back: `git checkpoint restore --continue` "
            f"finishes that (your work is kept in {kept_in})"
        )
    records = restore_records(repo)
    if records and records[-1].target == record["kept_commit"]:
        return None  # it had put the workspace back
    return (
        f"{cut} before it put your work back: `git checkpoint restore {kept_in} "
        "--move-head` puts it back"
    )


def settle_in_place(repo: Repo, journal: Journal) -> None:
    """After a finished restore: a killed verify in place is settled by a restore of
    the whole workspace, unless it is an undo that did not bring back the work the
    verify kept (an undo of its interrupted putting back)."""
    if journal.kind in ("rollback", "verify") or journal.paths:
        return
    record = _in_place(repo)
    if record is None:
        return
    if journal.kind == "undo" and record and journal.target != record["kept_commit"]:
        return
    clear_in_place(repo)


def _in_place(repo: Repo) -> dict[str, Any] | None:
    """The in-place record: None when there is none, {} when it cannot be read."""
    try:
        record = json.loads((_folder(repo) / quickstate.IN_PLACE).read_bytes())
        return {
            "pid": int(record["pid"]),
            "checkpoint": str(record["checkpoint"]),
            "kept_in": str(record["kept_in"]),
            "kept_commit": str(record["kept_commit"]),
        }
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError, KeyError):
        return {}


# --- the log of finished restores ---------------------------------------------------------


@dataclass(frozen=True)
class RestoreRecord:
    """A finished restore of this worktree: `undo` goes back to `safety`."""

    at: str
    task: str
    kind: str
    target: str
    target_name: str
    safety: str
    safety_name: str
    head_before: str | None
    head_after: str | None


def _log_path(repo: Repo) -> Path:
    return _folder(repo) / "restores.jsonl"


def record_restore(repo: Repo, journal: Journal, head_after: str | None) -> None:
    record = RestoreRecord(
        at=now_iso(),
        task=journal.task,
        kind=journal.kind,
        target=journal.target,
        target_name=journal.target_name,
        safety=journal.safety,
        safety_name=journal.safety_name,
        head_before=journal.head_from,
        head_after=head_after,
    )
    append_json_line(_log_path(repo), asdict(record))


def restore_records(repo: Repo) -> list[RestoreRecord]:
    """This worktree's finished restores, oldest first; malformed lines are skipped."""
    try:
        with open(_log_path(repo), "rb") as fh:
            text = fh.read().decode("utf-8", "replace")
    except FileNotFoundError:
        return []
    out = []
    names = {f.name for f in fields(RestoreRecord)}
    for event in json_lines(text):
        if set(event) != names:
            continue
        if not all(isinstance(event[k], str) for k in names - {"head_before", "head_after"}):
            continue
        if not all(isinstance(event[k], str | None) for k in ("head_before", "head_after")):
            continue
        out.append(RestoreRecord(**event))
    return out
