"""A restore plan carried out under its journal: HEAD, the rule files and what they
uncover, then the files (each replaced or removed only once its bytes are in the safety
checkpoint), then the index; and the check that the managed set came out as planned.
Each step that widens the way back (files kept in the safety checkpoint) rewrites the
journal first. A write that fails is handed back as WriteFailed, for the restore to go
back by itself (run.py)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from dataclasses import dataclass, replace

from ..config.model import CONFIG_NAME, Config
from ..config.parse import load_repo_config
from ..core.errors import CheckpointError, GitFailed, Refused, UsageError
from ..core.interrupts import RestoreInterrupted
from ..core.text import quote_path
from ..fast import quickstate
from ..gitcore.formats import GITLINK_MODE, SYMLINK_MODE, TREE_MODE, ZERO_OID
from ..gitcore.pathrules import git_refuses_path
from ..gitcore.repo import Repo
from ..save.capture import Snapshot
from ..save.overlay import choose_overlay, looks_secret
from ..storage import journal as journals
from ..storage.commits import add_to_overlay, trees_of
from ..storage.journal import Journal
from ..storage.refs import Checkpoint, checkpoint_at
from .apply import (
    Outcome,
    changed_since,
    leftovers,
    make_submodule_folders,
    move_into_place,
    remove_files,
    unstored,
    update_index,
)
from .checks import through_folders
from .plan import Plan, TreeView, Write, attributes_touched, under_rules
from .reconvert import as_staged
from .stage import Stage, restage

RULE_FILES = (".gitignore", CONFIG_NAME)


class WriteFailed(Exception):
    """A step of the work tree's part failed once the work tree was touched: the restore
    goes back to its safety checkpoint (run.py). `journal`: the journal as it stood."""

    def __init__(self, cause: OSError | CheckpointError, journal: Journal) -> None:
        super().__init__(str(cause))
        self.cause = cause
        self.journal = journal


class Journaling:
    """Writes a worktree's restore journal, and remembers the restore whose journal this
    process wrote and has not cleared: a Ctrl-C then says how to go on."""

    def __init__(self, repo: Repo, pending: Journal | None = None) -> None:
        """`pending`: the journal of the interrupted restore this process continues."""
        self.repo = repo
        self.written: str | None = pending.target_name if pending else None  # the target

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
class Carrying:
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
            raise WriteFailed(exc, self.journal) from None
        missing = leftovers(repo, plan, {*outcome.left, *outcome.kept})
        if outcome.left or missing:
            shown = [f"{quote_path(p)} ({why})" for p, why in outcome.left.items()]
            shown += [quote_path(p) for p in missing]
            raise Refused(
                f"restore of {self.journal.target_name} left these as they were: "
                f"{', '.join(shown[:10])}; run `git checkpoint restore --continue` to keep "
                "them in a safety checkpoint and finish, or `git checkpoint undo` to go back"
            )
        outcome.submodules = _submodules_elsewhere(repo, plan, now, self.target)
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
        # (a rule file whose content stays, only converted otherwise, waits for its rules)
        rules = [
            p for p in touched if p.rsplit("/", 1)[-1] in RULE_FILES and p not in plan.reconverted
        ]
        attributes = attributes_touched(plan)
        # Rule files below a `.gitattributes` the plan changes are written before it (what
        # they ignore decides what goes next), raw: written again once converted under the
        # rules in place (restage), unless changed since (`early`: their stat data).
        early: dict[str, list[int] | None] = {}
        if rules:
            outcome.left.update(unstored(repo, now, rules, plan))
            remove_files(repo, [p for p in removes if p in rules], outcome)
            first = [w for w in plan.writes if w.path in rules]
            move_into_place(repo, stage, first, outcome)
            early = _converted_later(repo, [w for w in first if under_rules(w.path, attributes)])
            residue, outcome.kept = _uncovered(repo, self.config, self.target, now, pending)
            removes = [p for p in removes if p not in outcome.kept and p not in rules]
        if residue:
            self._keep_in_safety(residue, now)
        checked: set[str] = set()
        if attributes:
            still = [p for p in touched if p not in rules]
            gone, below = self._attributes_first(now, outcome, still, removes, early)
            removes = [p for p in removes if p not in gone]
            rules = [*rules, *attributes]
            checked = set(below)
        again = self._converted_again(outcome, early)
        # Checked right before the work tree changes: no git call runs in between.
        placed = {*rules, *outcome.as_written}
        rest = [p for p in touched if p not in placed]
        outcome.left.update(unstored(repo, now, [p for p in rest if p not in checked], plan))
        remove_files(repo, removes, outcome)
        last = [w for w in plan.writes if w.path not in placed or w.path in again]
        move_into_place(repo, stage, last, outcome)
        make_submodule_folders(repo, [p for p, _ in plan.gitlinks])
        outcome.removed_residue = remove_files(repo, residue, outcome)
        written = [w for w in plan.writes if w.path not in outcome.left]
        update_index(repo, plan, written, outcome.stats, outcome.converted)

    def _converted_again(self, outcome: Outcome, early: dict[str, list[int] | None]) -> set[str]:
        """Once the rules are in place and the files below them staged under them: the
        files the plan writes only because a rule change converts them (plan.reconverted)
        whose bytes on disk are git's already are left as they are (outcome.as_written);
        the rule files written `early` (raw; path -> stat data after) whose converted
        bytes differ are returned, to be written again, unless changed since."""
        root, stage = os.fspath(self.repo.root), self.stage
        for write in self.plan.writes:
            if write.path in self.plan.reconverted and write.path not in outcome.left:
                found = as_staged(root, write.path, stage[write.path], write.mode)
                if found is not None:
                    outcome.as_written.add(write.path)
                    outcome.converted[write.path] = found  # (the index's stat data)
        early = {p: st for p, st in early.items() if p not in outcome.left}
        outcome.left.update(changed_since(self.repo.root, early))
        modes = {w.path: w.mode for w in self.plan.writes}
        return {
            p
            for p in early
            if p not in outcome.left and as_staged(root, p, stage[p], modes[p]) is None
        }

    def _attributes_first(
        self,
        now: TreeView,
        outcome: Outcome,
        touched: list[str],
        removes: list[str],
        early: dict[str, list[int] | None],
    ) -> tuple[list[str], list[str]]:
        """The `.gitattributes` files the plan writes or removes go first, and what they
        convert is staged again under them (restage), as git's checkout removes before
        it writes. What is below them is checked against the safety checkpoint before
        they change (git hashes it under the rules on disk), then by its stat data right
        before it goes. `touched` and `removes`: what is still to change. The rule files
        written here, staged under the rules they replace, are in `early` (their stat
        data after): written again once converted under their own. Returns the paths
        removed here and the paths checked here."""
        repo, plan, stage = self.repo, self.plan, self.stage
        attributes = attributes_touched(plan)
        # (the rule files the plan converts otherwise are below a changed one too)
        below = [p for p in touched if under_rules(p, attributes) or p in plan.reconverted]
        seen = quickstate.overlay_stats(repo.root, below)  # first: an edit after it is seen
        outcome.left.update(unstored(repo, now, [*attributes, *below], plan))
        # (with what a folder named .gitattributes holds: a rule file replaces it)
        inside = tuple(f"{p}/" for p in attributes)
        gone = [p for p in removes if p in attributes or p.startswith(inside)]
        remove_files(repo, gone, outcome)
        placed = [w for w in plan.writes if w.path in attributes]
        move_into_place(repo, stage, placed, outcome)
        early.update(_converted_later(repo, placed))
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
        journals.settle_in_place(self.repo, journal)  # (what a killed verify in place left)
        after = leave or journals.resumed(journal) or journals.resumed(pending)
        if after is not None:
            self.writer.write(after)
        else:
            self.writer.clear()


def _converted_later(repo: Repo, written: list[Write]) -> dict[str, list[int] | None]:
    """The stat data of rule files just written, staged under the rules they replace:
    regular files, which restage converts under the new rules (a symlink is no text)."""
    paths = [w.path for w in written if w.mode != SYMLINK_MODE]
    return quickstate.overlay_stats(repo.root, paths)


def continued(journal: Journal, commit: str, name: str) -> Journal:
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
        rules = load_repo_config(repo)
    except UsageError:
        rules = config  # the restored .checkpoint.yaml is broken: keep the rules we had
    # (what the limits leave out stays where it is: it is in no checkpoint)
    rules = replace(rules, exclude=tuple(dict.fromkeys((*rules.exclude, *config.exclude))))
    managed = choose_overlay(repo, rules, None)[0].files
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


_KINDS = {
    TREE_MODE: "a folder",
    SYMLINK_MODE: "a symlink",
    GITLINK_MODE: "a submodule not checked out",
}


def _submodules_elsewhere(repo: Repo, plan: Plan, now: TreeView, target: Checkpoint) -> list[str]:
    """Gitlinks whose commit differs from the checkpoint's: restore does not enter them.
    Where the workspace had no submodule (a folder, a file, nothing), its folder is left
    empty, as git's checkout leaves it."""
    out = []
    for path, want in plan.gitlinks:
        have = now.tracked(path)
        if have == want:
            continue
        commit = want[1][:12]
        checked_out = os.path.lexists(repo.root / path / ".git")
        if have is not None and have[0] == GITLINK_MODE and checked_out:
            out.append(
                f"{path} is at {have[1][:12]}, {target.name} has {commit} "
                f"(git -C {path} checkout {commit})"
            )
            continue
        was = "nothing" if have is None else _KINDS.get(have[0], "a file")
        out.append(
            f"{path} is a submodule at {commit} in {target.name}, where the workspace had "
            f"{was}: its folder is left empty, as git's checkout leaves it "
            f"(git submodule update --init -- {path})"
        )
    return out
