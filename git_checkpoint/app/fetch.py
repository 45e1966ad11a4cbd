"""`git checkpoint fetch [REMOTE]`: the remote's checkpoints into
`refs/checkpoints/remotes/<remote>/`, their notes merged line by line.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..core.text import printable
from ..share.remotes import fetch
from ..storage import oplog
from .context import Context


@dataclass(frozen=True)
class FetchResult:
    remote: str
    new: list[str]
    updated: list[str]
    refused: list[str]
    notes_merged: bool

    def lines(self) -> list[str]:
        if not self.new and not self.updated:
            out = [f"no new checkpoints on {self.remote}"]
        else:
            out = [f"fetched {len(self.new)} new checkpoint(s) from {self.remote}"]
            if self.updated:
                out.append(f"updated {len(self.updated)}: {', '.join(self.updated[:5])}")
            tasks = sorted({n.rsplit("/", 1)[0] for n in self.new + self.updated})
            out.append(
                f"tasks: {', '.join(tasks[:10])}  (git checkpoint list --remote {self.remote})"
            )
        if self.notes_merged:
            out.append(f"notes: merged {self.remote}'s verifier results and events")
        return out

    def warnings(self) -> list[str]:
        if not self.refused:
            return []
        shown = ", ".join(repr(printable(r, 80)) for r in self.refused[:3])
        return [f"left out {len(self.refused)} remote ref(s) that are not checkpoints: {shown}"]


def run(ctx: Context, remote: str, *, progress: Callable[[str], None]) -> FetchResult:
    repo = ctx.repo
    with ctx.locked():
        outcome = fetch(repo, remote, progress=progress)
        oplog.log_event(repo, "fetch", remote=remote, new=len(outcome.new))
    return FetchResult(
        outcome.remote, outcome.new, outcome.updated, outcome.refused, outcome.notes_merged
    )
