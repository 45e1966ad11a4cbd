"""`git checkpoint task set`: update the task record (hypothesis, next safe move)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from ..storage import oplog, tasks
from ..storage.refs import validate_text
from .context import Context


@dataclass(frozen=True)
class TaskSetResult:
    task: str
    record: dict[str, Any]

    def lines(self) -> list[str]:
        out = [f"task {self.task} updated"]
        for key in ("hypothesis", "next_move"):
            if self.record.get(key):
                out.append(f"  {key.replace('_', ' ')}: {self.record[key]}")
        return out


def run(
    ctx: Context, *, task: str | None, hypothesis: str | None, next_move: str | None
) -> TaskSetResult:
    validate_text("--hypothesis", hypothesis)
    validate_text("--next", next_move)
    name = ctx.task(task)
    changes = {
        k: v for k, v in (("hypothesis", hypothesis), ("next_move", next_move)) if v is not None
    }
    with ctx.locked():
        record = tasks.update_task(ctx.repo, name, **changes)
        oplog.log_event(ctx.repo, "task-set", task=name, **changes)
    return TaskSetResult(name, asdict(record))
