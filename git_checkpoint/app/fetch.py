"""`git checkpoint fetch [REMOTE] [--prune]`: the remote's checkpoints into
`refs/checkpoints/remotes/<remote>/`, their notes merged line by line; with --prune, the
fetched checkpoints the remote no longer has dropped, named and logged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..core.text import counted, printable
from ..share.remotes import Pruned, fetch
from ..storage import oplog
from .context import Context

PRUNED_SHOWN = 10


@dataclass(frozen=True)
class FetchResult:
    remote: str
    new: list[str]
    updated: list[str]
    refused: list[str]
    notes_merged: bool
    unsafe: list[str] = field(default_factory=list)
    pruned: list[Pruned] = field(default_factory=list)

    def lines(self) -> list[str]:
        if not self.new and not self.updated:
            out = [f"no new checkpoints on {self.remote}"]
        else:
            out = [f"fetched {counted(len(self.new), 'new checkpoint')} from {self.remote}"]
            if self.updated:
                out.append(f"updated {len(self.updated)}: {', '.join(self.updated[:5])}")
            tasks = sorted({n.rsplit("/", 1)[0] for n in self.new + self.updated})
            out.append(
                f"tasks: {', '.join(tasks[:10])}  (git checkpoint list --remote {self.remote})"
            )
        if self.notes_merged:
            out.append(f"notes: merged {self.remote}'s verifier results and events")
        if self.unsafe:
            shown = ", ".join(printable(r, 160) for r in self.unsafe[:3])
            more = f" and {len(self.unsafe) - 3} more" if len(self.unsafe) > 3 else ""
            out.append(
                f"refused {counted(len(self.unsafe), 'checkpoint')} that fail git's object check "
                f"(nothing of them written): {shown}{more}"
            )
        return out + self._pruned_lines()

    def _pruned_lines(self) -> list[str]:
        if not self.pruned:
            return []
        out = [
            f"pruned {counted(len(self.pruned), 'checkpoint')} that {self.remote} no longer has:"
        ]
        out += [f"  {p.name} (was {p.commit[:12]})" for p in self.pruned[:PRUNED_SHOWN]]
        if len(self.pruned) > PRUNED_SHOWN:
            out.append(f"  … and {len(self.pruned) - PRUNED_SHOWN} more")
        first = self.pruned[0]
        out.append(
            f"each is in git checkpoint log with its commit; bring one back with "
            f"git update-ref {first.ref} {first.commit}"
        )
        return out

    def warnings(self) -> list[str]:
        if not self.refused:
            return []
        shown = ", ".join(repr(printable(r, 80)) for r in self.refused[:3])
        return [
            f"left out {counted(len(self.refused), 'remote ref')} that are not checkpoints: {shown}"
        ]


def run(
    ctx: Context, remote: str, *, progress: Callable[[str], None], prune: bool = False
) -> FetchResult:
    repo = ctx.repo
    with ctx.locked():
        outcome = fetch(repo, remote, progress=progress, prune=prune)
        oplog.log_event(
            repo, "fetch", remote=remote, new=len(outcome.new), pruned=len(outcome.pruned)
        )
    return FetchResult(
        outcome.remote,
        outcome.new,
        outcome.updated,
        outcome.refused,
        outcome.notes_merged,
        outcome.unsafe,
        outcome.pruned,
    )
