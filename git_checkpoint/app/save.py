"""`git checkpoint save`: the workspace as the task's next checkpoint (save/session.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..save.overlay import SECRET_NAME, LeftOut
from ..save.session import SaveRequest, left_out_line, save_workspace, secret_warnings
from ..storage.refs import validate_text
from .context import Context


@dataclass(frozen=True)
class SaveResult:
    """What `save` made (or found already saved), and what it left out and why."""

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
    # Everything the save did not capture, and why (path, why, files, bytes).
    left_out: list[dict[str, object]] = field(default_factory=list)
    # The part of it no save named before (said on the normal output, once).
    newly_left_out: list[str] = field(default_factory=list)
    # What the save changed in the text it keeps (a secret redacted, a message cut).
    cut: list[str] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [f"unchanged since {self.checkpoint_id}"]
        if self.created:
            out = [f"checkpoint saved: {self.checkpoint_id}"]
        if self.newly_left_out:
            out.append(left_out_line(self.newly_left_out))
        out += [f"note: {note}" for note in self.cut]
        if self.pruned:
            out.append(
                f"pruned {len(self.pruned)} by the retention policy: {', '.join(self.pruned)} "
                "(`git checkpoint log` has each commit)"
            )
        return out

    def warnings(self) -> list[str]:
        out = []
        if self.prune_problem:
            out.append(self.prune_problem)
        out += secret_warnings(self.secret_findings, f"{self.task}/{self.checkpoint_id}")
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

    def say(item: LeftOut) -> bool:
        return ctx.config.secrets_on_save != "ignore" or item.why != SECRET_NAME

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
        left_out=[_recorded(o) for o in snap.left_out if say(o)],
        newly_left_out=[o.describe() for o in saved.newly_left_out],
        pruned=saved.pruned,
        prune_problem=saved.prune_problem,
        secret_findings=saved.secret_findings,
        scan_problem=saved.scan_problem,
        cut=list(saved.cut),
    )


def _recorded(item: LeftOut) -> dict[str, object]:
    return {"path": item.path, "why": item.why, "files": item.files, "bytes": item.size}
