"""`git checkpoint restore [CP]`: safety checkpoint first, then only what differs."""

from __future__ import annotations

from ..core.errors import UsageError
from ..gitcore import maintenance
from ..restore.limit import clean_paths
from ..restore.report import RestoreReport
from ..restore.run import continue_restore, restore_to
from ..storage import oplog
from ..storage.refs import TaskListing, resolve
from ..storage.sessions import turn_before
from .context import Context


def run(
    ctx: Context,
    name: str | None,
    *,
    dry_run: bool,
    move_head: bool,
    keep_head: bool,
    resume: bool,
    before_turn: int | None = None,
    session: str | None = None,
    paths: tuple[str, ...] = (),
) -> RestoreReport:
    """`before_turn`: the checkpoint that holds the workspace as it was before prompt N of
    an agent session (`session`, default: this worktree's latest), shell changes too.
    `paths` (below the top of the work tree): only those files and folders come back,
    their index entries too; everything else stays as it is."""
    repo = ctx.repo
    task = ctx.task()
    if before_turn is not None and name is not None:
        raise UsageError("--before-turn names the checkpoint: give no CHECKPOINT with it")
    if session is not None and before_turn is None:
        raise UsageError("--session goes with --before-turn")
    with ctx.locked():
        if resume:
            if paths:
                raise UsageError("--continue takes no paths")
            report = continue_restore(
                repo, ctx.config, task, keep_untracked=ctx.config_problem is not None
            )
        else:
            listing = TaskListing(repo, task)  # once, for the name and the safety save
            if before_turn is not None:
                turn = turn_before(repo, before_turn, session)
                name = turn.ref if repo.resolve_ref(turn.ref) == turn.commit else turn.commit
            target = resolve(repo, name or "@", task, listing)
            report = restore_to(
                repo,
                ctx.config,
                task,
                target,
                dry_run=dry_run,
                move_head=move_head,
                keep_head=keep_head,
                listed=listing.recent(),
                prescan=ctx.prescan,
                paths=clean_paths(paths) if paths else (),
                keep_untracked=ctx.config_problem is not None,
            )
        if not report.dry_run:
            oplog.log_event(
                repo,
                "restore",
                task=task,
                checkpoint=report.checkpoint,
                safety=report.safety_checkpoint,
                **({"paths": [_loggable(p) for p in paths]} if paths else {}),
                written=len(report.brought_back),
                removed=len(report.removed),
                resumed=resume,
            )
    maintenance.after(repo)
    return report


def _loggable(path: str) -> str:
    """`path` as the log's UTF-8 text can hold it: bytes of a name that are not UTF-8
    replaced, as --json prints them."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
