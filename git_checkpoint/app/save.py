"""`git checkpoint save`: the workspace as the task's next checkpoint (save/session.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..save.session import SaveRequest, save_workspace
from ..storage.refs import validate_text
from .context import Context


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
    pruned: list[str] = field(default_factory=list)  # retention.auto: what went after the save
    prune_problem: str | None = None
    secret_findings: list[str] = field(default_factory=list)  # secrets.on_save: warn
    scan_problem: str | None = None  # the warn-mode scan could not run

    def lines(self) -> list[str]:
        if not self.created:
            return [f"unchanged since {self.checkpoint_id}"]
        out = [f"checkpoint saved: {self.checkpoint_id}"]
        if self.pruned:
            out.append(
                f"pruned {len(self.pruned)} by the retention policy: {', '.join(self.pruned)} "
                "(`git checkpoint log` has each commit)"
            )
        return out

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
            shown = ", ".join(self.nested_repos_left_out[:5])
            out.append(f"left out (nested repositories and names git cannot store): {shown}")
        if self.prune_problem:
            out.append(self.prune_problem)
        out += [f"possible secret saved: {f}" for f in self.secret_findings[:5]]
        if self.scan_problem:
            out.append(self.scan_problem)
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
    for option, text in (
        ("--message", message),
        ("--hypothesis", hypothesis),
        ("--next", next_move),
    ):
        validate_text(option, text)
    name = ctx.task(task)
    request = SaveRequest(
        task=name, message=message, hypothesis=hypothesis, next_move=next_move, auto=auto
    )
    saved = save_workspace(ctx.repo, ctx.config, request, prescan=ctx.prescan)
    cp, snap = saved.checkpoint, saved.snapshot
    return SaveResult(
        task=name,
        checkpoint_id=cp.id,
        ref=cp.ref,
        commit=cp.commit,
        created=saved.created,
        overlay_files=len(snap.overlay_files),
        overlay_bytes=snap.overlay_bytes,
        secrets_left_out=list(snap.secrets_left_out),
        nested_repos_left_out=list(snap.nested_repos_left_out),
        say_secrets=ctx.config.secrets_on_save != "ignore",
        pruned=saved.pruned,
        prune_problem=saved.prune_problem,
        secret_findings=saved.secret_findings,
        scan_problem=saved.scan_problem,
    )
