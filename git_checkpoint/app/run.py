"""`git checkpoint run -- CMD…`: the whole loop (runloop/loop.py)."""

from __future__ import annotations

from collections.abc import Callable

from ..gitcore import maintenance
from ..runloop.loop import RunOutcome, RunRequest, run_loop
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
    git's auto maintenance: once, after the loop (gitcore/maintenance.py)."""
    request = RunRequest(
        task=ctx.task(task),
        argv=argv,
        attempts=attempts,
        agent_to_stderr=quiet_stdout,
        adopt=not ctx.long_lived,
    )
    outcome = run_loop(ctx.repo, ctx.config, request, log)
    maintenance.after(ctx.repo)
    return outcome
