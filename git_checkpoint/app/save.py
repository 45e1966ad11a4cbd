"""`git checkpoint save`: capture the workspace as the task's next checkpoint."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.errors import CheckpointError, Refused
from ..fast import quickstate
from ..fast.quickcheck import import_beside
from ..gitcore.repo import concurrently
from ..save.capture import Snapshot, capture_workspace, start_listing
from ..storage import oplog as state
from ..storage import tasks
from ..storage.refs import Checkpoint, SaveOutcome, save_checkpoint, task_checkpoints, validate_text
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
        mode = ctx.config.secrets_on_save
        # Auto-saves never scan under `warn` (push scans again anyway).
        scanning = mode == "block" or (mode == "warn" and not auto)
        if mode == "warn" and scanning:  # the scan starts beside the store, at the end
            import_beside(f"{__package__.rpartition('.')[0]}.save.secrets")
        listing = start_listing(repo, ctx.config)  # beside the listing of the task
        try:
            existing = task_checkpoints(repo, name)  # listed once for the scan and the save
            # keep=True, as save_checkpoint would: the quick auto-save path starts from it.
            snapshot = capture_workspace(repo, ctx.config, keep=True, listing=listing)
        finally:
            if listing is not None:
                listing[1].finish()  # waited for, whatever became of the capture

        def store() -> SaveOutcome:
            return save_checkpoint(
                repo,
                ctx.config,
                name,
                message=message,
                hypothesis=record.hypothesis,
                next_move=record.next_move,
                auto=auto,
                snapshot=snapshot,
                existing=existing,
            )

        found: list[str] = []
        scan_problem: str | None = None
        if scanning and mode == "block":
            _refuse_secrets(ctx, snapshot, name, existing)
            outcome = store()
        elif scanning:  # warn: scanned while the checkpoint is written
            (found, scan_problem), outcome = concurrently(
                lambda: _warnings(ctx, snapshot, name, existing), store
            )
        else:
            outcome = store()
        cp = outcome.checkpoint
        pruned: list[str] = []
        prune_problem: str | None = None
        if outcome.created:
            state.log_event(repo, "save", task=name, checkpoint=cp.id, commit=cp.commit, auto=auto)
            if ctx.config.retention.auto:
                from ..storage.retention import auto_prune  # here: a save rarely needs it

                pruned, prune_problem = auto_prune(repo, ctx.config.retention, name)
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
        pruned=pruned,
        prune_problem=prune_problem,
        secret_findings=found if outcome.created else [],
        scan_problem=scan_problem if outcome.created else None,
    )


def _findings(ctx: Context, snapshot: Snapshot, task: str, existing: list[Checkpoint]) -> list[str]:
    """The secrets in what is new in the workspace (secrets.on_save)."""
    done = [c for c in existing if not c.is_safety]
    allow = ctx.config.secrets_allow
    from ..save.secrets import scan_snapshot  # here: on the scanning thread, beside the save

    return [f.describe() for f in scan_snapshot(ctx.repo, snapshot, task, allow, done)]


def _refuse_secrets(
    ctx: Context, snapshot: Snapshot, task: str, existing: list[Checkpoint]
) -> None:
    """secrets.on_save: block: nothing is saved while a secret is in the workspace."""
    try:
        found = _findings(ctx, snapshot, task, existing)
        if found:
            raise Refused(
                f"secrets in the workspace, nothing saved (secrets.on_save: block): "
                f"{'; '.join(found[:5])}; list false positives under secrets.allow"
            )
    except BaseException:
        quickstate.discard(snapshot.seed)
        raise


def _warnings(
    ctx: Context, snapshot: Snapshot, task: str, existing: list[Checkpoint]
) -> tuple[list[str], str | None]:
    """secrets.on_save: warn: the findings to name after the save, or why there are none
    (a scan that fails never fails the save it only comments on)."""
    try:
        return _findings(ctx, snapshot, task, existing), None
    except CheckpointError as exc:
        return [], f"secret scan failed: {exc}"
