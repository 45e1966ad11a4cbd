"""`git checkpoint promote CP`: promotion on evidence only; --force records who and why."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.errors import UsageError
from ..save.session import kept_text
from ..storage import oplog, tasks
from ..storage.commits import NOTE_MAX
from ..storage.notes import append_event, derive_status, read_events
from ..storage.refs import resolve, validate_text
from ..verify.verifiers import missing_evidence
from .context import Context


@dataclass(frozen=True)
class PromoteResult:
    checkpoint: str
    status: str
    forced: bool
    missing: list[str]
    reason: str | None
    exit_code: int
    cut: list[str] = field(default_factory=list)  # what was changed in the reason kept

    def lines(self) -> list[str]:
        if self.exit_code:
            return [
                f"not promoted: {self.checkpoint} lacks passing evidence: "
                + ", ".join(self.missing),
                f'run `git checkpoint verify {self.checkpoint}`, or `promote --force --reason "…"`',
            ]
        how = f" (forced: {self.reason})" if self.forced else ""
        return [f"promoted: {self.checkpoint}{how}", *(f"note: {n}" for n in self.cut)]


def run(ctx: Context, name: str, *, force: bool, reason: str | None) -> PromoteResult:
    validate_text("--reason", reason)
    if force and not (reason and reason.strip()):
        raise UsageError("--force needs --reason: say why this checkpoint is trusted")
    if reason and not force:
        raise UsageError("--reason goes with --force")
    repo = ctx.repo
    cut: list[str] = []
    if reason:  # a note travels with a push: what the secret scan finds is never in it
        reason, notes = kept_text(reason, NOTE_MAX, ctx.config.secrets_allow)
        cut = [f"reason: {note}" for note in notes]
    with ctx.locked():
        cp = resolve(repo, name, ctx.task())
        events = read_events(repo, cp.commit)
        missing = missing_evidence(ctx.config, events)
        if missing and not force:
            return PromoteResult(cp.name, derive_status(events), False, missing, None, 1)
        if missing:  # forced: the evidence is short, so say who vouched and why
            append_event(
                repo,
                cp.commit,
                {
                    "event": "forced_promotion",
                    "reason": reason,
                    "by": repo.user_ident(),
                    "missing": missing,
                },
            )
        else:
            event = {"event": "promoted", "rule": ctx.config.promotion_rule}
            append_event(repo, cp.commit, {**event, "reason": reason} if reason else event)
        tasks.update_task(repo, cp.task, last_good_checkpoint=cp.id)
        oplog.log_event(repo, "promote", checkpoint=cp.name, forced=bool(missing), reason=reason)
    return PromoteResult(cp.name, "promoted", bool(missing), missing, reason, 0, cut)
