"""Restore with a safety net: the HEAD check, the safety checkpoint, the journal.

`restore_to` is what `restore`, `undo` and the run loop's rollback share. Callers hold
the lock. Nothing is written before every path of the target has been checked.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace

from .config import CONFIG_NAME, Config, load_config
from .errors import Refused, UsageError
from .gitio import ZERO_OID, Repo
from .restore import (
    Journal,
    Plan,
    apply_plan,
    clear_journal,
    leftovers,
    plan_restore,
    prune_empty_parents,
    read_journal,
    set_journal_aside,
    write_journal,
)
from .snapshot import capture_workspace, list_overlay_candidates, split_overlay
from .state import now_iso
from .store import (
    SAFETY,
    Checkpoint,
    add_to_overlay,
    overlay_paths,
    resolve,
    save_checkpoint,
    task_checkpoints,
)


@dataclass(frozen=True)
class HeadMove:
    ref: str  # the branch moved, or HEAD when detached
    old: str | None
    new: str
    left_behind: list[str]  # commits no longer on the branch (reachable via the safety cp)


@dataclass(frozen=True)
class RestoreReport:
    checkpoint: str  # task/cp_NNN restored
    commit: str
    safety_checkpoint: str | None  # None on --dry-run and on --continue
    dry_run: bool
    brought_back: list[str]
    removed: list[str]
    head: HeadMove | None
    workspace_status: str  # "clean", or "not checked" on --dry-run

    def lines(self) -> list[str]:
        verb = "would restore" if self.dry_run else "restored"
        out = []
        if self.safety_checkpoint:
            out.append(
                f"safety checkpoint: {self.safety_checkpoint} (undo with: git checkpoint undo)"
            )
        out.append(
            f"{verb} {self.checkpoint}: {len(self.brought_back)} written, "
            f"{len(self.removed)} removed"
        )
        out += _listing("brought back" if not self.dry_run else "would write", self.brought_back)
        out += _listing("removed" if not self.dry_run else "would remove", self.removed)
        if self.head:
            h = self.head
            old = h.old[:12] if h.old else "(unborn)"
            out.append(
                f"head: {'would move' if self.dry_run else 'moved'} {h.ref} "
                f"from {old} to {h.new[:12]}"
            )
            if h.left_behind:
                keep = f" (kept in {self.safety_checkpoint})" if self.safety_checkpoint else ""
                out.append(
                    f"  commits left behind{keep}: " + ", ".join(c[:12] for c in h.left_behind[:10])
                )
        if not self.dry_run:
            out.append(f"workspace status: {self.workspace_status}")
        return out


def _listing(label: str, paths: list[str], limit: int = 20) -> list[str]:
    out = [f"  {label}: {p}" for p in paths[:limit]]
    if len(paths) > limit:
        out.append(f"  … and {len(paths) - limit} more")
    return out


def head_refusal(target: Checkpoint, head: str | None, branch: str | None) -> Refused:
    where = f"branch {branch!r}" if branch else "a detached HEAD"
    at = head[:12] if head else "no commit yet"
    saved_on = target.manifest.get("branch")
    saved = f" on branch {saved_on!r}" if isinstance(saved_on, str) else ""
    base = target.base[:12] if target.base else "an unborn HEAD"
    return Refused(
        f"HEAD has moved: {target.name} was saved{saved} at {base}, now {where} is at {at}. "
        f"Choose: --move-head (move {branch or 'HEAD'} back to {base}; later commits stay "
        "in the safety checkpoint) or --keep-head (restore files and index over the current HEAD)"
    )


def _left_behind(repo: Repo, old: str | None, new: str) -> list[str]:
    if old is None:
        return []
    out = repo.git("rev-list", "--max-count=50", old, f"^{new}").decode().split()
    return out


def restore_to(
    repo: Repo,
    config: Config,
    task: str,
    target: Checkpoint,
    *,
    dry_run: bool = False,
    move_head: bool = False,
    keep_head: bool = False,
    superseding: bool = False,
) -> RestoreReport:
    """Take a safety checkpoint, then make the managed set equal to `target`.

    `superseding`: an interrupted restore may be pending; this one replaces it (undo).
    """
    if move_head and keep_head:
        raise UsageError("--move-head and --keep-head exclude each other")
    journal = read_journal(repo)
    if journal is not None and not superseding:
        raise Refused(
            f"a restore of {journal.target_name} was interrupted: finish it with "
            "`git checkpoint restore --continue`, or go back with `git checkpoint undo`"
        )
    head, branch = repo.head()
    head_move: HeadMove | None = None
    if head != target.base:
        if not (move_head or keep_head):
            raise head_refusal(target, head, branch)
        if move_head:
            if target.base is None:
                raise Refused(
                    f"{target.name} was saved on an unborn HEAD: there is no commit to move "
                    "back to; use --keep-head"
                )
            ref = f"refs/heads/{branch}" if branch else "HEAD"
            head_move = HeadMove(ref, head, target.base, _left_behind(repo, head, target.base))

    current = capture_workspace(repo, config)
    plan = plan_restore(repo, current, target)
    if dry_run:
        return _report(target, None, plan, head_move, dry_run=True)

    safety = save_checkpoint(
        repo,
        config,
        task,
        message=f"before restore of {target.name}",
        auto=SAFETY,
        dedupe=False,
        snapshot=current,
        # Where this restore leaves HEAD: `undo` may move it back from there, not from
        # anywhere else.
        extra={"head_after_restore": head_move.new if head_move else head},
    ).checkpoint
    journal = Journal(
        target=target.commit,
        target_name=target.name,
        safety=safety.commit,
        safety_name=safety.name,
        head_from=head,
        head_to=head_move.new if head_move else None,
        move_head=head_move is not None,
        started_at=now_iso(),
        pid=os.getpid(),
    )
    write_journal(repo, journal)
    swept = _carry_out(repo, config, journal, plan, target)
    return _report(target, safety.name, plan, head_move, dry_run=False, swept=swept)


def continue_restore(repo: Repo, config: Config, task: str) -> RestoreReport:
    """Finish an interrupted restore from its journal (no new safety checkpoint)."""
    journal = read_journal(repo)
    if journal is None:
        raise UsageError("no interrupted restore to continue")
    target = resolve(repo, journal.target, task)
    head, branch = repo.head()
    head_move = None
    if journal.move_head and journal.head_to and head != journal.head_to:
        if head != journal.head_from:  # committed since the interruption: never drop that
            raise head_refusal(target, head, branch)
        ref = f"refs/heads/{branch}" if branch else "HEAD"
        head_move = HeadMove(ref, head, journal.head_to, _left_behind(repo, head, journal.head_to))
    plan = plan_restore(repo, capture_workspace(repo, config), target)
    swept = _carry_out(repo, config, journal, plan, target)
    return _report(target, journal.safety_name, plan, head_move, dry_run=False, swept=swept)


def _carry_out(
    repo: Repo, config: Config, journal: Journal, plan: Plan, target: Checkpoint
) -> list[str]:
    """Move HEAD, apply the plan, sweep what new ignore rules uncover; return swept paths."""
    if journal.move_head and journal.head_to:
        head, _ = repo.head()
        if head != journal.head_to:  # compare-and-swap from where the restore found HEAD
            repo.update_ref(
                "HEAD",
                journal.head_to,
                journal.head_from or ZERO_OID,
                f"checkpoint: restore {journal.target_name} (--move-head)",
            )
    apply_plan(repo, plan)
    swept = _sweep_uncovered(repo, config, journal, plan, target)
    missing = leftovers(repo, plan)
    if missing:
        raise Refused(
            f"restore finished but these still differ from {journal.target_name}: "
            f"{', '.join(missing[:10])}; run `git checkpoint restore --continue` or `undo`"
        )
    clear_journal(repo)
    return swept


RULE_FILES = (".gitignore", CONFIG_NAME)


def _sweep_uncovered(
    repo: Repo, config: Config, journal: Journal, plan: Plan, target: Checkpoint
) -> list[str]:
    """When the restore changed the ignore rules, files that were ignored before (so not
    in the safety checkpoint) may now count as the target's work: residue of the attempt.
    Add them to the safety checkpoint, then remove them, so the managed set under the
    restored rules equals the target and `undo` still brings everything back.
    """
    touched = [w.path for w in plan.writes] + list(plan.removes)
    if not any(p.rsplit("/", 1)[-1] in RULE_FILES for p in touched):
        return []
    try:
        rules = load_config(repo.root, repo.checkpoint_config())
    except UsageError:
        rules = config  # the restored .checkpoint.yaml is broken: keep the rules we had
    files, _, _ = split_overlay(list_overlay_candidates(repo, rules), rules)
    wanted = set(overlay_paths(repo, target))
    residue = [p for p in files if p not in wanted]
    if not residue or journal.safety_name is None:
        return []
    safety = resolve(repo, journal.safety_name, target.task)
    kept = add_to_overlay(repo, safety, residue)
    write_journal(repo, replace(journal, safety=kept))
    for path in residue:
        os.unlink(repo.root / path)
        prune_empty_parents(repo.root, path)
    return residue


def _report(
    target: Checkpoint,
    safety: str | None,
    plan: Plan,
    head_move: HeadMove | None,
    *,
    dry_run: bool,
    swept: list[str] | None = None,
) -> RestoreReport:
    return RestoreReport(
        checkpoint=target.name,
        commit=target.commit,
        safety_checkpoint=safety,
        dry_run=dry_run,
        brought_back=[w.path for w in plan.writes],
        removed=list(plan.removes) + (swept or []),
        head=head_move,
        workspace_status="not checked" if dry_run else "clean",
    )


def latest_safety(repo: Repo, task: str) -> Checkpoint:
    safeties = [c for c in task_checkpoints(repo, task) if c.is_safety]
    if not safeties:
        raise UsageError(f"nothing to undo: task {task!r} has no safety checkpoint")
    return safeties[-1]


def undo(
    repo: Repo, config: Config, task: str, *, move_head: bool = False, keep_head: bool = False
) -> RestoreReport:
    """Restore the latest safety checkpoint; itself undoable.

    HEAD goes back too when it is where the undone restore left it; if it moved since
    (a new commit), undo refuses like restore does, unless told --move-head/--keep-head.
    After an interrupted restore, it goes back to the state from before it.
    """
    try:
        journal = read_journal(repo)
    except UsageError:  # unreadable: set it aside; the latest safety checkpoint is the way back
        set_journal_aside(repo)
        journal = None
    if journal is not None and journal.safety:
        target = resolve(repo, journal.safety, task)
    else:
        target = latest_safety(repo, task)
    head, _ = repo.head()
    if head != target.base and not (move_head or keep_head):
        left_by_restore = target.manifest.get("head_after_restore")
        if journal is not None or head == left_by_restore:
            move_head, keep_head = target.base is not None, target.base is None
    return restore_to(
        repo,
        config,
        task,
        target,
        move_head=move_head,
        keep_head=keep_head,
        superseding=True,
    )
