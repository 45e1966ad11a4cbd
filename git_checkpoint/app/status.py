"""`git checkpoint status`: where the task stands, and whether the workspace drifted."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import Refused
from ..core.text import counted, escape_text, quote_path
from ..restore.plan import managed_differences
from ..save.capture import capture_workspace
from ..storage import tasks
from ..storage.journal import read_journal
from ..storage.lock import lock_holder
from ..storage.notes import derive_status, read_events, verifier_summary
from ..storage.refs import history
from ..verify.verifiers import verifier_line
from .context import Context


@dataclass(frozen=True)
class StatusResult:
    task: str
    latest: str | None
    latest_status: str | None
    last_good: str | None
    drift: list[str]  # managed paths that differ from the latest checkpoint
    verifiers: dict[str, str]  # latest results on the latest checkpoint
    next_move: str | None
    hypothesis: str | None
    interrupted_restore: str | None
    restore_in_progress: int | None  # pid holding the lock while that restore runs
    exit_code: int = 0
    unreadable: str | None = None  # why the workspace could not be compared (a FIFO)

    def lines(self) -> list[str]:
        out = [f"task: {self.task}"]
        if self.latest is None:
            out.append("latest checkpoint: none (git checkpoint save)")
        else:
            out.append(f"latest checkpoint: {self.latest} ({self.latest_status})")
        out.append(f"last good checkpoint: {self.last_good or 'none yet'}")
        if self.interrupted_restore and self.restore_in_progress:
            out.append(
                f"restore of {self.interrupted_restore} in progress "
                f"(pid {self.restore_in_progress})"
            )
        elif self.interrupted_restore:
            out.append(
                f"interrupted restore of {self.interrupted_restore}: "
                "git checkpoint restore --continue, or undo"
            )
        if self.latest is not None:
            if self.unreadable:
                out.append(f"drift since {self.latest}: unknown ({self.unreadable})")
            elif self.drift:
                out.append(f"drift since {self.latest}: {counted(len(self.drift), 'file')}")
                out += [f"  {quote_path(p)}" for p in self.drift[:20]]
                if len(self.drift) > 20:
                    out.append(f"  … and {len(self.drift) - 20} more")
            else:
                out.append(f"drift since {self.latest}: none")
        for name, result in self.verifiers.items():
            out.append(verifier_line(name, result))
        if self.hypothesis:
            out.append(f"hypothesis: {escape_text(self.hypothesis)}")
        move = self.next_move or "none recorded (git checkpoint task set --next …)"
        out.append(f"next move: {escape_text(move)}")
        return out


def run(ctx: Context, *, task: str | None, exit_code: bool) -> StatusResult:
    repo = ctx.repo
    name = ctx.task(task)
    record = tasks.load_task(repo, name)
    normal = history(repo, name)
    latest = normal[-1] if normal else None
    drift: list[str] = []
    verifiers: dict[str, str] = {}
    status = None
    unreadable = None
    if latest is not None:
        try:
            current = capture_workspace(repo, ctx.config, allow_unmerged=True)
            drift = managed_differences(repo, current, latest)
        except Refused as exc:  # status only reads: it says why, and goes on
            unreadable = str(exc)
        events = read_events(repo, latest.commit)
        verifiers, status = verifier_summary(events), derive_status(events)
    journal = read_journal(repo)
    return StatusResult(
        task=name,
        latest=latest.id if latest else None,
        latest_status=status,
        last_good=tasks.last_good(repo, record, normal),
        drift=drift,
        verifiers=verifiers,
        next_move=record.next_move,
        hypothesis=record.hypothesis,
        interrupted_restore=journal.target_name if journal else None,
        restore_in_progress=lock_holder(repo) if journal else None,
        exit_code=1 if exit_code and (drift or unreadable) else 0,
        unreadable=unreadable,
    )
