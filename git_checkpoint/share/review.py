"""A task's timeline for a reviewer (design.md §9): each checkpoint and attempt with
its status, every verifier result recorded on it (from every machine whose notes were
merged, with who ran it and a failing run's last lines), forced promotions with their
reasons, diffstats against the run's rollback point and the previous checkpoint, the
files each one changed and, when asked, its patch. Reads only: nothing is restored.

Everything here may come from another machine (a fetched checkpoint, merged notes):
every string a renderer gets is already made visible (`visible`, `printable`), so no
reader can be sent a terminal escape, a bidirectional override or a NUL.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..core.errors import GitFailed, UsageError
from ..core.records import to_the_second
from ..core.text import counted, printable, quote_path
from ..gitcore.formats import EMPTY_TREE
from ..gitcore.repo import Repo
from ..storage.commits import managed_tree
from ..storage.notes import derive_status, read_events
from ..storage.refs import REMOTE_ROOT, Checkpoint, load_checkpoints, validate_task
from ..storage.untrusted import fetched_manifest_problem

_ATTEMPT = re.compile(r"^attempt (\d+)$")
_ROLLBACK = "rollback point before run"
# What one checkpoint contributes at most: a page stays readable and bounded whatever a
# checkpoint (or a hostile one) holds; the full change is one `git checkpoint diff` away.
FILES_SHOWN = 500
TAIL_LINES = 30
PATCH_LINES = 4000  # of one checkpoint's patch
FILE_PATCH_LINES = 1500  # of one file's
STATUS_WORDS = {"A": "added", "D": "deleted", "M": "modified", "T": "type changed"}


def visible(text: str, limit: int = 100_000) -> str:
    """Free text from a checkpoint or a note with its lines kept: tabs and newlines stay,
    every other character that would not print (control characters, terminal escapes,
    bidirectional overrides, odd spaces) is shown as its escape."""
    out = []
    for char in text[:limit]:
        if char in "\t\n" or char == " " or char.isprintable():
            out.append(char)
        elif ord(char) < 0x100:
            out.append(f"\\x{ord(char):02x}")
        else:
            out.append(f"\\u{ord(char):04x}")
    shown = "".join(out)
    return shown if len(text) <= limit else shown + "…"


@dataclass(frozen=True)
class DiffStat:
    against: str
    files: int
    insertions: int
    deletions: int

    def text(self) -> str:
        if not self.files:
            return f"no change vs {self.against}"
        return (
            f"{counted(self.files, 'file')} +{self.insertions} -{self.deletions} vs {self.against}"
        )


@dataclass(frozen=True)
class FileChange:
    path: str  # as git shows it (core.quotePath): a crafted name stays visible
    status: str  # A added, D deleted, M modified, T type changed
    insertions: int | None  # None: a binary file
    deletions: int | None

    def counts(self) -> str:
        if self.insertions is None or self.deletions is None:
            return "binary"
        return f"+{self.insertions} -{self.deletions}"

    def status_word(self) -> str:
        return STATUS_WORDS.get(self.status, "changed")


@dataclass(frozen=True)
class FilePatch:
    path: str
    text: str  # visible; cut after FILE_PATCH_LINES lines
    cut: int = 0  # lines left out


@dataclass(frozen=True)
class VerifierRun:
    name: str
    status: str
    exit_code: int | None
    at: str
    where: str
    host: str | None
    duration_s: float | None
    by: str | None = None  # who ran it (git's identity), when the event records it
    command: str | None = None
    output_tail: str = ""  # the last TAIL_LINES lines of a run that did not pass

    def who(self) -> str:
        """Where and by whom it ran, as far as its event says: ' by X in workspace'."""
        parts = [f"on {self.host}"] if self.host else []
        if self.by:
            parts.append(f"by {self.by}")
        if self.where:
            parts.append(f"in {self.where}")
        return "".join(f" {p}" for p in parts)

    def line(self) -> str:
        """`unit failed (exit 1) by X <x@example.com> in workspace at T`."""
        return f"{self.short()}{self.who()} at {to_the_second(self.at)}"

    def short(self) -> str:
        """`unit failed (exit 1)`."""
        failed = self.status == "failed" and self.exit_code is not None
        return f"{self.name} {self.status}" + (f" (exit {self.exit_code})" if failed else "")

    def runner(self) -> str | None:
        """Who ran it, by name only (no e-mail address), or the host it ran on."""
        return self.by.split(" <", 1)[0] if self.by else self.host


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
    commit: str = ""
    # The files it changed against `changes_against`: its run's rollback point for an
    # attempt, else the checkpoint before it, else its base commit.
    changes_against: str = "base"
    files: list[FileChange] = field(default_factory=list)
    files_total: int = 0
    patches: list[FilePatch] = field(default_factory=list)  # only when asked for
    patch_cut: int = 0  # lines of the patch left out

    def diffs(self) -> list[str]:
        """Its diffstats against the rollback point and the one before; once when they
        are the same one (the first attempt of a run); else against its base."""
        stats = (self.against_rollback, self.against_previous)
        shown = list(dict.fromkeys(d.text() for d in stats if d))
        return shown or [self.against_base.text()]


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


def _changes(repo: Repo, old: str, new: str) -> list[FileChange]:
    """Every file that differs between two trees, with its status and line counts."""
    out = repo.git("diff", "--raw", "--numstat", "-z", "--no-renames", "--no-ext-diff", old, new)
    status: dict[str, str] = {}
    counts: dict[str, tuple[int | None, int | None]] = {}
    tokens = out.decode("utf-8", "surrogateescape").split("\0")
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.startswith(":") and i + 1 < len(tokens):  # raw: ":modes ids S", path
            status[tokens[i + 1]] = token.rsplit(" ", 1)[-1][:1]
            i += 2
            continue
        parts = token.split("\t", 2)
        if len(parts) == 3:  # numstat: "ins\tdel\tpath" ("-" for a binary file)
            ins, dels, path = parts
            counts[path] = (_count(ins), _count(dels))
        i += 1
    return [
        FileChange(quote_path(path), status.get(path, "M"), *counts.get(path, (None, None)))
        for path in sorted(set(status) | set(counts))
    ]


def _count(field: str) -> int | None:
    return int(field) if field.isdigit() else None


def _stat(changes: list[FileChange], against: str) -> DiffStat:
    return DiffStat(
        against,
        len(changes),
        sum(c.insertions or 0 for c in changes),
        sum(c.deletions or 0 for c in changes),
    )


_FILE_HEADER = "diff --git "


def patches(repo: Repo, old: str, new: str) -> tuple[list[FilePatch], int]:
    """The patch between two trees, one part per file, made visible and cut to size;
    with the count of lines left out."""
    raw = repo.git(
        "diff", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames",
        "--src-prefix=a/", "--dst-prefix=b/", old, new,
    )  # fmt: skip
    # Split on newlines only: str.splitlines would also split (and so hide) the line
    # and paragraph separators a crafted file can hold.
    lines = raw.decode("utf-8", "replace").split("\n")
    if lines and not lines[-1]:
        lines.pop()
    starts = [i for i, line in enumerate(lines) if line.startswith(_FILE_HEADER)]
    found: list[FilePatch] = []
    budget, cut_total = PATCH_LINES, 0
    for start, end in zip(starts, [*starts[1:], len(lines)][: len(starts)], strict=True):
        part = lines[start:end]
        keep = max(0, min(len(part), FILE_PATCH_LINES, budget))
        budget -= keep
        cut_total += len(part) - keep
        if keep:
            text = "\n".join(visible(line, 2000) for line in part[:keep])
            found.append(FilePatch(_patch_path(part[0]), text, len(part) - keep))
    return found, cut_total


def _patch_path(header: str) -> str:
    """The file a `diff --git a/X b/X` header names (X as git quotes it)."""
    rest = header[len(_FILE_HEADER) :]
    half = (len(rest) - 1) // 2  # "a/X b/X": both names alike without renames
    name = rest[:half]
    if name.startswith('"a/'):
        return '"' + name[3:]
    return name[2:] if name.startswith("a/") else rest


def _runs(events: list[dict[str, Any]]) -> list[VerifierRun]:
    runs = []
    for e in events:
        if e.get("event") != "verifier":
            continue
        code = e.get("exit_code")
        duration = e.get("duration_s")
        status = printable(str(e.get("status", "unknown")), 20)
        tail = e.get("output_tail")
        shown_tail = ""
        if isinstance(tail, str) and status != "passed":
            shown_tail = visible("\n".join(tail.rstrip().split("\n")[-TAIL_LINES:]), 8000)
        runs.append(
            VerifierRun(
                name=printable(str(e.get("name", "?")), 60),
                status=status,
                exit_code=code if isinstance(code, int) and not isinstance(code, bool) else None,
                at=printable(str(e.get("at", "")), 40),
                where=printable(str(e.get("where", "")), 40),
                host=_text(e.get("host"), 80),
                duration_s=float(duration)
                if isinstance(duration, int | float) and not isinstance(duration, bool)
                else None,
                by=_text(e.get("by"), 120),
                command=_text(e.get("command"), 300),
                output_tail=shown_tail,
            )
        )
    return runs


def _text(value: Any, limit: int = 500) -> str | None:
    return printable(value, limit) if isinstance(value, str) and value else None


def _kind(cp: Checkpoint) -> str:
    attempt = _ATTEMPT.match(cp.message)
    if cp.message == _ROLLBACK:
        return "rollback point"
    return f"attempt {attempt.group(1)}" if attempt else "checkpoint"


def _run_id(cp: Checkpoint) -> str | None:
    run_id = cp.manifest.get("run_id")
    return run_id if isinstance(run_id, str) else None


def _readable_trees(repo: Repo, shown: list[Checkpoint]) -> tuple[dict[str, str], dict[str, str]]:
    """ref -> its managed tree, and ref -> why it cannot be read."""
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
    return trees, problems


def build_timeline(repo: Repo, name: str, *, with_patches: bool = False) -> Timeline:
    """The task's timeline; `with_patches`: each entry's patch too, against the same
    point its files are listed against."""
    task, remote, checkpoints = find_task(repo, name)
    shown = [c for c in checkpoints if not c.is_safety]
    trees, problems = _readable_trees(repo, shown)
    rollback_of: dict[str, Checkpoint] = {}  # run id -> its rollback point
    entries: list[TimelineEntry] = []
    previous: Checkpoint | None = None
    for cp in shown:
        events = read_events(repo, cp.commit)
        run_id, kind = _run_id(cp), _kind(cp)
        if kind == "rollback point" and run_id:
            rollback_of[run_id] = cp
        rollback = rollback_of.get(run_id or "") if kind.startswith("attempt") else None
        mine = trees.get(cp.ref)
        base_tree = f"{cp.base}^{{tree}}" if cp.base else EMPTY_TREE
        against: list[tuple[str, str]] = [("base", base_tree)]  # (name, tree), nearest last
        if previous is not None and previous.ref in trees:
            against.append((previous.id, trees[previous.ref]))
        if rollback is not None and rollback.ref in trees:
            against.append((rollback.id, trees[rollback.ref]))
        diffs = {n: _changes(repo, tree, mine) for n, tree in against} if mine else {}
        nearest, nearest_tree = against[-1]
        files = diffs.get(nearest, [])
        patch: tuple[list[FilePatch], int] = ([], 0)
        if with_patches and mine:
            patch = patches(repo, nearest_tree, mine)
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
                verifiers=_runs(events),
                forced=[
                    Forced(
                        printable(str(e.get("at", "")), 40),
                        printable(str(e.get("by", "?")), 120),
                        printable(str(e.get("reason", ""))),
                    )
                    for e in events
                    if e.get("event") == "forced_promotion"
                ],
                against_base=_stat(diffs.get("base", []), "base"),
                against_rollback=_stat(diffs[rollback.id], rollback.id)
                if rollback and rollback.id in diffs
                else None,
                against_previous=_stat(diffs[previous.id], previous.id)
                if previous and previous.id in diffs
                else None,
                malformed=problems.get(cp.ref),
                commit=cp.commit,
                changes_against=nearest,
                files=files[:FILES_SHOWN],
                files_total=len(files),
                patches=patch[0],
                patch_cut=patch[1],
            )
        )
        previous = cp
    return Timeline(task, remote, entries)
