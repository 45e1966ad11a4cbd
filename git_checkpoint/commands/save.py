"""`git checkpoint save`: capture the workspace as the task's next checkpoint."""

from __future__ import annotations

from dataclasses import dataclass

from .. import state, tasks
from ..context import Context
from ..store import save_checkpoint


@dataclass(frozen=True)
class SaveResult:
    task: str
    checkpoint_id: str
    ref: str
    commit: str
    created: bool
    overlay_files: int
    overlay_bytes: int
    secrets_left_out: list[str]
    nested_repos_left_out: list[str]
    say_secrets: bool = True  # secrets.on_save: ignore leaves them out without a word

    def lines(self) -> list[str]:
        if not self.created:
            return [f"unchanged since {self.checkpoint_id}"]
        return [f"checkpoint saved: {self.checkpoint_id}"]

    def warnings(self) -> list[str]:
        out = []
        if self.secrets_left_out and self.say_secrets:
            shown = ", ".join(self.secrets_left_out[:5])
            more = (
                f" and {len(self.secrets_left_out) - 5} more"
                if len(self.secrets_left_out) > 5
                else ""
            )
            out.append(f"left out secret-looking files: {shown}{more}")
        if self.nested_repos_left_out:
            out.append(f"left out nested repositories: {', '.join(self.nested_repos_left_out[:5])}")
        return out


def run(
    ctx: Context,
    *,
    task: str | None,
    message: str,
    hypothesis: str | None,
    next_move: str | None,
    auto: bool,
) -> SaveResult:
    repo = ctx.repo
    name = ctx.task(task)
    with state.locked(repo, ctx.config.lock_timeout):
        record = tasks.load_task(repo, name)
        if hypothesis is not None or next_move is not None:
            record = tasks.update_task(
                repo,
                name,
                hypothesis=hypothesis if hypothesis is not None else record.hypothesis,
                next_move=next_move if next_move is not None else record.next_move,
            )
        outcome = save_checkpoint(
            repo,
            ctx.config,
            name,
            message=message,
            hypothesis=record.hypothesis,
            next_move=record.next_move,
            auto=auto,
        )
        cp = outcome.checkpoint
        if outcome.created:
            state.log_event(repo, "save", task=name, checkpoint=cp.id, commit=cp.commit, auto=auto)
    snap = outcome.snapshot
    return SaveResult(
        task=name,
        checkpoint_id=cp.id,
        ref=cp.ref,
        commit=cp.commit,
        created=outcome.created,
        overlay_files=len(snap.overlay_files),
        overlay_bytes=snap.overlay_bytes,
        secrets_left_out=list(snap.secrets_left_out),
        nested_repos_left_out=list(snap.nested_repos_left_out),
        say_secrets=ctx.config.secrets_on_save != "ignore",
    )
