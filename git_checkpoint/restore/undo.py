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
from ..storage.refs import load_checkpoints
from .carry import recorded
from .report import RestoreReport
from .run import restore_to


def past_an_unreadable_journal(repo: Repo) -> str:
    """What goes back over a restore whose journal cannot be read (said with the warning,
    as it is): its safety checkpoint, when one newer than the last finished restore's
    is there (that restore began after it), else undo of that last finished restore."""
    records = restore_records(repo)
    last = records[-1] if records else None
    safeties = [c for c in load_checkpoints(repo) if c.is_safety and c.remote is None]
    newest = max(safeties, key=lambda c: c.created_at, default=None)
    if newest is not None and (last is None or newest.created_at > last.at):
        return (
            f"the newest safety checkpoint, {newest.name}, holds what was there before it: "
            f"`git checkpoint restore {newest.name}` goes back"
        )
    if last is not None:
        return (
            f"`git checkpoint undo` goes back to before the last finished restore, of "
            f"{last.target_name} ({last.at})"
        )
    return "no restore to go back over is recorded (`git checkpoint list` shows what there is)"


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
    except UsageError as exc:  # unreadable: set aside; the way back is what it says then
        way_back = past_an_unreadable_journal(repo)
        set_journal_aside(repo)
        if not way_back.startswith("`git checkpoint undo`"):
            raise UsageError(f"{exc} (set aside); {way_back}") from None
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
