"""`git checkpoint guard -- CMD…`: save first when CMD is risky; then the CLI execs CMD.

A checkpoint problem (no repository, a held lock, a bad config, a failing save) never
stops CMD: it becomes one line for stderr. The save never reads CMD's stdin.
"""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

from ..core.errors import CheckpointError
from ..core.text import clip
from ..fast.hook import GUARD  # set while the guard saves: git hooks under it do not save

# A guard waits this long at most for another git-checkpoint's lock, then lets CMD run.
LOCK_WAIT = 2.0


@dataclass(frozen=True)
class GuardPlan:
    argv: list[str]  # what to exec
    line: str  # CMD as one shell line
    risky: bool
    reason: str
    saved: str | None = None  # the checkpoint saved first, if any
    problem: str | None = None  # why no checkpoint could be saved

    def lines(self) -> list[str]:
        if self.problem:
            return [f"no checkpoint saved ({self.problem}); running it anyway"]
        if self.saved:
            return [f"checkpoint saved: {self.saved} (before: {clip(self.line)})"]
        return []


def plan(command: list[str], cwd: str) -> GuardPlan:
    """Classify CMD and, when it is risky, save; never raise for a checkpoint problem."""
    if len(command) == 1:  # one argument: a shell line, as `sh -c` would take it
        line = command[0]
        argv = [shutil.which("bash") or "/bin/sh", "-c", line]
    else:
        line, argv = shlex.join(command), list(command)
    from ..config.parse import hook_patterns
    from ..fast.patterns import configured_patterns
    from ..risk.classify import classify

    try:
        risky_patterns, harmless_patterns = configured_patterns(cwd, hook_patterns)
    except Exception:  # unreadable patterns: the built-in rules still judge
        risky_patterns, harmless_patterns = (), ()
    verdict = classify(
        line, risky_patterns=risky_patterns, harmless_patterns=harmless_patterns, cwd=cwd
    )
    result = GuardPlan(argv=argv, line=line, risky=verdict.risky, reason=verdict.reason)
    if not verdict.risky or os.environ.get(GUARD):
        return result
    try:
        with _stdin_kept_for_cmd(), _hooks_quiet():
            saved = _save(cwd, f"before: {clip(line)}")
    except CheckpointError as exc:
        return replace(result, problem=str(exc))
    except Exception as exc:
        return replace(result, problem=f"{type(exc).__name__}: {exc}")
    return replace(result, saved=saved)


def _save(cwd: str, message: str) -> str | None:
    """An auto-save, deduplicated: the fast unchanged check, then the full save."""
    from ..fast.quickcheck import quick_unchanged

    if quick_unchanged(cwd):
        return None
    from .context import load_context
    from .save import run as save

    ctx = load_context(cwd)
    config = replace(ctx.config, lock_timeout=min(ctx.config.lock_timeout, LOCK_WAIT))
    outcome = save(
        replace(ctx, config=config),
        task=None,
        message=message,
        hypothesis=None,
        next_move=None,
        auto=True,
    )
    return outcome.checkpoint_id if outcome.created else None


@contextmanager
def _stdin_kept_for_cmd() -> Iterator[None]:
    """git children of the save get /dev/null as stdin: CMD's input stays unread."""
    try:
        saved = os.dup(0)
    except OSError:  # no stdin at all
        yield
        return
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        yield
    finally:
        os.dup2(saved, 0)
        os.close(saved)
        os.close(null)


@contextmanager
def _hooks_quiet() -> Iterator[None]:
    before = os.environ.get(GUARD)
    os.environ[GUARD] = "1"
    try:
        yield
    finally:
        if before is None:
            del os.environ[GUARD]
        else:
            os.environ[GUARD] = before
