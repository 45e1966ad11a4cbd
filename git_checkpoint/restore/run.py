"""Restore with a safety net: `restore_to` is what `restore`, `undo` and the run loop's
rollback share (callers hold the lock), and `continue_restore` finishes one that was
interrupted.

Order of work, so that every kill point can be finished or undone: check everything ->
safety checkpoint -> journal -> stage every file (filters, blobs, space) -> carry the
plan out (carry.py) -> record the restore for undo, clear the journal. When a write fails
half way, the restore goes back to its safety checkpoint by itself.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import replace

from ..config.model import CONFIG_NAME, Config
from ..core.errors import CheckpointError, GitFailed, Refused, UsageError
from ..core.records import now_iso
from ..core.text import quote_path
from ..fast.prescan import Prescan
from ..gitcore import indexfile
from ..gitcore.repo import Repo
from ..save.capture import Snapshot, capture_workspace
from ..save.overlay import OVER_BYTES, OVER_FILES, SECRET_NAME
from ..save.session import left_out_fields, said_left_out
from ..storage import journal as journals
from ..storage.commits import Labels, store_checkpoint
from ..storage.journal import Journal
from ..storage.refs import SAFETY, Checkpoint, current_task
from .apply import Outcome
from .carry import Carrying, Journaling, WriteFailed, continued, recorded
from .checks import operation_in_progress
from .limit import limited_target
from .plan import Plan, Write, attributes_touched, plan_restore
from .report import HeadMove, RestoreReport, head_refusal, other_branch_refusal
from .stage import Stage, staged


def _head_move(repo: Repo, target: Checkpoint, move_head: bool, keep_head: bool) -> HeadMove | None:
    head, branch = repo.head()
    if head == target.base:
        return None
    saved_on = target.manifest.get("branch")
    if not (move_head or keep_head):
        if target.base is not None and saved_on != branch:  # --move-head would be refused
            raise other_branch_refusal(target, branch)
        raise head_refusal(target, head, branch)
    if keep_head:
        return None
    if target.base is None:
        raise Refused(
            f"{target.name} was saved on an unborn HEAD: there is no commit to move back to; "
            "use --keep-head"
        )
    if saved_on != branch:  # a checkpoint of another branch never moves this one
        raise other_branch_refusal(target, branch)
    ref = f"refs/heads/{branch}" if branch else "HEAD"
    return HeadMove(ref, head, target.base, _left_behind(repo, head, target.base))


def _left_behind(repo: Repo, old: str | None, new: str) -> list[str]:
    if old is None:
        return []
    return repo.git("rev-list", "--max-count=50", old, f"^{new}").decode().split()


def restore_to(
    repo: Repo,
    config: Config,
    task: str,
    target: Checkpoint,
    *,
    dry_run: bool = False,
    move_head: bool = False,
    keep_head: bool = False,
    kind: str = "restore",
    pending: Journal | None = None,
    listed: list[Checkpoint] | None = None,
    leave: Journal | None = None,
    prescan: Prescan | None = None,
    journaling: Journaling | None = None,
    paths: tuple[str, ...] = (),
    keep_untracked: bool = False,
) -> RestoreReport:
    """Take a safety checkpoint, then make the managed set equal to `target`; with
    `paths`, the managed set is those paths (limit.py), HEAD stays where it is.
    `listed`: the task's checkpoints, listed under the lock this restore holds.

    `pending`: an interrupted restore this one replaces (undo goes back over it).
    `leave`: the journal to leave once done, instead of none (a rollback of a failed
    undo leaves the interrupted restore that undo replaced).
    `prescan`: the launcher's early scan, for the safety snapshot.
    `journaling`: the journal writer of the restore this one is part of (a rollback).
    `keep_untracked`: untracked files the target lacks stay where they are (the
    configuration that says which are the tool's to manage could not be read).
    """
    if move_head and keep_head:
        raise UsageError("--move-head and --keep-head exclude each other")
    indexfile.release_stale_lock(os.fspath(repo.git_dir / "index"))  # (a killed restore's)
    busy = operation_in_progress(repo)
    if busy:
        raise Refused(f"not restoring: {busy}")
    journal = journals.read_journal(repo)
    if journal is not None and pending is None:
        raise Refused(
            f"a restore of {journal.target_name} was interrupted: finish it with "
            "`git checkpoint restore --continue`, or go back with `git checkpoint undo`"
        )
    head, _ = repo.head()
    head_move = None if paths else _head_move(repo, target, move_head, keep_head)
    current = capture_workspace(repo, config, prescan=prescan)
    origin = target
    if paths:
        target = limited_target(repo, current, target, paths)
    plan = plan_restore(repo, current, target, within=paths)
    kept: list[str] = []
    if keep_untracked:
        plan, kept = _untracked_kept(plan, current)
    if dry_run:
        return _report(
            repo,
            target,
            None,
            plan,
            head_move,
            dry_run=True,
            current=current,
            paths=paths,
            kept=kept,
        )
    writer = journaling or Journaling(repo)
    with writer.interrupts_named(), _staged(repo, plan, target) as stage:
        started = _begin(target, head, head_move, task, kind)
        if paths:
            started = replace(started, paths=paths, paths_from=origin.commit)
        if leave is not None:  # its journal says so too: a --continue of it leaves it
            started = replace(started, resume=journals.encoded(leave))

        def record(commit: str, name: str) -> None:
            # The journal names the way back before its ref exists: undo works from here.
            writer.write(replace(started, safety=commit, safety_name=name))

        message = f"before {kind} of {target.name}"
        safety = _safety(
            repo,
            config,
            task,
            current,
            message=message,
            before_ref=record,
            writes=plan.writes,
            listed=listed,
        )
        started = replace(started, safety=safety.commit, safety_name=safety.name)
        job = Carrying(repo, config, target, plan, stage, current, writer, started)
        outcome = _carried_out(job, pending=pending, leave=leave)
    return _report(
        repo,
        target,
        safety.name,
        plan,
        head_move,
        dry_run=False,
        outcome=outcome,
        current=current,
        paths=paths,
        kept=kept,
    )


def _untracked_kept(plan: Plan, current: Snapshot) -> tuple[Plan, list[str]]:
    """The plan without removing the untracked files it would remove (unless a file
    the target has goes below one); and those files."""
    overlay = set(current.overlay_files)
    kept = [
        p
        for p in plan.removes
        if p in overlay and not any(w.path.startswith(f"{p}/") for w in plan.writes)
    ]
    left = set(kept)
    return replace(plan, removes=tuple(p for p in plan.removes if p not in left)), kept


def _kept_caution(target: Checkpoint, kept: list[str]) -> str:
    shown = ", ".join(quote_path(p) for p in kept[:5])
    more = f" and {len(kept) - 5} more" if len(kept) > 5 else ""
    return (
        f"untracked files {target.name} lacks were left in place, as the configuration "
        f"that says which files are managed could not be read: {shown}{more}"
    )


@contextlib.contextmanager
def _staged(repo: Repo, plan: Plan, target: Checkpoint) -> Iterator[Stage]:
    """Every file to write, checked out aside: a missing blob, a failing filter or a full
    disk stops the restore here, before anything else is written.
    """
    staging = True
    try:
        with staged(repo, plan.writes, attributes_touched(plan)) as stage:
            staging = False
            yield stage
    except GitFailed as exc:
        if not staging or exc.argv[:1] not in (["cat-file"], ["update-index"]):
            raise
        raise GitFailed(
            exc.argv,
            exc.returncode,
            f"restore of {target.name} stopped before changing anything: "
            + (exc.stderr.strip().splitlines() or [""])[-1],
        ) from None
    except OSError as exc:
        if not staging:
            raise
        raise Refused(
            f"restore of {target.name} stopped before changing anything: {exc.strerror}"
        ) from None


def _begin(
    target: Checkpoint, head: str | None, head_move: HeadMove | None, task: str, kind: str
) -> Journal:
    """The journal of a restore about to start (its safety checkpoint comes next)."""
    return Journal(
        target=target.commit,
        target_name=target.name,
        safety="",
        safety_name="",
        head_from=head,
        head_to=head_move.new if head_move else None,
        move_head=head_move is not None,
        started_at=now_iso(),
        pid=os.getpid(),
        task=task,
        kind=kind,
    )


def _safety(
    repo: Repo,
    config: Config,
    task: str,
    current: Snapshot,
    *,
    message: str,
    before_ref: Callable[[str, str], None],
    writes: tuple[Write, ...],
    listed: list[Checkpoint] | None = None,
) -> Checkpoint:
    """The safety checkpoint: the snapshot the plan was made from, stored whatever the
    save policies say of it (it is the way back, not a save)."""
    # (a file the plan writes over is added to it before it goes: carry.py, adopted)
    written = {w.path for w in writes}
    said = said_left_out(config, current.left_out)
    left_out = [o for o in said if o.path not in written or o.why == SECRET_NAME]
    labels = Labels(message=message, auto=SAFETY, **left_out_fields(tuple(left_out)))
    stored = store_checkpoint(
        repo, config, task, current, labels, dedupe=False, before_ref=before_ref, existing=listed
    )
    return stored.checkpoint


def continue_restore(
    repo: Repo, config: Config, task: str, *, keep_untracked: bool = False
) -> RestoreReport:
    """Finish an interrupted restore from its journal, after a safety checkpoint of what
    is on disk now (files may have been made or edited since the interruption).
    `keep_untracked`: as restore_to's.
    """
    journal = journals.read_journal(repo)
    if journal is None:
        raise UsageError("no interrupted restore to continue")
    indexfile.release_stale_lock(os.fspath(repo.git_dir / "index"))  # (a killed restore's)
    busy = operation_in_progress(repo)
    if busy:
        raise Refused(f"not continuing the restore: {busy}")
    target = recorded(repo, journal.target, journal.target_name, journal.task or task)
    head, branch = repo.head()
    head_move = None
    if journal.move_head and journal.head_to and head != journal.head_to:
        if head != journal.head_from:  # committed since the interruption: never drop that
            raise head_refusal(target, head, branch)
        ref = f"refs/heads/{branch}" if branch else "HEAD"
        head_move = HeadMove(ref, head, journal.head_to, _left_behind(repo, head, journal.head_to))
    writer = Journaling(repo, pending=journal)  # a Ctrl-C from here names it half done
    paths = journal.paths
    with writer.interrupts_named():
        current = capture_workspace(repo, config)
        if paths:  # built again: what changed outside the paths since is not put back
            origin = recorded(repo, journal.paths_from, journal.target_name, journal.task or task)
            target = limited_target(repo, current, origin, paths)
        began = _began(repo, journal, task)
        plan = plan_restore(repo, current, target, began=began, within=paths)
        kept: list[str] = []
        if keep_untracked:
            plan, kept = _untracked_kept(plan, current)
    with writer.interrupts_named(), _staged(repo, plan, target) as stage:
        # The journal keeps its way back to before the whole restore; this run's safety
        # checkpoint is what `undo` goes back to once it finishes.
        pending: Journal = journal

        def record(commit: str, name: str) -> None:
            writer.write(continued(pending, commit, name))

        safety = _safety(
            repo,
            config,
            journal.task or task,
            current,
            message=f"before continuing {journal.target_name}",
            before_ref=record,
            writes=plan.writes,
        )
        journal = continued(journal, safety.commit, safety.name)
        job = Carrying(repo, config, target, plan, stage, current, writer, journal)
        outcome = _carried_out(job, pending=None, leave=None)
    report = _report(
        repo,
        target,
        safety.name,
        plan,
        head_move,
        dry_run=False,
        outcome=outcome,
        current=current,
        paths=paths,
        kept=kept,
    )
    if journals.resumed(journal) is not None:  # the restore it stood in for is pending
        return report  # again: its undo goes back before it (each command says so)
    # `undo` now goes back to before this --continue; say where the whole restore began.
    return replace(report, before_interrupted=journal.safety_name)


def _began(repo: Repo, journal: Journal, task: str) -> Checkpoint | None:
    """The state an interrupted restore began from (its safety checkpoint), if it is
    still here: the rule files it changed are changes still (plan_restore)."""
    try:
        return recorded(repo, journal.safety, journal.safety_name, journal.task or task)
    except UsageError:
        return None


def _carried_out(job: Carrying, *, pending: Journal | None, leave: Journal | None) -> Outcome:
    """The plan carried out; when a write fails half way, the workspace goes back to the
    safety checkpoint (and the error says so, or why it could not)."""
    try:
        return job.carry_out(pending=pending, leave=leave)
    except WriteFailed as failure:
        raise _gone_back(job, failure, pending) from None


def _gone_back(job: Carrying, failure: WriteFailed, pending: Journal | None) -> CheckpointError:
    """A write failed after the work tree was touched: go back to the safety
    checkpoint by ourselves; if that fails too, the journal stays for `undo`.
    `pending`: the interrupted restore this one replaced (an undo of it): once back,
    its journal is left again, so that `undo` and `--continue` still know its way
    back.
    """
    repo, journal, exc = job.repo, failure.journal, failure.cause
    what = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    where = f" ({exc.filename})" if isinstance(exc, OSError) and exc.filename else ""
    code = exc.exit_code if isinstance(exc, CheckpointError) else 4
    back, back_name = journal.safety, journal.safety_name
    if journal.continued_from:  # a --continue goes back to what it found, and its
        back, back_name = journal.continued_from[-1], journal.continued_names[-1]
        pending = replace(  # interrupted restore stays there to undo or continue
            journal,
            continued_from=journal.continued_from[:-1],
            continued_names=journal.continued_names[:-1],
        )
    try:
        safety = recorded(repo, back, back_name, journal.task)
        restore_to(
            repo,
            job.config,
            journal.task,
            safety,
            move_head=journal.move_head,
            keep_head=not journal.move_head,
            kind="rollback",
            pending=journal,
            leave=pending,
            journaling=job.writer,
        )
    except (OSError, CheckpointError) as again:
        error = Refused(
            f"restore of {journal.target_name} failed: {what}{where}; going back to "
            f"{back_name} failed too ({again}); once the cause is fixed, "
            "`git checkpoint restore --continue` finishes going back"
        )
    else:
        still = (
            f"; the interrupted {pending.kind} of {pending.target_name} is still there to "
            "`git checkpoint undo` or `git checkpoint restore --continue` once the cause "
            "is fixed"
            if pending is not None
            else ""
        )
        error = Refused(
            f"restore of {journal.target_name} failed: {what}{where}; the workspace was "
            f"put back as it was (safety checkpoint {back_name}){still}"
        )
    error.exit_code = code if code in (3, 4) else 4
    return error


def _report(
    repo: Repo,
    target: Checkpoint,
    safety: str | None,
    plan: Plan,
    head_move: HeadMove | None,
    *,
    dry_run: bool,
    outcome: Outcome | None = None,
    current: Snapshot,
    paths: tuple[str, ...] = (),
    kept: list[str] | None = None,
) -> RestoreReport:
    """What the restore did (or, dry, would do); `kept`: the untracked files it left in
    place as the configuration could not be read (_untracked_kept)."""
    residue = outcome.removed_residue if outcome else []
    writes = [w.path for w in plan.writes if not outcome or w.path not in outcome.as_written]
    removes = [p for p in plan.removes if not outcome or p not in outcome.kept] + residue
    # Over a limit and left in place; not a file the restore replaced (after it was kept
    # in the safety checkpoint, `adopted`) or removed.
    changed = {*writes, *removes}
    beyond = [
        o.describe()
        for o in current.left_out
        if o.why in (OVER_FILES, OVER_BYTES) and o.path not in changed
    ]
    return RestoreReport(
        checkpoint=target.name,
        commit=target.commit,
        safety_checkpoint=safety,
        dry_run=dry_run,
        brought_back=[] if dry_run else writes,
        removed=[] if dry_run else removes,
        would_bring_back=writes if dry_run else [],
        would_remove=removes if dry_run else [],
        head=head_move,
        workspace_status="not checked" if dry_run else "matches",
        submodules=outcome.submodules if outcome else [],
        cautions=[*_cautions(target, plan), *([_kept_caution(target, kept)] if kept else [])],
        shown=shown_name(repo, target),
        beyond_limits=beyond,
        paths=list(paths),
    )


def shown_name(repo: Repo, cp: Checkpoint) -> str:
    """`cp_003` for one of the current task's own checkpoints, else its full name."""
    own = cp.remote is None and cp.task == current_task(repo)
    return cp.id if own else cp.name


def _cautions(target: Checkpoint, plan: Plan) -> list[str]:
    """A fetched checkpoint that brings its own .checkpoint.yaml brings its own verifier
    commands, which the next `verify` or `run` would execute: say so before that happens.
    """
    touched = {w.path for w in plan.writes} | set(plan.removes)
    if target.remote is None or CONFIG_NAME not in touched:
        return []
    return [
        f"{target.name} came from remote {target.remote!r} and changes {CONFIG_NAME}: "
        f"read its verifier commands (git diff HEAD -- {CONFIG_NAME}) before "
        "`git checkpoint verify` or `run` executes them"
    ]
