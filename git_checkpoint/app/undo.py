"""`git checkpoint undo`: go back over the last restore made in this worktree."""

from __future__ import annotations

from ..gitcore import maintenance
from ..restore.report import RestoreReport
from ..restore.undo import undo
from ..storage import oplog
from .context import Context


def run(
    ctx: Context, *, task: str | None = None, move_head: bool = False, keep_head: bool = False
) -> RestoreReport:
    repo = ctx.repo
    only_task = ctx.task(task) if task is not None else None
    with ctx.locked():
        report = undo(
            repo,
            ctx.config,
            ctx.task(),
            only_task=only_task,
            move_head=move_head,
            keep_head=keep_head,
            prescan=ctx.prescan,
        )
        oplog.log_event(
            repo,
            "undo",
            task=only_task or ctx.task(),
            checkpoint=report.checkpoint,
            safety=report.safety_checkpoint,
        )
    maintenance.after(repo)
    return report
