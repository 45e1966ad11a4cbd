"""The auto-save the hooks call: save only when the workspace changed since the task's
latest checkpoint. (A first, simple version: the full save path with dedupe.)
"""

from __future__ import annotations

from . import state
from .context import load_context
from .store import save_checkpoint


def auto_save(cwd: str, message: str) -> str | None:
    """Save the workspace of `cwd` as an automatic checkpoint of the current task.

    Returns the new checkpoint's name, or None when nothing changed since the task's
    latest checkpoint. Raises CheckpointError on problems.
    """
    ctx = load_context(cwd)
    repo = ctx.repo
    task = ctx.task()
    with state.locked(repo, ctx.config.lock_timeout):
        outcome = save_checkpoint(repo, ctx.config, task, message=message, auto=True, dedupe=True)
        if not outcome.created:
            return None
        cp = outcome.checkpoint
        state.log_event(repo, "save", task=task, checkpoint=cp.id, commit=cp.commit, auto=True)
    return cp.id
