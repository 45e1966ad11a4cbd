"""`git checkpoint resume`: the task record as a brief an agent can pick the work up from."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import UsageError
from ..core.text import escape_text, quote_path
from ..gitcore.repo import Repo
from ..restore.plan import managed_differences
from ..save.capture import capture_workspace
from ..storage import tasks
from ..storage.notes import latest_results, read_events
from ..storage.refs import Checkpoint, history, resolve
from ..storage.tasks import FailingVerifier
from ..verify.verifiers import tail_lines
from .context import Context


@dataclass(frozen=True)
class ResumeBrief:
    task: str
    last_good_checkpoint: str | None
    latest_checkpoint: str | None
    rollback_point: str | None
    attempts: int
    last_failing_verifier: FailingVerifier | None
    hypothesis: str | None
    next_move: str | None
    files_under_active_edit: list[str]
    # A later checkpoint on which the last failing verifier passed: the failure is resolved.
    last_failing_verifier_resolved_by: str | None = None

    def lines(self) -> list[str]:
        out = [f"# resume: {self.task}"]
        out.append(f"last good checkpoint: {self.last_good_checkpoint or 'none yet'}")
        out.append(f"latest checkpoint: {self.latest_checkpoint or 'none'}")
        out.append(f"attempts so far: {self.attempts}")
        failing = self.last_failing_verifier
        if failing and self.last_failing_verifier_resolved_by:
            out.append(
                f"last failing verifier: {failing.name} (exit {failing.exit_code}"
                + (f" on {failing.checkpoint}" if failing.checkpoint else "")
                + f"), resolved: it passed on {self.last_failing_verifier_resolved_by}"
            )
        elif failing:
            out.append(f"last failing verifier: {failing.name} (exit {failing.exit_code})")
            out += tail_lines(failing.output_tail)
        else:
            out.append("last failing verifier: none")
        out.append(f"hypothesis: {escape_text(self.hypothesis or 'none recorded')}")
        out.append(f"next safe move: {escape_text(self.next_move or 'none recorded')}")
        if self.files_under_active_edit:
            out.append("files under active edit:")
            out += [f"  {quote_path(p)}" for p in self.files_under_active_edit[:30]]
        else:
            out.append("files under active edit: none")
        return out


def run(ctx: Context, *, task: str | None) -> ResumeBrief:
    repo = ctx.repo
    name = ctx.task(task)
    record = tasks.load_task(repo, name)
    normal = history(repo, name)
    editing: list[str] = []
    reference = None
    good = tasks.last_good(repo, record, normal)
    if good:
        try:
            reference = resolve(repo, good, name)
        except UsageError:  # dropped since: fall back to the first checkpoint
            reference = None
    if reference is None and normal:
        reference = normal[0]
    if reference is not None:
        current = capture_workspace(repo, ctx.config, allow_unmerged=True)
        editing = managed_differences(repo, current, reference)
    return ResumeBrief(
        task=name,
        last_good_checkpoint=good,
        latest_checkpoint=normal[-1].id if normal else None,
        rollback_point=record.rollback_point,
        attempts=record.attempts,
        last_failing_verifier=record.last_failing_verifier,
        hypothesis=record.hypothesis,
        next_move=record.next_move,
        files_under_active_edit=editing,
        last_failing_verifier_resolved_by=_resolved_by(repo, record.last_failing_verifier, normal),
    )


def _resolved_by(
    repo: Repo, failing: FailingVerifier | None, normal: list[Checkpoint]
) -> str | None:
    """The first checkpoint after the failing one on which that verifier passed."""
    if failing is None or not failing.checkpoint or not failing.checkpoint.startswith("cp_"):
        return None
    try:
        after = int(failing.checkpoint[3:])
    except ValueError:
        return None
    for cp in normal:
        if cp.number > after:
            result = latest_results(read_events(repo, cp.commit)).get(failing.name)
            if result is not None and result.get("status") == "passed":
                return cp.id
    return None
