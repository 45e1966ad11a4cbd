"""`git checkpoint log`: the operation log, newest first."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.anytype import Any
from ..storage.oplog import read_events_log
from .context import Context


@dataclass(frozen=True)
class LogResult:
    events: list[dict[str, Any]]

    def lines(self) -> list[str]:
        if not self.events:
            return ["no operations logged yet"]
        out = []
        for e in self.events:
            rest = " ".join(
                f"{k}={v}" for k, v in e.items() if k not in ("at", "op") and v not in (None, False)
            )
            out.append(f"{e.get('at', '?')}  {e.get('op', '?'):<10} {rest}".rstrip())
        return out


def run(ctx: Context, *, limit: int | None) -> LogResult:
    events = list(reversed(read_events_log(ctx.repo)))
    return LogResult(events[:limit] if limit else events)
