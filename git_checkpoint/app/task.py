"""`git checkpoint task set`: update the task record (hypothesis, next safe move)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from ..core.anytype import Any
from ..save.session import kept_text
from ..storage import oplog, tasks
from ..storage.commits import NOTE_MAX
from ..storage.refs import validate_text
from .context import Context


@dataclass(frozen=True)
class TaskSetResult:
    task: str
    record: dict[str, Any]
    cut: list[str] = field(default_factory=list)  # what was changed in the text kept

    def lines(self) -> list[str]:
        out = [f"task {self.task} updated"]
        for key in ("hypothesis", "next_move"):
            if self.record.get(key):
                out.append(f"  {key.replace('_', ' ')}: {self.record[key]}")
        return out + [f"note: {note}" for note in self.cut]


def run(
    ctx: Context, *, task: str | None, hypothesis: str | None, next_move: str | None
) -> TaskSetResult:
    validate_text("--hypothesis", hypothesis)
    validate_text("--next", next_move)
    name = ctx.task(task)
    changes: dict[str, str] = {}
    cut: list[str] = []
    for key, value in (("hypothesis", hypothesis), ("next_move", next_move)):
        if value is not None:
            changes[key], notes = kept_text(value, NOTE_MAX, ctx.config.secrets_allow)
            cut += [f"{key.replace('_', ' ')}: {note}" for note in notes]
    with ctx.locked():
        record = tasks.update_task(ctx.repo, name, **changes)
        oplog.log_event(ctx.repo, "task-set", task=name, **changes)
    return TaskSetResult(name, asdict(record), cut)
