"""A task's timeline for a reviewer (design.md §9): each checkpoint and attempt with
its status, every verifier result recorded on it (from every machine whose notes were
merged), forced promotions with their reasons, and diffstats against the run's
rollback point and the previous checkpoint. Reads only: nothing is restored.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..core.errors import GitFailed, UsageError
from ..core.text import printable
from ..gitcore.formats import EMPTY_TREE
from ..gitcore.repo import Repo
from ..storage.commits import managed_tree
from ..storage.notes import derive_status, read_events
from ..storage.refs import REMOTE_ROOT, Checkpoint, load_checkpoints, validate_task
from ..storage.untrusted import fetched_manifest_problem

_ATTEMPT = re.compile(r"^attempt (\d+)$")
_ROLLBACK = "rollback point before run"


@dataclass(frozen=True)
class DiffStat:
    against: str
    files: int
    insertions: int
    deletions: int

    def text(self) -> str:
        if not self.files:
            return f"no change vs {self.against}"
        return f"{self.files} files +{self.insertions} -{self.deletions} vs {self.against}"


@dataclass(frozen=True)
class VerifierRun:
    name: str
    status: str
    exit_code: int | None
    at: str
    where: str
    host: str | None
    duration_s: float | None


@dataclass(frozen=True)
class Forced:
    at: str
    by: str
    reason: str


@dataclass(frozen=True)
class TimelineEntry:
    name: str
    id: str
    kind: str  # "checkpoint", "rollback point", "attempt N"
    created_at: str
    message: str
    status: str
    auto: bool | str
    hypothesis: str | None
    next_move: str | None
    run_id: str | None
    verifiers: list[VerifierRun]
    forced: list[Forced]
    against_base: DiffStat
    against_rollback: DiffStat | None
    against_previous: DiffStat | None
    malformed: str | None = None


@dataclass(frozen=True)
class Timeline:
    task: str  # as named: `fix-card` or `origin/fix-card`
    remote: str | None
    entries: list[TimelineEntry] = field(default_factory=list)


def find_task(repo: Repo, name: str) -> tuple[str, str | None, list[Checkpoint]]:
    """(task as named, remote or None, its checkpoints): a local task first, then a
    fetched one named `REMOTE/TASK`.
    """
    validate_task(name)  # REMOTE/TASK is a well-formed task name too
    local = [c for c in load_checkpoints(repo) if c.remote is None and c.task == name]
    if local:
        return name, None, local
    fetched = [c for c in load_checkpoints(repo, REMOTE_ROOT) if c.task == f"remotes/{name}"]
    if fetched:
        return name, fetched[0].remote, fetched
    raise UsageError(
        f"no checkpoints in task {name!r} (a fetched task is REMOTE/TASK: "
        "git checkpoint list --remote origin)"
    )


def _stat(repo: Repo, old: str, new: str, against: str) -> DiffStat:
    out = repo.git("diff", "--numstat", "--no-renames", "-z", old, new).decode("utf-8", "replace")
    files = ins = dels = 0
    for record in out.split("\0"):
        parts = record.split("\t")
        if len(parts) >= 3:
            files += 1
            ins += int(parts[0]) if parts[0].isdigit() else 0
            dels += int(parts[1]) if parts[1].isdigit() else 0
    return DiffStat(against, files, ins, dels)


def _verifier_runs(events: list[dict[str, Any]]) -> list[VerifierRun]:
    runs = []
    for e in events:
        if e.get("event") != "verifier":
            continue
        code = e.get("exit_code")
        duration = e.get("duration_s")
        host = e.get("host")
        runs.append(
            VerifierRun(
                name=printable(str(e.get("name", "?")), 60),
                status=printable(str(e.get("status", "unknown")), 20),
                exit_code=code if isinstance(code, int) and not isinstance(code, bool) else None,
                at=printable(str(e.get("at", "")), 40),
                where=printable(str(e.get("where", "")), 40),
                host=printable(host, 80) if isinstance(host, str) else None,
                duration_s=float(duration) if isinstance(duration, int | float) else None,
            )
        )
    return runs


def _text(value: Any) -> str | None:
    return printable(value) if isinstance(value, str) and value else None


def build_timeline(repo: Repo, name: str) -> Timeline:
    task, remote, checkpoints = find_task(repo, name)
    shown = [c for c in checkpoints if not c.is_safety]
    trees: dict[str, str] = {}
    problems: dict[str, str] = {}
    for c in shown:
        problem = c.problem or (fetched_manifest_problem(c.manifest) if c.remote else None)
        if problem:
            problems[c.ref] = problem
            continue
        try:
            trees[c.ref] = managed_tree(repo, c)
        except GitFailed:  # a hostile tree git will not read into an index
            problems[c.ref] = "its trees cannot be read"
    rollback_of: dict[str, Checkpoint] = {}  # run id -> its rollback point
    entries: list[TimelineEntry] = []
    previous: Checkpoint | None = None
    for cp in shown:
        events = read_events(repo, cp.commit)
        run_id = cp.manifest.get("run_id") if isinstance(cp.manifest.get("run_id"), str) else None
        attempt = _ATTEMPT.match(cp.message)
        kind = "checkpoint"
        if cp.message == _ROLLBACK:
            kind = "rollback point"
            if run_id:
                rollback_of[run_id] = cp
        elif attempt:
            kind = f"attempt {attempt.group(1)}"
        base_tree = f"{cp.base}^{{tree}}" if cp.base else EMPTY_TREE
        rollback = rollback_of.get(run_id or "") if attempt else None
        mine = trees.get(cp.ref)
        entries.append(
            TimelineEntry(
                name=cp.name,
                id=cp.id,
                kind=kind,
                created_at=printable(cp.created_at, 40),
                message=printable(cp.message),
                status=derive_status(events),
                auto=cp.auto if isinstance(cp.auto, bool) else printable(cp.auto, 40),
                hypothesis=_text(cp.manifest.get("hypothesis")),
                next_move=_text(cp.manifest.get("next_move")),
                run_id=printable(run_id, 60) if run_id else None,
                verifiers=_verifier_runs(events),
                forced=[
                    Forced(
                        printable(str(e.get("at", "")), 40),
                        printable(str(e.get("by", "?")), 120),
                        printable(str(e.get("reason", ""))),
                    )
                    for e in events
                    if e.get("event") == "forced_promotion"
                ],
                against_base=_stat(repo, base_tree, mine, "base")
                if mine
                else DiffStat("base", 0, 0, 0),
                against_rollback=_stat(repo, trees[rollback.ref], mine, rollback.id)
                if rollback and mine and rollback.ref in trees
                else None,
                against_previous=_stat(repo, trees[previous.ref], mine, previous.id)
                if previous and mine and previous.ref in trees
                else None,
                malformed=problems.get(cp.ref),
            )
        )
        previous = cp
    return Timeline(task, remote, entries)
