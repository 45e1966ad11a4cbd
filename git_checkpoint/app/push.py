"""`git checkpoint push [REMOTE] [--task T…|--all|CP…] [--as NAME]`: share checkpoints, and
send back the notes (new evidence) of checkpoints fetched from REMOTE."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ..core.errors import Refused, UsageError
from ..core.text import counted
from ..save.secrets import Finding, scan_checkpoints
from ..share.remotes import check_remote, fetched_with_notes, push
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
    notes_of: list[str] = field(default_factory=list)  # names on the remote
    gone: list[str] = field(default_factory=list)  # fetched, no longer on the remote

    def lines(self) -> list[str]:
        out = []
        if self.pushed:
            out.append(
                f"pushed {counted(len(self.pushed), 'checkpoint')} to {self.remote}: "
                f"{_span(self.pushed)}"
            )
        if self.already_there:
            out.append(f"already on {self.remote}: {_span(self.already_there)}")
        if self.notes_pushed:
            out.append(
                f"pushed the notes of {counted(self.notes_pushed, 'checkpoint')}, merged into "
                f"{self.remote}'s: {_span(self.notes_of)}"
            )
        if not out:
            out.append(f"{self.remote} is up to date")
        return out

    def warnings(self) -> list[str]:
        out = [f"pushed with a secret: {f}" for f in self.secret_findings[:SHOWN]]
        if self.gone:
            out.append(
                f"{self.remote} no longer has {_span(self.gone)}: the notes of "
                f"{'it' if len(self.gone) == 1 else 'them'} stay here "
                f"(git checkpoint fetch --prune {self.remote} drops what {self.remote} dropped)"
            )
        return out


def secrets_refusal(remote: str, new: list[Checkpoint], findings: list[Finding]) -> Refused:
    """Nothing pushed, naming the checkpoints that hold a secret, with the commands that
    get the push through: drop them (or push the others by name), allow a false
    positive by its fingerprint, or push anyway."""
    found = [f.describe() for f in findings]
    more = f" and {len(found) - SHOWN} more" if len(found) > SHOWN else ""
    holding = list(dict.fromkeys(f.checkpoint for f in findings if f.checkpoint))
    others = [cp.name for cp in new if cp.name not in holding]
    ways = [f"drop what holds them (git checkpoint drop {' '.join(holding)})"]
    if others and len(others) <= 10:  # (a runnable command: every name in it)
        ways.append(f"push the others by name (git checkpoint push {remote} {' '.join(others)})")
    fingerprints = list(dict.fromkeys(f.fingerprint for f in findings))[:SHOWN]
    ways.append(
        f"a false positive: list it under secrets.allow in .checkpoint.yaml "
        f"({', '.join(fingerprints)})"
    )
    ways.append("or push them anyway with --allow-secrets")
    return Refused(
        f"secrets found in {', '.join(holding)}, nothing pushed: "
        f"{'; '.join(found[:SHOWN])}{more}. To push: " + "; ".join(ways)
    )


def _span(names: list[str]) -> str:
    return ", ".join(names) if len(names) <= 4 else f"{names[0]} … {names[-1]}"


def choose(
    ctx: Context,
    names: tuple[str, ...],
    tasks: tuple[str, ...],
    all_tasks: bool,
    *,
    evidence: bool = False,
) -> list[Checkpoint]:
    """What to push: named checkpoints (safety ones only when named), whole tasks, or
    the current task. Safety checkpoints stay local unless named. `evidence`: notes of
    fetched checkpoints go back too, so the current task may have none of its own.
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
    for task in tasks:
        found = history(repo, ctx.task(task))
        if not found:
            raise UsageError(f"task {task!r} has no checkpoints to push")
        chosen.update((cp.ref, cp) for cp in found)
    if not (names or tasks or all_tasks):
        current = history(repo, ctx.task())
        if not current and not evidence:
            raise UsageError(
                f"task {ctx.task()!r} has no checkpoints to push, and no checkpoint "
                "fetched from the remote has notes to send back"
            )
        chosen.update((cp.ref, cp) for cp in current)
    if not chosen and not evidence:
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
    # Unless checkpoints are named, what this machine recorded on checkpoints fetched
    # from there (a verify, a promotion) goes back with the push.
    evidence = [] if names else fetched_with_notes(ctx.repo, remote)
    chosen = choose(ctx, names, tasks, all_tasks, evidence=bool(evidence))
    allowed: list[str] = []

    def check_secrets(new: list[Checkpoint]) -> list[str]:
        findings = scan_checkpoints(ctx.repo, new, ctx.config.secrets_allow)
        found = [f.describe() for f in findings]
        if found and not allow_secrets and ctx.config.secrets_on_push == "block":
            raise secrets_refusal(remote, new, findings)
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
        evidence=evidence,
    )
    return PushResult(
        outcome.remote,
        outcome.pushed,
        outcome.already_there,
        outcome.notes_pushed,
        allowed,
        outcome.notes_of,
        outcome.gone,
    )
