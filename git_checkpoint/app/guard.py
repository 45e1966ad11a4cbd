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
from dataclasses import dataclass, field, replace

from ..core.errors import CheckpointError
from ..fast.hook import GUARD  # set while the guard saves: git hooks under it do not save

# A guard waits this long at most for another git-checkpoint's lock, then lets CMD run.
LOCK_WAIT = 2.0


@dataclass(frozen=True)
class GuardPlan:
    argv: list[str]  # what to exec
    line: str  # CMD as one shell line
    risky: bool
    reason: str
    said: list[str] = field(default_factory=list)  # what the saves before CMD say

    def lines(self) -> list[str]:
        return self.said


def plan(command: list[str], cwd: str) -> GuardPlan:
    """Classify CMD and, when it is risky, save each repository it reaches; never raise
    for a checkpoint problem."""
    if len(command) == 1:  # one argument: a shell line, as `sh -c` would take it
        line = command[0]
        argv = [shutil.which("bash") or "/bin/sh", "-c", line]
    else:
        line, argv = shlex.join(command), list(command)
    from ..config.parse import hook_patterns
    from ..fast.hook import reached
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
    folders, named = reached(verdict.where, cwd)
    said: list[str] = []
    with _stdin_kept_for_cmd(), _hooks_quiet():
        for folder in folders:
            said += _save(folder, f"before: {line}", f" in {folder}" if named else "")
    return replace(result, said=said)


def _save(cwd: str, message: str, where: str) -> list[str]:
    """An auto-save, deduplicated (the quick check, then the one save sequence), and
    what to say of it: the checkpoint saved, what it newly left out, or the problem."""
    from ..fast.quickcheck import check
    from ..save.session import auto_save, said_of

    try:
        found = check(cwd)
        if found is not None and found.unchanged:
            return []
        saved = auto_save(cwd, message, found=found, lock_wait=LOCK_WAIT, maintain=True)
    except CheckpointError as exc:
        return [f"no checkpoint saved{where} ({exc}); running it anyway"]
    except Exception as exc:
        return [f"no checkpoint saved{where} ({type(exc).__name__}: {exc}); running it anyway"]
    said = []
    if saved.config_problem:  # (said once, as the hooks say it)
        said.append(f"warning: {saved.config_problem}; saving with the default settings")
    if saved.created:
        said.append(f"checkpoint saved: {saved.checkpoint.id}{where} ({saved.checkpoint.message})")
    return said + said_of(saved)


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
