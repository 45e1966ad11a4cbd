"""`git checkpoint run -- CMD…`: the whole loop."""

from __future__ import annotations

from collections.abc import Callable

from ..gitcore import maintenance
from ..runloop.loop import RunOutcome, run_loop
from .context import Context


def run(
    ctx: Context,
    *,
    task: str | None,
    attempts: int,
    argv: list[str],
    log: Callable[[str], None],
    quiet_stdout: bool = False,
) -> RunOutcome:
    """`quiet_stdout`: under --json the agent's output goes to stderr, as the log does.
    git's auto maintenance: once, after the loop (maintenance.py)."""
    maintenance.held_off = True
    try:
        outcome = run_loop(
            ctx.repo, ctx.config, ctx.task(task), argv, attempts, log, agent_to_stderr=quiet_stdout
        )
    finally:
        maintenance.held_off = False
    maintenance.after(ctx.repo)
    return outcome
