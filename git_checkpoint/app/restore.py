"""`git checkpoint restore [CP]`: safety checkpoint first, then only what differs."""

from __future__ import annotations

from ..gitcore import maintenance
from ..restore.report import RestoreReport
from ..restore.run import continue_restore, restore_to
from ..storage import oplog
from ..storage.refs import resolve, task_checkpoints
from .context import Context


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
    with ctx.locked():
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
                prescan=ctx.prescan,
            )
        if not report.dry_run:
            oplog.log_event(
                repo,
                "restore",
                task=task,
                checkpoint=report.checkpoint,
                safety=report.safety_checkpoint,
                written=len(report.brought_back),
                removed=len(report.removed),
                resumed=resume,
            )
    maintenance.after(repo)
    return report
