"""What a restore, an undo or a `--continue` reports: plain data, and its terminal lines."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.errors import Refused
from ..core.text import quote_path
from ..storage.refs import Checkpoint


@dataclass(frozen=True)
class HeadMove:
    """HEAD (or its branch) moved back to a checkpoint's base commit."""

    ref: str  # the branch moved, or HEAD when detached
    old: str | None
    new: str
    left_behind: list[str]  # commits no longer on the branch (reachable via the safety cp)


@dataclass(frozen=True)
class RestoreReport:
    """What a restore did (or, on --dry-run, would do)."""

    checkpoint: str  # task/cp_NNN restored
    commit: str
    safety_checkpoint: str | None  # None on --dry-run
    dry_run: bool
    # What the restore wrote back and removed. A dry run does neither: these stay empty,
    # and what it would do is in would_bring_back and would_remove.
    brought_back: list[str]
    removed: list[str]
    head: HeadMove | None
    workspace_status: str  # "matches", or "not checked" on --dry-run
    # Submodules at another commit than the checkpoint's (restore never enters them).
    submodules: list[str] = field(default_factory=list)
    # Files left where they were, and why (a name git cannot store, kept out before).
    left_alone: list[str] = field(default_factory=list)
    undoes: str | None = None  # for `undo`: which restore it undid, and when
    cautions: list[str] = field(default_factory=list)  # printed as warnings on stderr
    # After `restore --continue`: the safety checkpoint of the interrupted restore itself.
    before_interrupted: str | None = None
    # The name to close with: the id alone for one of the current task's own, else the
    # full name (a fetched `origin/main/cp_001` is not this clone's `cp_001`).
    shown: str = ""
    # Untracked files the overlay's limits kept out of the safety checkpoint: in no
    # checkpoint, so left where they are (described: path, size, why).
    beyond_limits: list[str] = field(default_factory=list)
    # A restore of some paths only: those paths (the rest of the workspace stayed).
    paths: list[str] = field(default_factory=list)
    would_bring_back: list[str] = field(default_factory=list)  # a dry run's plan
    would_remove: list[str] = field(default_factory=list)

    def warnings(self) -> list[str]:
        return list(self.cautions)

    def lines(self) -> list[str]:
        out = []
        if self.undoes:
            out.append(f"undoing {self.undoes}")
        if self.safety_checkpoint:
            out.append(
                f"safety checkpoint: {self.safety_checkpoint} (undo with: git checkpoint undo)"
            )
        if self.dry_run:
            out.append(
                f"would restore {self.checkpoint}: {len(self.would_bring_back)} to write, "
                f"{len(self.would_remove)} to remove"
            )
            out += [f"  would write: {quote_path(p)}" for p in self.would_bring_back]
            out += [f"  would remove: {quote_path(p)}" for p in self.would_remove]
        else:
            out.append(
                f"restored {self.checkpoint}: {len(self.brought_back)} written, "
                f"{len(self.removed)} removed"
            )
            out += [f"  brought back: {quote_path(p)}" for p in self.brought_back]
            out += [f"  removed: {quote_path(p)}" for p in self.removed]
        out += [f"  left in place: {quote_path(p)}" for p in self.left_alone]
        out += [f"  left in place, in no checkpoint: {d}" for d in self.beyond_limits]
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
        for line in self.submodules:
            out.append(f"submodule not restored (never entered): {line}")
        if self.before_interrupted:
            out.append(
                f"undo goes back to before this --continue; to before the interrupted restore: "
                f"git checkpoint restore {self.before_interrupted}"
            )
        if not self.dry_run:
            tail = " (but for the submodules above)" if self.submodules else ""
            where = "workspace" if not self.paths else ", ".join(quote_path(p) for p in self.paths)
            verb = "match" if len(self.paths) > 1 else "matches"
            out.append(f"{where} {verb} {self.shown or self.checkpoint}{tail}")
        return out


def head_refusal(target: Checkpoint, head: str | None, branch: str | None) -> Refused:
    where = f"branch {branch!r}" if branch else "a detached HEAD"
    at = head[:12] if head else "no commit yet"
    saved_on = target.manifest.get("branch")
    saved = f" on branch {saved_on!r}" if isinstance(saved_on, str) else ""
    if target.base is None:  # no commit to move back to: only one way on
        return Refused(
            f"HEAD has moved: {target.name} was saved before the first commit, now {where} "
            f"is at {at}. Use --keep-head to restore its files and index over the current HEAD"
        )
    base = target.base[:12]
    return Refused(
        f"HEAD has moved: {target.name} was saved{saved} at {base}, now {where} is at {at}. "
        f"Choose: --move-head (move {branch or 'HEAD'} back to {base}; later commits stay "
        "in the safety checkpoint) or --keep-head (restore files and index over the current HEAD)"
    )


def other_branch_refusal(target: Checkpoint, branch: str | None) -> Refused:
    saved_on = target.manifest.get("branch")
    there = f"branch {saved_on!r}" if isinstance(saved_on, str) else "a detached HEAD"
    here = f"branch {branch!r}" if branch else "a detached HEAD"
    switch = f"git switch {saved_on}" if isinstance(saved_on, str) else "git switch --detach"
    return Refused(
        f"{target.name} was saved on {there}, not on {here}: --move-head would move {here} "
        f"to another line of work. Switch first ({switch}), or use --keep-head to restore "
        "its files over the current HEAD"
    )
