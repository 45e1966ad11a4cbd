"""`git checkpoint drop CP…`: delete checkpoints, saying how to bring each back."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import Refused
from ..gitcore.repo import Repo
from ..storage import oplog
from ..storage.journal import read_journal
from ..storage.refs import resolve
from .context import Context


@dataclass(frozen=True)
class Dropped:
    name: str
    ref: str
    commit: str


@dataclass(frozen=True)
class DropResult:
    dropped: list[Dropped]

    def lines(self) -> list[str]:
        out = []
        for d in self.dropped:
            out.append(f"dropped {d.name} (was {d.commit[:12]})")
            out.append(f"  undo with: git update-ref {d.ref} {d.commit}")
        return out


def run(ctx: Context, names: list[str]) -> DropResult:
    repo = ctx.repo
    task = ctx.task()
    with ctx.locked():
        chosen = {}
        for name in names:  # resolve all first: a typo drops nothing
            cp = resolve(repo, name, task)
            chosen[cp.ref] = cp
        needed = _needed_by_pending_restore(repo)
        for cp in chosen.values():
            if cp.commit in needed:
                raise Refused(
                    f"not dropping {cp.name}: an interrupted restore needs it; finish it with "
                    "`git checkpoint restore --continue` or go back with `git checkpoint undo`"
                )
        dropped = []
        for cp in chosen.values():
            # Logged first: a kill between the two leaves a log line that names the
            # commit, never a checkpoint gone with no word of how to bring it back.
            oplog.log_event(
                repo, "drop", task=cp.task, checkpoint=cp.id, commit=cp.commit, ref=cp.ref
            )
            repo.delete_ref(cp.ref, cp.commit)
            dropped.append(Dropped(cp.name, cp.ref, cp.commit))
    return DropResult(dropped)


def _needed_by_pending_restore(repo: Repo) -> set[str]:
    journal = read_journal(repo)
    if journal is None:
        return set()
    return {journal.target, journal.safety, *journal.continued_from}
