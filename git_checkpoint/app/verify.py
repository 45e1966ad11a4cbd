"""`git checkpoint verify [CP]`: run the verifiers, record the evidence, promote or reject."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..gitcore import maintenance
from ..save.capture import capture_workspace
from ..save.session import SaveRequest, said_of, save_workspace
from ..storage import oplog, tasks
from ..storage.commits import same_state
from ..storage.notes import read_events
from ..storage.refs import Checkpoint, resolve
from ..verify.environment import imports_from
from ..verify.in_place import verify_in_place
from ..verify.procgroup import interruptible
from ..verify.verifiers import (
    VerifierResult,
    decide,
    record_results,
    required_failed,
    run_verifiers,
    select_verifiers,
    tail_lines,
)
from ..verify.worktree import checkpoint_worktree
from .context import Context


@dataclass(frozen=True)
class VerifyResult:
    checkpoint: str
    commit: str
    where: str  # "workspace" or "temporary worktree"
    results: list[VerifierResult]
    status: str
    exit_code: int = field(default=0)
    saved: bool | None = None  # no checkpoint named: True if verify saved it, False if unchanged

    def lines(self) -> list[str]:
        out = [f"status: {self.checkpoint} {self.status}"]
        for result in self.results:
            if result.status != "passed":
                tail = tail_lines(result.output_tail)
                out.append(f"{result.line()}; its last lines:" if tail else result.line())
                out += tail
        return out


def _target(
    ctx: Context, name: str | None, progress: Callable[[str], None]
) -> tuple[Checkpoint, bool, bool | None]:
    """The checkpoint to verify, whether the workspace holds exactly its state, and (with
    no name) whether it was saved just now."""
    repo, task = ctx.repo, ctx.task()
    if name is None:
        request = SaveRequest(task, message="verify")
        saved = save_workspace(repo, ctx.config, request, maintain=False)
        progress(
            f"checkpoint saved: {saved.checkpoint.id}"
            if saved.created
            else f"unchanged since {saved.checkpoint.id}"
        )
        for line in said_of(saved):
            progress(line)
        return saved.checkpoint, True, saved.created
    cp = resolve(repo, name, task)
    return cp, same_state(repo, capture_workspace(repo, ctx.config), cp), None


def run(
    ctx: Context,
    name: str | None,
    *,
    only: tuple[str, ...],
    progress: Callable[[str], None],
) -> VerifyResult:
    repo = ctx.repo
    verifiers = select_verifiers(ctx.config, only)
    cp, in_place, saved = _target(ctx, name, progress)
    imports = None if in_place else imports_from(repo.root)
    if imports is not None:
        progress(
            f"the verifiers' Python imports this work tree's code ({imports}): in a "
            f"temporary worktree they would test it, not {cp.name}'s; verifying {cp.name} "
            "in place: restored over the workspace, verified, put back (each step undoable)"
        )
    else:
        progress(f"verifying {cp.name}" + ("" if in_place else " in a temporary worktree"))

    def show(result: VerifierResult) -> None:
        progress(result.line())

    def verified(where: Path) -> list[VerifierResult]:
        return run_verifiers(verifiers, str(where), show, adopt=not ctx.long_lived)

    with interruptible() if ctx.handle_signals else contextlib.nullcontext():
        if in_place:
            results, where = verified(repo.root), "workspace"
        elif imports is not None:
            results = verify_in_place(
                repo, ctx.config, cp, task=ctx.task(), verified=verified,
                progress=progress, locked=ctx.locked,
            )  # fmt: skip
            where = "workspace, put in place"
        else:
            with checkpoint_worktree(repo, cp) as path:
                results, where = verified(path), "temporary worktree"
    if in_place and not same_state(repo, capture_workspace(repo, ctx.config), cp):
        progress(f"warning: the verifiers changed the workspace; evidence is for {cp.name}")
    with ctx.locked():
        record_results(repo, cp, results, where, ctx.config.secrets_allow)
        status = decide(repo, ctx.config, cp, read_events(repo, cp.commit))
        failing = required_failed(ctx.config, results)
        tasks.note_verification(repo, cp.task, cp.id, failing, status)
        oplog.log_event(repo, "verify", checkpoint=cp.name, status=status)
    maintenance.after(repo)
    return VerifyResult(cp.name, cp.commit, where, results, status, 1 if failing else 0, saved)
