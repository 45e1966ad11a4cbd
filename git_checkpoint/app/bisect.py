"""`git checkpoint bisect [--verifier NAME] [GOOD] [BAD]`: the first checkpoint of a task
where a verifier started failing, and what changed since the last one where it passed.
Checkpoints without a recorded result are verified as `verify` verifies an older one (a
temporary worktree, or in place when the verifiers would import the work tree's code),
and the result is recorded as `verify` records it."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..config.model import Config, Verifier
from ..core.errors import UsageError
from ..core.text import quote_path
from ..storage import oplog, tasks
from ..storage.commits import managed_tree
from ..storage.notes import read_events
from ..storage.refs import Checkpoint, history, resolve
from ..verify.bisect import Probe, recorded_status, search
from ..verify.environment import imports_from
from ..verify.evidence import sound
from ..verify.in_place import verify_in_place
from ..verify.procgroup import interruptible
from ..verify.verifiers import (
    VerifierResult,
    decide,
    record_results,
    required_failed,
    run_verifiers,
    select_verifiers,
)
from ..verify.worktree import checkpoint_worktree
from .context import Context


@dataclass(frozen=True)
class ChangedFile:
    status: str  # git's letter: A, D, M, T
    path: str


@dataclass(frozen=True)
class BisectResult:
    task: str
    verifier: str
    first_bad: str | None  # None: no checkpoint where it started failing (`reason`)
    last_good: str | None
    probes: list[Probe]  # the checkpoints looked at, in that order
    runs: int  # how many of them the verifier ran on now (the others: recorded results)
    diffstat: str = ""  # from last_good to first_bad, overlay included
    files: list[ChangedFile] = field(default_factory=list)
    reason: str | None = None
    left_out: list[str] = field(default_factory=list)  # malformed: not searched
    exit_code: int = 0

    def lines(self) -> list[str]:
        if self.first_bad is None:
            out = [f"no checkpoint where {self.verifier} started failing: {self.reason}"]
        else:
            out = [
                f"first failing checkpoint: {self.first_bad} "
                f"({self.verifier} passes at {self.last_good}, fails at {self.first_bad})",
                f"changes from {self.last_good} to {self.first_bad}:",
                *(f"  {line.strip()}" for line in self.diffstat.rstrip().splitlines()),
                *(f"  {f.status} {quote_path(f.path)}" for f in self.files),
            ]
        looked = ", ".join(p.line() for p in self.probes)
        reused = len(self.probes) - self.runs
        out.append(f"looked at: {looked}; {self.runs} run now, {reused} recorded")
        if self.left_out:
            out.append(f"not searched (malformed): {', '.join(self.left_out)}")
        return out


def bisect(
    ctx: Context,
    good: str | None = None,
    bad: str | None = None,
    *,
    verifier: str | None = None,
    task: str | None = None,
    progress: Callable[[str], None] = lambda line: None,
) -> BisectResult:
    """GOOD and BAD name checkpoints of one task (default: see verify/bisect.search);
    `task`: the task when neither names one (default: the current one)."""
    repo = ctx.repo
    chosen = _chosen(ctx.config, verifier)
    named = [resolve(repo, n, ctx.task(task)) if n else None for n in (good, bad)]
    tasks_named = {cp.task for cp in named if cp is not None}
    if len(tasks_named) > 1:
        raise UsageError(f"GOOD and BAD are checkpoints of two tasks: {', '.join(tasks_named)}")
    of_task = tasks_named.pop() if tasks_named else ctx.task(task)
    everything = history(repo, of_task)
    sequence = [c for c in everything if sound(c)]
    if not sequence:
        raise UsageError(f"task {of_task!r} has no checkpoints to search")
    good_at, bad_at = (_index(sequence, cp) for cp in named)
    if good_at is not None and bad_at is not None and good_at >= bad_at:
        raise UsageError(f"{good} is not before {bad} in task {of_task!r}")
    recorded = [recorded_status(repo, cp, chosen) for cp in sequence]
    judge = _Judge(ctx, chosen, progress)
    with interruptible() if ctx.handle_signals else contextlib.nullcontext():
        found = search(sequence, recorded, judge.status, good=good_at, bad=bad_at)
    left_out = [c.name for c in everything if c not in sequence]
    if found.first_bad is None or found.last_good is None:
        return BisectResult(
            task=of_task,
            verifier=chosen.name,
            first_bad=None,
            last_good=None,
            probes=found.probes,
            runs=judge.runs,
            reason=found.reason,
            left_out=left_out,
            exit_code=1,
        )
    last_good, first_bad = sequence[found.last_good], sequence[found.first_bad]
    diffstat, files = _changes(ctx, last_good, first_bad)
    return BisectResult(
        task=of_task,
        verifier=chosen.name,
        first_bad=first_bad.name,
        last_good=last_good.name,
        probes=found.probes,
        runs=judge.runs,
        diffstat=diffstat,
        files=files,
        left_out=left_out,
    )


def _chosen(config: Config, name: str | None) -> Verifier:
    if name is not None:
        return select_verifiers(config, (name,))[0]
    required = [v for v in select_verifiers(config) if v.required]
    if not required:
        raise UsageError("no required verifier is configured: name one with --verifier NAME")
    return required[0]


def _index(sequence: list[Checkpoint], cp: Checkpoint | None) -> int | None:
    if cp is None:
        return None
    for n, candidate in enumerate(sequence):
        if candidate.ref == cp.ref:
            return n
    raise UsageError(f"{cp.name} is a safety checkpoint: bisect searches the task's own")


class _Judge:
    """Verifies a checkpoint with the one verifier and records the result, as `verify`
    does; counts the runs."""

    def __init__(self, ctx: Context, verifier: Verifier, progress: Callable[[str], None]):
        self.ctx, self.verifier, self.progress = ctx, verifier, progress
        self.runs = 0
        self.imports = imports_from(ctx.repo.root)
        if self.imports is not None:
            progress(
                f"the verifiers' Python imports this work tree's code ({self.imports}): "
                "each checkpoint is verified in place (restored over the workspace, "
                "verified, put back; each step undoable)"
            )

    def _verified(self, where: Path) -> list[VerifierResult]:
        def show(result: VerifierResult) -> None:
            self.progress(result.line())

        adopt = not self.ctx.long_lived
        return run_verifiers((self.verifier,), str(where), show, adopt=adopt)

    def status(self, cp: Checkpoint) -> str:
        ctx, repo = self.ctx, self.ctx.repo
        self.runs += 1
        if self.imports is not None:
            results = verify_in_place(
                repo, ctx.config, cp, task=ctx.task(), verified=self._verified,
                progress=self.progress, locked=ctx.locked,
            )  # fmt: skip
            where = "workspace, put in place"
        else:
            self.progress(f"verifying {cp.name} in a temporary worktree")
            with checkpoint_worktree(repo, cp) as path:
                results, where = self._verified(path), "temporary worktree"
        with ctx.locked():
            record_results(repo, cp, results, where, ctx.config.secrets_allow)
            status = decide(repo, ctx.config, cp, read_events(repo, cp.commit))
            failing = required_failed(ctx.config, results)
            tasks.note_verification(repo, cp.task, cp.id, failing, status)
            oplog.log_event(repo, "verify", checkpoint=cp.name, status=status, by="bisect")
        return results[0].status


def _changes(ctx: Context, old: Checkpoint, new: Checkpoint) -> tuple[str, list[ChangedFile]]:
    """The diffstat and the changed files from `old` to `new`, overlay included."""
    repo = ctx.repo
    a, b = managed_tree(repo, old), managed_tree(repo, new)
    env = repo.no_index()
    stat = repo.git("diff", "--no-renames", "--no-color", "--stat=100", a, b, env=env)
    names = repo.git("diff", "--no-renames", "--name-status", "-z", a, b, env=env)
    fields = [f for f in names.decode("utf-8", "surrogateescape").split("\0") if f]
    files = [ChangedFile(fields[i], fields[i + 1]) for i in range(0, len(fields) - 1, 2)]
    return stat.decode("utf-8", "replace"), files
