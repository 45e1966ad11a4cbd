"""The Python API: one function per verb, for programs (agent harnesses) that would
otherwise run `git checkpoint … --json` (design.md §12).

Plain arguments in; out, the same frozen dataclasses the command line prints and
`--json` serialises (`dataclasses.asdict` of them is that JSON). Errors are raised as
the hierarchy exported here: `UsageError` (bad input, exit 2 on the command line),
`Refused` (refused for safety, exit 3), `GitFailed` (git failed underneath, exit 4), all
`CheckpointError`; never `SystemExit`. An answer of "no" is not an error:
`verify` returns a result whose `status` is "rejected" and `exit_code` 1.

Each call finds the repository of `repo` (a folder of its work tree; default: the
current folder) anew and leaves nothing behind: no signal handler is installed unless
`handle_signals=True` is passed to `verify` (and then only while it runs), no process
becomes this one's to reap, nothing is printed. Calls made at once on one repository
wait for each other's lock, as commands do.
"""

from __future__ import annotations

import contextlib
import dataclasses
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from .app.bisect import BisectResult
from .app.context import Context, load_context
from .app.diff import DiffResult
from .app.evidence import EvidenceResult
from .app.list import ListResult, SessionsResult
from .app.promote import PromoteResult
from .app.resume import ResumeBrief
from .app.review import ReviewResult
from .app.save import SaveResult
from .app.show import ShowResult
from .app.status import StatusResult
from .app.verify import VerifyResult
from .core.errors import CheckpointError, GitFailed, Refused, UsageError
from .restore.report import RestoreReport

__all__ = [
    "BisectResult",
    "CheckpointError",
    "DiffResult",
    "EvidenceResult",
    "GitFailed",
    "ListResult",
    "PromoteResult",
    "Refused",
    "RestoreReport",
    "ResumeBrief",
    "ReviewResult",
    "SaveResult",
    "SessionsResult",
    "ShowResult",
    "StatusResult",
    "UsageError",
    "VerifyResult",
    "bisect",
    "diff",
    "evidence",
    "list_checkpoints",
    "list_sessions",
    "promote",
    "restore",
    "resume",
    "review",
    "save",
    "show",
    "status",
    "undo",
    "verify",
]

Where = str | Path


def _context(repo: Where, *, tolerant: bool = False, handle_signals: bool = False) -> Context:
    if handle_signals and threading.current_thread() is not threading.main_thread():
        raise UsageError(
            "handle_signals=True takes the process's signals: only the main thread can"
        )
    ctx = load_context(repo, tolerant=tolerant)
    return dataclasses.replace(ctx, long_lived=True, handle_signals=handle_signals)


@contextlib.contextmanager
def _signals_kept(taken: bool) -> Iterator[None]:
    """The caller's handlers of SIGINT, SIGTERM and SIGHUP back once the call is over:
    a stop leaves them ignored, as a command on its way out wants them, not a program."""
    if not taken:
        yield
        return
    kept = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for sig, handler in kept.items():
            if handler is not None:  # (None: set outside Python, left as it is)
                signal.signal(sig, handler)


def save(
    repo: Where = ".",
    *,
    message: str = "",
    task: str | None = None,
    hypothesis: str | None = None,
    next_move: str | None = None,
    include: Sequence[str] = (),
) -> SaveResult:
    """Save the workspace as the task's next checkpoint; `created` is False (and nothing
    is written) when it equals the task's latest. `include`: extra paths to capture even
    when ignored, relative to the top of the work tree. A broken `.checkpoint.yaml` falls
    back to the defaults, as the command does: the net stays on."""
    from .app import save as verb

    ctx = _context(repo, tolerant=True)
    if include:
        ctx = dataclasses.replace(ctx, config=ctx.config.with_include(tuple(include)))
    return verb.run(
        ctx, task=task, message=message, hypothesis=hypothesis, next_move=next_move, auto=False
    )


def restore(
    checkpoint: str | None = None,
    *,
    repo: Where = ".",
    dry_run: bool = False,
    move_head: bool = False,
    keep_head: bool = False,
    before_turn: int | None = None,
    session: str | None = None,
    paths: Sequence[str] = (),
) -> RestoreReport:
    """Make the workspace equal to `checkpoint` (default: the task's latest; a name as
    the command takes it: `cp_003`, `task/cp_003`, a ref, a commit, `@`, `@~1`), after a
    safety checkpoint that `undo` goes back to. `paths` (from the top of the work tree):
    only those files and folders come back, their index entries too. `before_turn`:
    instead, the workspace as it was before prompt N of an agent session (`session`,
    default the latest)."""
    from .app import restore as verb

    return verb.run(
        _context(repo, tolerant=True),
        checkpoint,
        dry_run=dry_run,
        move_head=move_head,
        keep_head=keep_head,
        resume=False,
        before_turn=before_turn,
        session=session,
        paths=tuple(paths),
    )


def undo(
    *,
    repo: Where = ".",
    task: str | None = None,
    move_head: bool = False,
    keep_head: bool = False,
) -> RestoreReport:
    """Go back over the last restore made in this worktree (or `task`'s)."""
    from .app import undo as verb

    ctx = _context(repo, tolerant=True)
    return verb.run(ctx, task=task, move_head=move_head, keep_head=keep_head)


def list_checkpoints(
    *,
    repo: Where = ".",
    task: str | None = None,
    all_tasks: bool = False,
    remote: str | None = None,
    session: str | None = None,
) -> ListResult:
    """The checkpoints of a task (default: the current one), of every task, of those
    fetched from `remote`, or of one agent session; oldest first."""
    from .app import list as verb

    ctx = _context(repo)
    return verb.run(ctx, task=task, all_tasks=all_tasks, remote=remote, session=session)


def list_sessions(*, repo: Where = ".") -> SessionsResult:
    """The agent sessions the hooks recorded here, with their turns."""
    from .app import list as verb

    return verb.sessions(_context(repo))


def show(
    checkpoint: str = "@", *, repo: Where = ".", manifest_only: bool = False, patch: bool = False
) -> ShowResult:
    """A checkpoint: manifest, status, verifier events, diffstat, overlay files."""
    from .app import show as verb

    return verb.run(_context(repo), checkpoint, manifest_only=manifest_only, patch=patch)


def diff(
    checkpoint: str | None = None,
    other: str | None = None,
    *,
    repo: Where = ".",
    stat: bool = False,
    name_only: bool = False,
) -> DiffResult:
    """`checkpoint` (default: the latest) against the workspace, or against `other`."""
    from .app import diff as verb

    ctx = _context(repo)
    return verb.run(ctx, checkpoint, other, color=False, stat=stat, name_only=name_only)


def verify(
    checkpoint: str | None = None,
    *,
    repo: Where = ".",
    verifiers: Sequence[str] = (),
    progress: Callable[[str], None] | None = None,
    handle_signals: bool = False,
) -> VerifyResult:
    """Run the verifiers (all, or those named) on the workspace (saved first) or on
    `checkpoint`, record each result, and promote or reject by the rule. `progress`
    gets the lines the command prints as it goes. `handle_signals`: take SIGTERM and
    SIGHUP while it runs so that no verifier outlives this process (main thread only)."""
    from .app import verify as verb

    ctx = _context(repo, handle_signals=handle_signals)
    with _signals_kept(handle_signals):
        return verb.run(ctx, checkpoint, only=tuple(verifiers), progress=progress or _quiet)


def promote(
    checkpoint: str, *, repo: Where = ".", force: bool = False, reason: str | None = None
) -> PromoteResult:
    """Promote on the recorded evidence; `force` (with a `reason`) records who forced it."""
    from .app import promote as verb

    return verb.run(_context(repo), checkpoint, force=force, reason=reason)


def status(*, repo: Where = ".", task: str | None = None) -> StatusResult:
    """The task, its latest and last good checkpoint, drift since the latest."""
    from .app import status as verb

    return verb.run(_context(repo, tolerant=True), task=task, exit_code=False)


def resume(*, repo: Where = ".", task: str | None = None) -> ResumeBrief:
    """The task record as a brief an agent can pick the work up from."""
    from .app import resume as verb

    return verb.run(_context(repo, tolerant=True), task=task)


def review(task: str | None = None, *, repo: Where = ".", fmt: str = "json") -> ReviewResult:
    """A task's timeline for a reviewer (TASK or REMOTE/TASK); `fmt` as the command's
    --format (the result's `lines()` renders it)."""
    from .app import review as verb

    return verb.run(_context(repo), task, fmt="text" if fmt == "json" else fmt)


def evidence(commit: str = "HEAD", *, repo: Where = ".") -> EvidenceResult:
    """The verifier evidence for `commit`'s tree: every checkpoint (local or fetched)
    holding that tree, so it survives a rebase or squash that keeps it."""
    from .app.evidence import evidence as verb

    return verb(_context(repo), commit)


def bisect(
    good: str | None = None,
    bad: str | None = None,
    *,
    repo: Where = ".",
    verifier: str | None = None,
    task: str | None = None,
    progress: Callable[[str], None] | None = None,
    handle_signals: bool = False,
) -> BisectResult:
    """The first checkpoint of a task where `verifier` (default: the first required one)
    started failing, between `good` and `bad`: recorded results reused, the rest verified
    (and recorded) as `verify` does."""
    from .app.bisect import bisect as verb

    ctx = _context(repo, handle_signals=handle_signals)
    with _signals_kept(handle_signals):
        return verb(ctx, good, bad, verifier=verifier, task=task, progress=progress or _quiet)


def _quiet(line: str) -> None:
    pass
