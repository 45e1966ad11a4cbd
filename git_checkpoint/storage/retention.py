"""Retention (design.md §6 `retention`): which checkpoints `prune` removes, and removing them.

Per task, a checkpoint goes when it is not among the newest `keep_last` or is older than
`max_age`; safety checkpoints follow the same rule with `keep_safety` for the count.
Whatever the policy says, nothing goes that something still needs: the task's latest
checkpoint, a promoted one (`keep_promoted`), the task record's last good checkpoint,
rollback point and last failing checkpoint, the latest safety checkpoint, and in every
worktree what `undo` goes back to and both ends of a pending restore.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from dataclasses import dataclass
from pathlib import Path

from ..config.model import Retention
from ..core.errors import CheckpointError, Refused, UsageError
from ..core.records import now
from ..core.text import counted
from ..gitcore.repo import Repo
from . import oplog, tasks
from .journal import RestoreRecord, read_journal, restore_records
from .notes import derive_status, read_events
from .refs import Checkpoint, load_checkpoints, task_checkpoints

# How long git keeps an unreachable commit before `git gc` may delete it (gc.pruneExpire).
GC_GRACE = "2 weeks"


@dataclass(frozen=True)
class Decision:
    """What the policy says about one checkpoint, and why."""

    name: str
    task: str
    id: str
    ref: str
    commit: str
    created_at: str
    safety: bool
    remove: bool
    reason: str

    def restore_command(self) -> str:
        return f"git update-ref {self.ref} {self.commit}"


def local_tasks(repo: Repo) -> list[str]:
    return sorted({c.task for c in load_checkpoints(repo) if c.remote is None})


def _worktree_git_dirs(repo: Repo) -> list[Path]:
    git_dirs = [repo.common_dir]
    worktrees = repo.common_dir / "worktrees"
    if worktrees.is_dir():
        git_dirs += sorted(p for p in worktrees.iterdir() if p.is_dir())
    return [d for d in git_dirs if (d / "checkpoint").is_dir()]


def needed_commits(repo: Repo) -> dict[str, str]:
    """Checkpoint commits that a pending restore or an `undo` of any worktree needs."""
    needed: dict[str, str] = {}
    for git_dir in _worktree_git_dirs(repo):
        there = dataclasses.replace(repo, git_dir=git_dir)
        latest: dict[str, RestoreRecord] = {}
        for record in restore_records(there):
            latest[record.task] = record  # undo [--task T] goes back over the last one
        for record in latest.values():
            needed.setdefault(record.safety, "what undo goes back to")
        try:
            journal = read_journal(there)
        except UsageError as exc:  # cannot tell what it needs: remove nothing
            raise Refused(f"{exc}; run `git checkpoint undo` there before pruning") from None
        if journal is not None:
            needed[journal.target] = f"a pending restore of {journal.target_name} needs it"
            for commit in (journal.safety, *journal.continued_from):
                needed[commit] = "the safety checkpoint of a pending restore"
    return needed


def _age_seconds(created_at: str, now: dt.datetime) -> float | None:
    try:
        then = dt.datetime.strptime(created_at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC)
    except ValueError:
        return None  # unknown age: only the count can remove it
    return (now - then).total_seconds()


def _describe_age(seconds: int) -> str:
    for unit, size in (("w", 7 * 86400), ("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size and seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def _protected(repo: Repo, task: str, mine: list[Checkpoint], policy: Retention) -> dict[str, str]:
    """id -> why it stays whatever the policy says."""
    keep: dict[str, str] = {}
    normal = [c for c in mine if not c.is_safety]
    safeties = [c for c in mine if c.is_safety]
    if normal:
        keep[normal[-1].id] = "the task's latest checkpoint"
    if safeties:
        keep[safeties[-1].id] = "the latest safety checkpoint (what undo restores)"
    record = tasks.load_task(repo, task)
    failing = record.last_failing_verifier
    for cp_id, why in (
        (record.last_good_checkpoint, "the task's last good checkpoint"),
        (record.rollback_point, "the task's rollback point"),
        (failing.checkpoint if failing else None, "the task's last failing checkpoint"),
    ):
        if cp_id:
            keep.setdefault(cp_id, why)
    if policy.keep_promoted:
        for c in normal:
            if c.id not in keep and derive_status(read_events(repo, c.commit)) == "promoted":
                keep[c.id] = "promoted"
    return keep


def plan_task(
    repo: Repo, task: str, policy: Retention, now: dt.datetime, needed: dict[str, str]
) -> list[Decision]:
    """The policy's decision on each checkpoint of one task, oldest first."""
    mine = task_checkpoints(repo, task)
    protected = _protected(repo, task, mine, policy)
    decisions = []
    for group, newest in (
        ([c for c in mine if not c.is_safety], policy.keep_last),
        ([c for c in mine if c.is_safety], policy.keep_safety),
    ):
        for position, cp in enumerate(reversed(group)):  # position 0: the newest
            age = _age_seconds(cp.created_at, now)
            kind = "safety checkpoint" if cp.is_safety else "checkpoint"
            if cp.commit in needed:
                remove, reason = False, needed[cp.commit]
            elif cp.id in protected:
                remove, reason = False, protected[cp.id]
            elif position >= newest:
                remove, reason = True, f"beyond the newest {counted(newest, kind)}"
            elif age is not None and age > policy.max_age_seconds:
                remove, reason = True, f"older than {_describe_age(policy.max_age_seconds)}"
            else:
                remove, reason = False, "within the policy"
            decisions.append(
                Decision(
                    name=cp.name,
                    task=cp.task,
                    id=cp.id,
                    ref=cp.ref,
                    commit=cp.commit,
                    created_at=cp.created_at,
                    safety=cp.is_safety,
                    remove=remove,
                    reason=reason,
                )
            )
    decisions.sort(key=lambda d: int(d.id[3:]))
    return decisions


def plan(repo: Repo, policy: Retention, task_names: list[str]) -> list[Decision]:
    at = now()
    needed = needed_commits(repo)
    out: list[Decision] = []
    for task in task_names:
        out += plan_task(repo, task, policy, at, needed)
    return out


def remove(repo: Repo, decisions: list[Decision], op: str = "prune") -> list[Decision]:
    """Delete the refs the plan removes (compare-and-swap), logging each with its commit
    so that `git checkpoint log` says how to bring it back. Callers hold the lock.
    """
    removed = []
    for d in decisions:
        if not d.remove:
            continue
        # Logged first, as drop does: the log always names what may be gone.
        oplog.log_event(
            repo, op, task=d.task, checkpoint=d.id, commit=d.commit, ref=d.ref, reason=d.reason
        )
        repo.delete_ref(d.ref, d.commit)
        removed.append(d)
    return removed


def prune_tasks(repo: Repo, policy: Retention, task_names: list[str]) -> list[Decision]:
    """Plan and remove in one go (callers hold the lock); return what was removed."""
    return remove(repo, plan(repo, policy, task_names))


def auto_prune(repo: Repo, policy: Retention, task: str) -> tuple[list[str], str | None]:
    """`retention.auto`: prune the task after a save (callers hold the lock). Never fails
    the save that came first: returns (the ids removed, or why nothing could be).
    """
    if not policy.auto:
        return [], None
    try:
        return [d.id for d in prune_tasks(repo, policy, [task])], None
    except CheckpointError as exc:
        return [], f"retention.auto did not prune: {exc}"
