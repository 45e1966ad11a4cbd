"""`git checkpoint push [REMOTE] [--task T…|--all|CP…] [--as NAME]`: share checkpoints."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ..core.errors import Refused, UsageError
from ..save.secrets import scan_checkpoints
from ..share.remotes import check_remote, push
from ..storage.refs import Checkpoint, history, load_checkpoints, resolve
from .context import Context

SHOWN = 5  # secret findings named in one message


@dataclass(frozen=True)
class PushResult:
    remote: str
    pushed: list[str]
    already_there: list[str]
    notes_pushed: int
    secret_findings: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = []
        if self.pushed:
            out.append(
                f"pushed {len(self.pushed)} checkpoint(s) to {self.remote}: {_span(self.pushed)}"
            )
        if self.already_there:
            out.append(f"already on {self.remote}: {_span(self.already_there)}")
        if self.notes_pushed:
            out.append(f"notes of {self.notes_pushed} checkpoint(s) merged into {self.remote}'s")
        if not out:
            out.append(f"{self.remote} is up to date")
        return out

    def warnings(self) -> list[str]:
        return [f"pushed with a secret: {f}" for f in self.secret_findings[:SHOWN]]


def _span(names: list[str]) -> str:
    return ", ".join(names) if len(names) <= 4 else f"{names[0]} … {names[-1]}"


def choose(
    ctx: Context, names: tuple[str, ...], tasks: tuple[str, ...], all_tasks: bool
) -> list[Checkpoint]:
    """What to push: named checkpoints (safety ones only when named), whole tasks, or
    the current task. Safety checkpoints stay local unless named.
    """
    repo = ctx.repo
    chosen: dict[str, Checkpoint] = {}
    for name in names:
        cp = resolve(repo, name, ctx.task())
        chosen[cp.ref] = cp
    if all_tasks:
        for cp in load_checkpoints(repo):
            if cp.remote is None and not cp.is_safety:
                chosen[cp.ref] = cp
    for task in tasks or (() if names or all_tasks else (ctx.task(),)):
        found = history(repo, ctx.task(task))
        if not found:
            raise UsageError(f"task {task!r} has no checkpoints to push")
        chosen.update((cp.ref, cp) for cp in found)
    if not chosen:
        raise UsageError("nothing to push: no checkpoints yet (git checkpoint save)")
    return list(chosen.values())


def run(
    ctx: Context,
    remote: str,
    *,
    names: tuple[str, ...],
    tasks: tuple[str, ...],
    all_tasks: bool,
    as_name: str | None,
    allow_secrets: bool,
    progress: Callable[[str], None],
) -> PushResult:
    try:
        check_remote(ctx.repo, remote)
    except UsageError as exc:
        if re.search(r"(^|/)cp_\d{3,}$|^@", remote):  # `push cp_003`: the remote comes first
            hint = f"to push a checkpoint: git checkpoint push origin {remote}"
            raise UsageError(f"{exc}; {hint}") from None
        raise
    chosen = choose(ctx, names, tasks, all_tasks)
    allowed: list[str] = []

    def check_secrets(new: list[Checkpoint]) -> list[str]:
        found = [f.describe() for f in scan_checkpoints(ctx.repo, new, ctx.config.secrets_allow)]
        if found and not allow_secrets and ctx.config.secrets_on_push == "block":
            more = f" and {len(found) - SHOWN} more" if len(found) > SHOWN else ""
            raise Refused(
                f"secrets found, nothing pushed: {'; '.join(found[:SHOWN])}{more}. Remove them "
                "and save again, list false positives under secrets.allow (a path or the "
                "fingerprint in brackets), or push with --allow-secrets"
            )
        allowed.extend(found)
        return found

    outcome = push(
        ctx.repo,
        chosen,
        remote,
        prefix=ctx.config.task_prefix,
        as_name=as_name,
        check_secrets=check_secrets,
        progress=progress,
    )
    return PushResult(
        outcome.remote, outcome.pushed, outcome.already_there, outcome.notes_pushed, allowed
    )
