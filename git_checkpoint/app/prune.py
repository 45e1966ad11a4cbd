"""`git checkpoint prune [--dry-run] [--task T|--all]`: apply the retention policy."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from ..core.errors import UsageError
from ..storage import retention
from ..storage.retention import GC_GRACE, Decision
from .context import Context


@dataclass(frozen=True)
class PruneResult:
    dry_run: bool
    tasks: list[str]
    removed: list[Decision]
    kept: list[Decision]

    def lines(self) -> list[str]:
        out = []
        verb = "would remove" if self.dry_run else "removed"
        for d in self.removed:
            out.append(f"{verb} {d.name} ({d.reason})")
            if not self.dry_run:
                out.append(f"  undo with: {d.restore_command()}")
        reasons = Counter(d.reason for d in self.kept)
        why = ", ".join(f"{n} {reason}" for reason, n in reasons.most_common())
        where = ", ".join(self.tasks) if self.tasks else "no tasks"
        kept = f"kept {len(self.kept)} in {where}" + (f": {why}" if why else "")
        if not self.removed:
            return [f"nothing to prune; {kept}"]
        out.append(kept)
        if not self.dry_run:
            out.append(
                f"removed checkpoints stay in git's object store until `git gc` expires them "
                f"(about {GC_GRACE}); `git checkpoint log` lists each with its commit"
            )
        return out


def run(ctx: Context, *, dry_run: bool, task: str | None, all_tasks: bool) -> PruneResult:
    if task is not None and all_tasks:
        raise UsageError("--task and --all exclude each other")
    repo = ctx.repo
    with ctx.locked():
        names = retention.local_tasks(repo) if all_tasks else [ctx.task(task)]
        decisions = retention.plan(repo, ctx.config.retention, names)
        removed = (
            [d for d in decisions if d.remove] if dry_run else retention.remove(repo, decisions)
        )
    kept = [d for d in decisions if not d.remove]
    return PruneResult(dry_run=dry_run, tasks=names, removed=removed, kept=kept)
