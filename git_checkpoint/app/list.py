"""`git checkpoint list`: the checkpoints of a task (or all), newest last."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..core.errors import UsageError
from ..core.text import counted, escape_text, printable
from ..storage.manifest import age
from ..storage.notes import derive_status, read_events, verifier_summary
from ..storage.refs import REMOTE_ROOT, Checkpoint, load_checkpoints
from ..storage.sessions import SessionSummary, agent_sessions, session_id, session_of
from .context import Context


@dataclass(frozen=True)
class ListedCheckpoint:
    name: str
    task: str
    id: str
    commit: str
    created_at: str
    age: str
    status: str
    safety: bool
    auto: bool | str
    verifiers: dict[str, str]
    message: str
    overlay_files: int
    overlay_bytes: int
    remote: str | None
    session: dict[str, object] | None = None  # the agent session of a hook's save


@dataclass(frozen=True)
class ListResult:
    task: str | None
    checkpoints: list[ListedCheckpoint]

    def lines(self) -> list[str]:
        if not self.checkpoints:
            where = f"task {self.task!r}" if self.task else "this repository"
            return [f"no checkpoints in {where}"]
        show_task = self.task is None
        out = []
        for c in self.checkpoints:
            passed = sum(1 for s in c.verifiers.values() if s == "passed")
            checks = f"{passed}/{len(c.verifiers)} passed" if c.verifiers else "-"
            label = c.name if show_task else c.id
            kind = " [safety]" if c.safety else (" [auto]" if c.auto else "")
            overlay = f"+{c.overlay_files} untracked" if c.overlay_files else ""
            if c.session and c.session.get("turn"):
                kind += f" [turn {c.session['turn']}]"
            out.append(
                f"{label:<18} {c.age:>4}  {c.status:<9} {checks:<10} {overlay:<14} "
                f"{escape_text(c.message)}{kind}".rstrip()
            )
        return out


def _message(c: Checkpoint) -> str:
    text = f"(malformed: {c.problem}) {c.message}".strip() if c.problem else c.message
    return printable(text) if c.remote else text  # fetched text never reaches a terminal raw


def run(
    ctx: Context,
    *,
    task: str | None,
    all_tasks: bool,
    remote: str | None,
    session: str | None = None,
) -> ListResult:
    """`session`: only the checkpoints saved for this agent session (an id, or the start
    of one), across the repository's tasks."""
    repo = ctx.repo
    if session is not None:
        sid = session_id(repo, session)
        found = run(ctx, task=task, all_tasks=task is None, remote=remote)
        kept = [c for c in found.checkpoints if c.session and c.session.get("id") == sid]
        return ListResult(task=found.task, checkpoints=kept)
    if remote is not None:
        if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9._-]*", remote):
            raise UsageError(f"bad remote name {remote!r}")
        chosen = load_checkpoints(repo, f"{REMOTE_ROOT}{remote}/")
        if task is not None:
            chosen = [c for c in chosen if c.task == f"remotes/{remote}/{task}"]
        if not chosen:
            raise UsageError(
                f"no checkpoints fetched from {remote!r}"
                + (f" in task {task!r}" if task else "")
                + f" (git checkpoint fetch {remote})"
            )
        name = None
    elif all_tasks:
        chosen = [c for c in load_checkpoints(repo) if c.remote is None]
        name = None
    else:
        name = ctx.task(task)
        chosen = [c for c in load_checkpoints(repo) if c.task == name]
    listed = []
    for c in chosen:
        events = read_events(repo, c.commit)
        overlay = c.manifest.get("overlay")
        files, size = (
            (overlay.get("files"), overlay.get("bytes")) if isinstance(overlay, dict) else (0, 0)
        )
        listed.append(
            ListedCheckpoint(
                name=c.name,
                task=c.task,
                id=c.id,
                commit=c.commit,
                created_at=c.created_at,
                age=age(c.created_at),
                status=derive_status(events),
                safety=c.is_safety,
                auto=c.auto,
                verifiers=verifier_summary(events),
                message=_message(c),
                overlay_files=files if isinstance(files, int) else 0,
                overlay_bytes=size if isinstance(size, int) else 0,
                remote=c.remote,
                session=session_of(c),
            )
        )
    return ListResult(task=name, checkpoints=listed)


@dataclass(frozen=True)
class SessionsResult:
    sessions: list[SessionSummary]

    def lines(self) -> list[str]:
        if not self.sessions:
            return ["no agent sessions recorded (hooks record them: git checkpoint hooks install)"]
        out = []
        for s in self.sessions:
            last = f"  last {age(s.last_at)} ago" if s.last_at else ""
            out.append(
                f"{s.agent:<12} {printable(s.id, 40):<40} {counted(s.turns, 'turn'):>9} "
                f"{counted(s.checkpoints, 'checkpoint'):>15}{last}"
            )
        return out


def sessions(ctx: Context) -> SessionsResult:
    """Every agent session the hooks recorded in this repository, the latest last."""
    return SessionsResult(agent_sessions(ctx.repo))
