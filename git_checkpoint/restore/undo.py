"""`undo`: back over the last restore made in this worktree, to the safety checkpoint it
recorded itself (storage/journal.py: never one found under a ref, which a fetched
checkpoint could claim); after an interrupted restore, to before it."""

from __future__ import annotations

from dataclasses import replace

from ..config.model import Config
from ..core.errors import UsageError
from ..fast.prescan import Prescan
from ..gitcore.repo import Repo
from ..storage.journal import RestoreRecord, read_journal, restore_records, set_journal_aside
from .carry import recorded
from .report import RestoreReport
from .run import restore_to


def _last_record(repo: Repo, task: str | None) -> RestoreRecord:
    records = [r for r in restore_records(repo) if task is None or r.task == task]
    if not records:
        scope = f" for task {task!r}" if task else ""
        raise UsageError(f"nothing to undo: no restore was made in this worktree{scope}")
    return records[-1]


def undo(
    repo: Repo,
    config: Config,
    task: str,
    *,
    only_task: str | None = None,
    move_head: bool = False,
    keep_head: bool = False,
    prescan: Prescan | None = None,
) -> RestoreReport:
    """Go back over the last restore made in this worktree (or `only_task`'s), to the
    safety checkpoint it recorded itself; after an interrupted restore, to before it.
    HEAD goes back too when it is where that restore left it; otherwise undo asks.
    `prescan`: the launcher's early scan, for the safety snapshot.
    """
    try:
        journal = read_journal(repo)
    except UsageError:  # unreadable: set it aside; the last finished restore is the way back
        set_journal_aside(repo)
        journal = None
    head, _ = repo.head()
    if journal is not None:
        target = recorded(repo, journal.safety, journal.safety_name, journal.task or task)
        undoes = f"the interrupted {journal.kind} of {journal.target_name} ({journal.started_at})"
        left_by_it: str | None = journal.head_to if journal.move_head else journal.head_from
        owner = journal.task or task
    else:
        record = _last_record(repo, only_task)
        target = recorded(repo, record.safety, record.safety_name, record.task)
        undoes = f"the {record.kind} of {record.target_name} ({record.at})"
        left_by_it = record.head_after
        owner = record.task
    if head != target.base and not (move_head or keep_head) and head == left_by_it:
        move_head, keep_head = target.base is not None, target.base is None
    report = restore_to(
        repo,
        config,
        owner,
        target,
        move_head=move_head,
        keep_head=keep_head,
        kind="undo",
        pending=journal,
        prescan=prescan,
    )
    return replace(report, undoes=undoes)
