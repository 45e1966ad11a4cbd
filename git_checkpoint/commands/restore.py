"""`git checkpoint restore [CP]`: safety checkpoint first, then only what differs."""

from __future__ import annotations

from .. import state
from ..context import Context
from ..recovery import continue_restore, restore_to
from ..restore_report import RestoreReport
from ..store import resolve, task_checkpoints


def run(
    ctx: Context,
    name: str | None,
    *,
    dry_run: bool,
    move_head: bool,
    keep_head: bool,
    resume: bool,
) -> RestoreReport:
    repo = ctx.repo
    task = ctx.task()
    with state.locked(repo, ctx.config.lock_timeout):
        if resume:
            report = continue_restore(repo, ctx.config, task)
        else:
            listed = task_checkpoints(repo, task)  # once, for the name and the safety save
            target = resolve(repo, name or "@", task, listed)
            report = restore_to(
                repo,
                ctx.config,
                task,
                target,
                dry_run=dry_run,
                move_head=move_head,
                keep_head=keep_head,
                listed=listed,
            )
        if not report.dry_run:
            state.log_event(
                repo,
                "restore",
                task=task,
                checkpoint=report.checkpoint,
                safety=report.safety_checkpoint,
                written=len(report.brought_back),
                removed=len(report.removed),
                resumed=resume,
            )
    return report
