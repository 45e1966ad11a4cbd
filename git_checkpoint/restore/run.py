"""Restore with a safety net: the checks, the safety checkpoint, the journal, and the
carrying out of a plan, or going back when it fails.

`restore_to` is what `restore`, `undo` and the run loop's rollback share; callers hold
the lock. Order of work, so that every kill point can be finished or undone:
check everything -> safety checkpoint -> journal -> stage every file (filters, blobs,
space) -> move HEAD -> rule files -> store newly uncovered residue in the safety
checkpoint -> remove and write (each only if its bytes are stored) -> index -> check.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

from ..config.model import CONFIG_NAME, Config
from ..config.parse import load_config
from ..core.errors import CheckpointError, GitFailed, Refused, UsageError
from ..core.interrupts import RestoreInterrupted
from ..core.records import now_iso
from ..core.text import quote_path
from ..fast import quickstate
from ..fast.prescan import Prescan
from ..gitcore import indexfile
from ..gitcore.formats import ZERO_OID
from ..gitcore.pathrules import git_refuses_path
from ..gitcore.repo import Repo
from ..save.capture import Snapshot, capture_workspace
from ..save.overlay import list_overlay_candidates, looks_secret, split_overlay
from ..storage import journal as journals
from ..storage.commits import Labels, add_to_overlay, store_checkpoint, trees_of
from ..storage.journal import Journal
from ..storage.refs import SAFETY, Checkpoint, checkpoint_at
from .apply import (
    Outcome,
    changed_since,
    leftovers,
    move_into_place,
    remove_files,
    unstored,
    update_index,
)
from .checks import operation_in_progress, through_folders
from .plan import Plan, TreeView, attributes_touched, plan_restore, under_rules
from .report import HeadMove, RestoreReport, head_refusal, other_branch_refusal
from .stage import Stage, restage, staged

RULE_FILES = (".gitignore", CONFIG_NAME)


class Journaling:
    """Writes a worktree's restore journal, and remembers the restore whose journal this
    process wrote and has not cleared: a Ctrl-C then says how to go on."""

    def __init__(self, repo: Repo) -> None:
        self.repo = repo
        self.written: str | None = None  # the target's name

    def write(self, journal: Journal) -> None:
        journals.write_journal(self.repo, journal)
        self.written = journal.target_name

    def clear(self) -> None:
        journals.clear_journal(self.repo)
        self.written = None

    @contextlib.contextmanager
    def interrupts_named(self) -> Iterator[None]:
        """A Ctrl-C (SIGTERM, SIGHUP) once a journal is written says which restore it
        left half done (RestoreInterrupted), with the signal's exit code."""
        try:
            yield
        except RestoreInterrupted:
            raise
        except KeyboardInterrupt as exc:
            if self.written is None:
                raise
            code = getattr(exc, "exit_code", 130)
            raise RestoreInterrupted(self.written, code if isinstance(code, int) else 130) from exc


def _head_move(repo: Repo, target: Checkpoint, move_head: bool, keep_head: bool) -> HeadMove | None:
    head, branch = repo.head()
    if head == target.base:
        return None
    if not (move_head or keep_head):
        raise head_refusal(target, head, branch)
    if keep_head:
        return None
    if target.base is None:
        raise Refused(
            f"{target.name} was saved on an unborn HEAD: there is no commit to move back to; "
            "use --keep-head"
        )
    saved_on = target.manifest.get("branch")
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
) -> RestoreReport:
    """Take a safety checkpoint, then make the managed set equal to `target`.
    `listed`: the task's checkpoints, listed under the lock this restore holds.

    `pending`: an interrupted restore this one replaces (undo goes back over it).
    `leave`: the journal to leave once done, instead of none (a rollback of a failed
    undo leaves the interrupted restore that undo replaced).
    `prescan`: the launcher's early scan, for the safety snapshot.
    `journaling`: the journal writer of the restore this one is part of (a rollback).
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
    head_move = _head_move(repo, target, move_head, keep_head)
    current = capture_workspace(repo, config, prescan=prescan)
    plan = plan_restore(repo, current, target)
    if dry_run:
        return _report(repo, target, None, plan, head_move, dry_run=True)
    writer = journaling or Journaling(repo)
    with writer.interrupts_named(), _staged(repo, plan, target) as stage:
        started = _begin(target, head, head_move, task, kind)
        if leave is not None:  # its journal says so too: a --continue of it leaves it
            started = replace(started, resume=journals.encoded(leave))

        def record(commit: str, name: str) -> None:
            # The journal names the way back before its ref exists: undo works from here.
            writer.write(replace(started, safety=commit, safety_name=name))

        message = f"before {kind} of {target.name}"
        safety = _safety(
            repo, config, task, current, message=message, before_ref=record, listed=listed
        )
        started = replace(started, safety=safety.commit, safety_name=safety.name)
        job = _Restoring(repo, config, target, plan, stage, current, writer, started)
        outcome = job.carry_out(pending=pending, leave=leave)
    return _report(repo, target, safety.name, plan, head_move, dry_run=False, outcome=outcome)


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
    listed: list[Checkpoint] | None = None,
) -> Checkpoint:
    """The safety checkpoint: the snapshot the plan was made from, stored whatever the
    save policies say of it (it is the way back, not a save)."""
    labels = Labels(message=message, auto=SAFETY)
    stored = store_checkpoint(
        repo, config, task, current, labels, dedupe=False, before_ref=before_ref, existing=listed
    )
    return stored.checkpoint


def continue_restore(repo: Repo, config: Config, task: str) -> RestoreReport:
    """Finish an interrupted restore from its journal, after a safety checkpoint of what
    is on disk now (files may have been made or edited since the interruption).
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
    current = capture_workspace(repo, config)
    plan = plan_restore(repo, current, target)
    writer = Journaling(repo)
    with writer.interrupts_named(), _staged(repo, plan, target) as stage:
        # The journal keeps its way back to before the whole restore; this run's safety
        # checkpoint is what `undo` goes back to once it finishes.
        pending: Journal = journal

        def record(commit: str, name: str) -> None:
            writer.write(_continued(pending, commit, name))

        safety = _safety(
            repo,
            config,
            journal.task or task,
            current,
            message=f"before continuing {journal.target_name}",
            before_ref=record,
        )
        journal = _continued(journal, safety.commit, safety.name)
        job = _Restoring(repo, config, target, plan, stage, current, writer, journal)
        outcome = job.carry_out(pending=None, leave=None)
    report = _report(repo, target, safety.name, plan, head_move, dry_run=False, outcome=outcome)
    if journals.resumed(journal) is not None:  # the restore it stood in for is pending
        return report  # again: its undo goes back before it (each command says so)
    # `undo` now goes back to before this --continue; say where the whole restore began.
    return replace(report, before_interrupted=journal.safety_name)


def recorded(repo: Repo, commit: str, name: str, task: str) -> Checkpoint:
    """A checkpoint this worktree recorded by commit (its ref may be gone or moved)."""
    cp_id = name.rsplit("/", 1)[-1]
    try:
        return checkpoint_at(repo, commit, name.rsplit("/", 1)[0] if "/" in name else task, cp_id)
    except GitFailed:
        raise UsageError(
            f"checkpoint {name} ({commit[:12]}) is gone from this repository"
        ) from None


@dataclass
class _Restoring:
    """A restore being carried out: its plan and staged files, the snapshot the plan was
    made from, and its journal, which each step that widens the way back rewrites."""

    repo: Repo
    config: Config
    target: Checkpoint
    plan: Plan
    stage: Stage
    current: Snapshot
    writer: Journaling
    journal: Journal

    def carry_out(self, *, pending: Journal | None, leave: Journal | None) -> Outcome:
        """Change the work tree and the index as the plan says; check that they did.
        `pending`: the interrupted restore this one replaces; `leave`: the journal to
        leave once done."""
        repo, plan = self.repo, self.plan
        now = TreeView(repo.objects, self.current.worktree_tree, self.current.overlay_tree)
        now.blobs.update(plan.before)
        outcome = Outcome()
        try:
            self._move_head()
            self._change_files(now, outcome, pending)
        except (OSError, CheckpointError) as exc:
            if self.journal.kind == "rollback":  # going back failed: its journal stays
                raise  # for --continue
            raise self._failed(exc, pending) from None
        missing = leftovers(repo, plan, {*outcome.left, *outcome.kept})
        if outcome.left or missing:
            shown = [f"{quote_path(p)} ({why})" for p, why in outcome.left.items()]
            shown += [quote_path(p) for p in missing]
            raise Refused(
                f"restore of {self.journal.target_name} left these as they were: "
                f"{', '.join(shown[:10])}; run `git checkpoint restore --continue` to keep "
                "them in a safety checkpoint and finish, or `git checkpoint undo` to go back"
            )
        outcome.submodules = _submodules_elsewhere(plan, now, self.target)
        self._finish(pending, leave)
        return outcome

    def _move_head(self) -> None:
        journal = self.journal
        if journal.move_head and journal.head_to:
            head, _ = self.repo.head()
            if head != journal.head_to:  # compare-and-swap from where we found HEAD
                self.repo.update_ref(
                    "HEAD",
                    journal.head_to,
                    journal.head_from or ZERO_OID,
                    f"checkpoint: restore {journal.target_name} (--move-head)",
                )

    def _change_files(self, now: TreeView, outcome: Outcome, pending: Journal | None) -> None:
        """The work tree's part: rule files first, then what they uncover, then the rest;
        each file replaced or removed only once its bytes are in the safety checkpoint."""
        repo, plan, stage = self.repo, self.plan, self.stage
        touched = [*(w.path for w in plan.writes), *plan.removes]
        removes = list(plan.removes)
        # Files the target holds that are outside the managed set now (ignored, excluded,
        # hidden by a rule the attempt added: plan.check_writes): kept in the safety
        # checkpoint before anything is written, rule files included, or undo would take
        # them away (a kill after the rules are back left an edited one unstored).
        adopted = [
            w.path
            for w in plan.writes
            if now.get(w.path) is None
            and not looks_secret(w.path)  # never stored (design §4); never touched either
            and through_folders(repo.root, w.path)
            and (os.path.islink(repo.root / w.path) or os.path.isfile(repo.root / w.path))
        ]
        if adopted:
            self._keep_in_safety(adopted, now)
        residue: list[str] = []
        rules = [p for p in touched if p.rsplit("/", 1)[-1] in RULE_FILES]
        if rules:
            outcome.left.update(unstored(repo, now, rules, plan))
            remove_files(repo, [p for p in removes if p in rules], outcome)
            move_into_place(repo, stage, [w for w in plan.writes if w.path in rules], outcome)
            residue, outcome.kept = _uncovered(repo, self.config, self.target, now, pending)
            removes = [p for p in removes if p not in outcome.kept and p not in rules]
        if residue:
            self._keep_in_safety(residue, now)
        attributes = attributes_touched(plan)
        checked: set[str] = set()
        if attributes:
            still = [p for p in touched if p not in rules]
            gone, below = self._attributes_first(now, outcome, still, removes)
            removes = [p for p in removes if p not in gone]
            rules = [*rules, *attributes]
            checked = set(below)
        # Checked right before the work tree changes: no git call runs in between.
        rest = [p for p in touched if p not in rules]
        outcome.left.update(unstored(repo, now, [p for p in rest if p not in checked], plan))
        remove_files(repo, removes, outcome)
        move_into_place(repo, stage, [w for w in plan.writes if w.path not in rules], outcome)
        outcome.removed_residue = remove_files(repo, residue, outcome)
        written = [w for w in plan.writes if w.path not in outcome.left]
        update_index(repo, plan, written, outcome.stats)

    def _attributes_first(
        self, now: TreeView, outcome: Outcome, touched: list[str], removes: list[str]
    ) -> tuple[list[str], list[str]]:
        """The `.gitattributes` files the plan writes or removes go first, and what they
        convert is staged again under them (restage), as git's checkout removes before
        it writes. What is below them is checked against the safety checkpoint before
        they change (git hashes it under the rules on disk), then by its stat data right
        before it goes. `touched` and `removes`: what is still to change. Returns the
        paths removed here and the paths checked here."""
        repo, plan, stage = self.repo, self.plan, self.stage
        attributes = attributes_touched(plan)
        below = [p for p in touched if under_rules(p, attributes)]
        seen = quickstate.overlay_stats(repo.root, below)  # first: an edit after it is seen
        outcome.left.update(unstored(repo, now, [*attributes, *below], plan))
        # (with what a folder named .gitattributes holds: a rule file replaces it)
        inside = tuple(f"{p}/" for p in attributes)
        gone = [p for p in removes if p in attributes or p.startswith(inside)]
        remove_files(repo, gone, outcome)
        move_into_place(repo, stage, [w for w in plan.writes if w.path in attributes], outcome)
        # Below a rule file left as it is (changed meanwhile), nothing is written.
        kept = [p for p in attributes if p in outcome.left]
        why = "a .gitattributes above it changed during the restore"
        outcome.left.update({p: why for p in below if under_rules(p, kept)})
        restage(repo, stage, [w for w in plan.writes if w.path not in outcome.left], attributes)
        outcome.left.update(changed_since(repo.root, {p: seen[p] for p in below if p not in gone}))
        return gone, below

    def _keep_in_safety(self, paths: list[str], now: TreeView) -> None:
        """Add files on disk to this run's safety checkpoint (the original's, or this
        --continue's) before the restore removes or replaces them; `now` learns them
        (the check before each write then finds them stored).
        """
        repo, journal = self.repo, self.journal
        if journal.continued_from:
            commit, name = journal.continued_from[-1], journal.continued_names[-1]
        else:
            commit, name = journal.safety, journal.safety_name
        safety = recorded(repo, commit, name, journal.task)
        kept, overlay = add_to_overlay(repo, safety, paths)
        now.overlay.clear()
        now.walk(now.odb[overlay], "", now.overlay)
        if journal.continued_from:
            journal = replace(journal, continued_from=(*journal.continued_from[:-1], kept))
        else:
            journal = replace(journal, safety=kept)
        self.journal = journal
        self.writer.write(journal)  # the way back holds them before anything is removed
        now_at = repo.resolve_ref(safety.ref)
        if now_at in (None, safety.commit):  # (None: killed before the ref was made)
            reason = f"checkpoint: {safety.id} keeps {len(paths)} more"
            repo.update_ref(safety.ref, kept, now_at or ZERO_OID, reason)

    def _finish(self, pending: Journal | None, leave: Journal | None) -> None:
        """The restore is done: recorded for undo, then its journal cleared (or the one
        it stood in for left again). No git call between the two: at every kill point
        one of them tells `undo` the way back."""
        journal = self.journal
        head, _ = self.repo.head()
        if journal.continued_from:
            journal = replace(
                journal,
                safety=journal.continued_from[-1],
                safety_name=journal.continued_names[-1],
                kind="continue",
            )
        self.journal = journal
        if journal.kind != "rollback":  # a rollback is part of a failed restore
            journals.record_restore(self.repo, journal, head)
        after = leave or journals.resumed(journal) or journals.resumed(pending)
        if after is not None:
            self.writer.write(after)
        else:
            self.writer.clear()

    def _failed(self, exc: Exception, pending: Journal | None) -> CheckpointError:
        """A write failed after the work tree was touched: go back to the safety
        checkpoint by ourselves; if that fails too, the journal stays for `undo`.
        `pending`: the interrupted restore this one replaced (an undo of it): once back,
        its journal is left again, so that `undo` and `--continue` still know its way
        back.
        """
        repo, journal = self.repo, self.journal
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
                self.config,
                journal.task,
                safety,
                move_head=journal.move_head,
                keep_head=not journal.move_head,
                kind="rollback",
                pending=journal,
                leave=pending,
                journaling=self.writer,
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


def _continued(journal: Journal, commit: str, name: str) -> Journal:
    return replace(
        journal,
        continued_from=(*journal.continued_from, commit),
        continued_names=(*journal.continued_names, name),
    )


def _uncovered(
    repo: Repo,
    config: Config,
    target: Checkpoint,
    now: TreeView,
    pending: Journal | None,
) -> tuple[list[str], set[str]]:
    """The restored rule files are in place. Files they no longer ignore that the safety
    snapshot did not hold (residue of the attempt) must go into the safety checkpoint
    before they are removed. Returns (residue, removals to skip). What the configuration
    in force excludes stays untouched whatever the restored rules say.

    Undoing an interrupted restore: a file its target's rules ignore and that the
    interrupted restore did not write was there before it: it stays (`keep`).
    """
    try:
        rules = load_config(repo.root, repo.checkpoint_config())
    except UsageError:
        rules = config  # the restored .checkpoint.yaml is broken: keep the rules we had
    rules = replace(rules, exclude=tuple(dict.fromkeys((*rules.exclude, *config.exclude))))
    managed, _, _ = split_overlay(list_overlay_candidates(repo, rules), rules)
    then = TreeView(repo.objects, target.worktree_tree, trees_of(repo, target)[1])
    residue = [
        p for p in managed if then.get(p) is None and now.get(p) is None and not git_refuses_path(p)
    ]
    keep: set[str] = set()
    if pending is not None:
        forward = recorded(repo, pending.target, pending.target_name, pending.task)
        wrote = TreeView(repo.objects, forward.worktree_tree, trees_of(repo, forward)[1])
        managed_now = set(managed)
        keep = {
            p
            for p in now.overlay
            if p not in managed_now and wrote.get(p) is None and then.get(p) is None
        }
    return residue, keep


def _submodules_elsewhere(plan: Plan, now: TreeView, target: Checkpoint) -> list[str]:
    """Gitlinks whose commit differs from the checkpoint's: restore does not enter them."""
    out = []
    for path, want in plan.gitlinks:
        have = now.tracked(path)
        if have != want:
            at = have[1][:12] if have else "absent"
            out.append(
                f"{path} is at {at}, {target.name} has {want[1][:12]} "
                f"(git -C {path} checkout {want[1][:12]})"
            )
    return out


def _report(
    repo: Repo,
    target: Checkpoint,
    safety: str | None,
    plan: Plan,
    head_move: HeadMove | None,
    *,
    dry_run: bool,
    outcome: Outcome | None = None,
) -> RestoreReport:
    residue = outcome.removed_residue if outcome else []
    return RestoreReport(
        checkpoint=target.name,
        commit=target.commit,
        safety_checkpoint=safety,
        dry_run=dry_run,
        brought_back=[w.path for w in plan.writes],
        removed=[p for p in plan.removes if not outcome or p not in outcome.kept] + residue,
        head=head_move,
        workspace_status="not checked" if dry_run else "matches",
        submodules=outcome.submodules if outcome else [],
        cautions=_cautions(target, plan),
    )


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
