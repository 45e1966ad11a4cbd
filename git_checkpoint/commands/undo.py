"""`git checkpoint undo`: restore the latest safety checkpoint (the undo of a restore)."""

from __future__ import annotations

from .. import state
from ..context import Context
from ..recovery import RestoreReport, undo


def run(ctx: Context, *, move_head: bool = False, keep_head: bool = False) -> RestoreReport:
    repo = ctx.repo
    task = ctx.task()
    with state.locked(repo, ctx.config.lock_timeout):
        report = undo(repo, ctx.config, task, move_head=move_head, keep_head=keep_head)
        state.log_event(
            repo, "undo", task=task, checkpoint=report.checkpoint, safety=report.safety_checkpoint
        )
    return report
