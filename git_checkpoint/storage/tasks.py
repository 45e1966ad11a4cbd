"""The resumable task record (design.md §8): `checkpoint/tasks/<task>.yaml`.

It lives outside every checkpoint, so a restore never rewinds it: the reasoning of a
failed attempt survives the rollback.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path

from ..core import yamltext
from ..core.anytype import Any
from ..core.errors import UsageError
from ..core.records import now_iso, read_regular_file, write_atomic
from ..core.text import kept
from ..gitcore.repo import Repo
from .commits import NOTE_MAX, dump_yaml
from .notes import derive_status, read_events
from .refs import Checkpoint

# typing is not imported at run time: the protocol is for the type checker
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Protocol

    class Failure(Protocol):
        """A failed verifier's result, as a verification hands it over."""

        @property
        def name(self) -> str: ...
        @property
        def exit_code(self) -> int | None: ...
        @property
        def output_tail(self) -> str: ...


@dataclass(frozen=True)
class FailingVerifier:
    """The task's last failing verifier, as the task record keeps it."""

    name: str
    exit_code: int | None
    output_tail: str
    checkpoint: str | None = None
    at: str | None = None


@dataclass(frozen=True)
class TaskRecord:
    """The resumable task record: what a rollback never rewinds."""

    task: str
    hypothesis: str | None = None
    next_move: str | None = None
    last_failing_verifier: FailingVerifier | None = None
    attempts: int = 0
    last_good_checkpoint: str | None = None
    rollback_point: str | None = None
    updated_at: str | None = None
    history: tuple[dict[str, Any], ...] = field(default_factory=tuple)


def _path(repo: Repo, task: str) -> Path:
    return repo.state_dir() / "tasks" / f"{task}.yaml"


TASK_MAX_BYTES = 1024 * 1024  # ours keep 20 history entries and 2,000-byte tails


def load_task(repo: Repo, task: str) -> TaskRecord:
    try:  # a regular file only: a FIFO or a link to /dev/zero would never end
        raw = read_regular_file(_path(repo, task), TASK_MAX_BYTES)
        data = _parsed(raw.decode("utf-8")) if raw is not None else None
    except (UsageError, ValueError):  # ValueError: not UTF-8, or not YAML
        return TaskRecord(task=task)
    if not isinstance(data, dict):
        return TaskRecord(task=task)
    known = {f.name for f in fields(TaskRecord)}
    values = {k: v for k, v in data.items() if k in known}
    failing = values.get("last_failing_verifier")
    if isinstance(failing, dict):
        fv_known = {f.name for f in fields(FailingVerifier)}
        try:
            values["last_failing_verifier"] = FailingVerifier(
                **{k: v for k, v in failing.items() if k in fv_known}
            )
        except TypeError:
            values["last_failing_verifier"] = None
    else:
        values["last_failing_verifier"] = None
    values["history"] = tuple(h for h in values.get("history") or () if isinstance(h, dict))
    values["task"] = task
    try:
        return TaskRecord(**values)
    except TypeError:
        return TaskRecord(task=task)


def _parsed(text: str) -> Any:
    """The record's data: as this tool writes it, read without PyYAML; else by PyYAML (a
    record written before, or edited by hand). ValueError when it is not YAML."""
    data = yamltext.load(text)
    if data is not None:
        return data
    import yaml

    try:
        return yaml.safe_load(text)
    except (yaml.YAMLError, RecursionError) as exc:
        raise ValueError(str(exc)) from None


def _kept(text: str | None) -> str | None:
    return kept(text, NOTE_MAX)[0] if isinstance(text, str) else None


def save_task(repo: Repo, record: TaskRecord) -> TaskRecord:
    """Write the record; its free text as a checkpoint would keep it (the callers said
    what they cut: save, `task set`)."""
    record = replace(
        record,
        hypothesis=_kept(record.hypothesis),
        next_move=_kept(record.next_move),
        updated_at=now_iso(),
        history=record.history[-20:],
    )
    path = _path(repo, record.task)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, dump_yaml(asdict(record)).encode())
    return record


def update_task(repo: Repo, task: str, **changes: Any) -> TaskRecord:
    return save_task(repo, replace(load_task(repo, task), **changes))


def note_verification(
    repo: Repo, task: str, checkpoint: str, failing: Failure | None, status: str
) -> TaskRecord:
    """Fold a verification into the record: the failure it saw, or the new last good point."""
    record = load_task(repo, task)
    if failing is not None:
        record = replace(
            record,
            last_failing_verifier=FailingVerifier(
                name=failing.name,
                exit_code=failing.exit_code,
                output_tail=failing.output_tail[-2000:],
                checkpoint=checkpoint,
                at=now_iso(),
            ),
        )
    if status == "promoted":
        record = replace(record, last_good_checkpoint=checkpoint)
    elif status == "rejected" and record.last_good_checkpoint == checkpoint:
        record = replace(record, last_good_checkpoint=None)  # new evidence against it
    return save_task(repo, record)


def last_good(repo: Repo, record: TaskRecord, history: list[Checkpoint]) -> str | None:
    """The task's last good checkpoint: the newest of its history that its notes call
    promoted (evidence fetched from another machine included), where that is newer than
    the one the record names (a local promotion or verify wrote it); else the record's."""
    for cp in reversed(history):
        if cp.id == record.last_good_checkpoint:
            break
        if derive_status(read_events(repo, cp.commit)) == "promoted":
            return cp.id
    return record.last_good_checkpoint
