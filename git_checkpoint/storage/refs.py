"""Checkpoints by name: the refs under `refs/checkpoints/<task>/cp_NNN` (design.md §3),
the task names they use, and every name a checkpoint can be given (design.md §7).

A checkpoint is a commit W with parents B (base), I (index) and, when the overlay is
not empty, U (overlay); commits.py writes them. Its message carries the immutable
manifest (manifest.py); mutable state is in notes (notes.py).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from ..core.anytype import Any
from ..core.errors import UsageError
from ..core.text import counted
from ..gitcore.locate import RefFolder
from ..gitcore.repo import Repo
from .manifest import parse_manifest

REF_ROOT = "refs/checkpoints/"
REMOTE_ROOT = "refs/checkpoints/remotes/"
ID = re.compile(r"^cp_(\d{3,})$")
_TASK_PART = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*$")
SAFETY = "pre-restore"


@dataclass(frozen=True)
class Checkpoint:
    """One checkpoint as stored: its ref, its commits and its manifest."""

    task: str
    id: str
    ref: str
    commit: str
    worktree_tree: str
    base: str | None
    index_commit: str
    overlay_commit: str | None
    message: str
    manifest: dict[str, Any] = field(compare=False)
    problem: str | None = field(default=None, compare=False)  # why it cannot be trusted

    @property
    def name(self) -> str:
        """`task/cp_003`; a fetched one is `origin/task/cp_003` (its task is `remotes/…`)."""
        if self.task.startswith("remotes/") and self.ref.startswith(REMOTE_ROOT):
            return f"{self.task[len('remotes/') :]}/{self.id}"
        return f"{self.task}/{self.id}"

    @property
    def number(self) -> int:
        return int(self.id[3:])

    @property
    def remote(self) -> str | None:
        if self.ref.startswith(REMOTE_ROOT):
            return self.ref[len(REMOTE_ROOT) :].split("/", 1)[0]
        return None

    @property
    def auto(self) -> bool | str:
        value = self.manifest.get("auto", False)
        return value if isinstance(value, bool | str) else False

    @property
    def is_safety(self) -> bool:
        return self.auto == SAFETY

    @property
    def created_at(self) -> str:
        return str(self.manifest.get("created_at", ""))


# Task names become ref and file names (`tasks/<task>.yaml`): keep them well inside
# what file systems allow (255 bytes a name) and what a terminal line can show.
TASK_MAX = 200


def validate_text(option: str, value: str | None) -> None:
    """Free text we keep (a message, a hypothesis, a reason) is UTF-8, as manifests and
    task records are: bytes that are not (`-m $'\\xe9'` in a Latin-1 shell) are refused."""
    try:
        (value or "").encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError(f"{option}: not UTF-8 text (check the terminal's encoding)") from None


def validate_task(task: str) -> str:
    if len(task) > TASK_MAX:
        raise UsageError(
            f"bad task name {task[:40]!r}… ({len(task)} characters): at most {TASK_MAX}"
        )
    parts = task.split("/")
    if (
        not task
        or ".." in task
        or any(not _TASK_PART.match(p) or p.endswith((".lock", ".")) or ID.match(p) for p in parts)
        or parts[0] == "remotes"
    ):
        raise UsageError(
            f"bad task name {task!r}: use letters, digits, . _ - and /; "
            "not 'remotes/…', not a part like cp_001"
        )
    return task


def _hex_escape(match: re.Match[str]) -> str:
    return "".join(f"_{byte:02x}" for byte in match.group(0).encode())


def task_from_branch(branch: str | None) -> str:
    if branch is None:
        return "detached"
    # Other characters become _xx per UTF-8 byte, so distinct branches stay distinct tasks.
    parts = [re.sub(r"[^A-Za-z0-9._-]", _hex_escape, p) for p in branch.split("/")]
    parts = [p.lstrip(".") or "-" for p in parts]
    parts = [p[: -len(".lock")] + "-lock" if p.endswith(".lock") else p for p in parts]
    parts = [f"{p}-" if ID.match(p) else p for p in parts]
    if parts[0] == "remotes":
        parts[0] = "remotes-"
    task = "/".join(p if _TASK_PART.match(p) else f"_{p}" for p in parts)
    if len(task) > TASK_MAX:  # cut, with a digest so that long branches stay apart
        import hashlib  # here: only a branch name this long needs it

        digest = hashlib.sha1(branch.encode("utf-8", "surrogateescape")).hexdigest()[:10]
        task = f"{task[: TASK_MAX - 11].rstrip('/.')}-{digest}"
    return task


def current_task(repo: Repo, explicit: str | None = None) -> str:
    """The named task, else the one of `git checkpoint run` around us (an agent inside
    the loop works on the loop's task), else the one named after the current branch
    (or `detached`)."""
    if explicit is not None:
        return validate_task(explicit)
    inside_run = os.environ.get("CHECKPOINT_TASK")
    if inside_run:
        return validate_task(inside_run)
    _, branch = repo.head()
    return task_from_branch(branch)


def split_ref(ref: str) -> tuple[str, str] | None:
    """(task, id) of a checkpoint ref, or None if the ref is not one."""
    if not ref.startswith(REF_ROOT):
        return None
    task, _, cp_id = ref[len(REF_ROOT) :].rpartition("/")
    if not task or not ID.match(cp_id):
        return None
    return task, cp_id


_FORMAT = "%(refname)%00%(objectname)%00%(tree)%00%(parent)%00%(contents)%00%01"


def summary_message(message: str) -> str:
    first = message.split("\n", 1)[0]
    text = first.split(": ", 1)[1] if ": " in first else ""
    return "" if text == "(no message)" else text


def load_checkpoints(repo: Repo, prefix: str = REF_ROOT) -> list[Checkpoint]:
    """Every checkpoint under prefix, fetched ones included when the prefix covers them."""
    from .manifest_cache import ManifestCache

    out = repo.git("for-each-ref", f"--format={_FORMAT}", prefix)
    found: list[Checkpoint] = []
    cache = ManifestCache(repo)
    seen: set[str] = set()
    for record in out.decode("utf-8", "surrogateescape").split("\0\1"):
        record = record.lstrip("\n")
        if not record:
            continue
        ref, oid, tree, parents, message = record.split("\0", 4)
        parsed = split_ref(ref)
        if parsed is None:
            continue
        seen.add(oid)
        manifest = cache.get(oid)
        if manifest is None:
            manifest = parse_manifest(message)
            cache.put(oid, manifest)
        cp = _checkpoint_from(
            ref, parsed, oid, tree, parents.split(), message=message, parsed=manifest
        )
        if cp is not None:
            found.append(cp)
    listed_task = prefix[len(REF_ROOT) :].rstrip("/") if prefix != REF_ROOT else None
    cache.save(seen, listed_task or None)
    found.sort(key=lambda c: (c.ref.startswith(REMOTE_ROOT), c.task, c.number))
    return found


def _checkpoint_from(
    ref: str,
    name: tuple[str, str],
    oid: str,
    tree: str,
    plist: list[str],
    *,
    message: str,
    parsed: tuple[dict[str, Any], str | None] | None = None,
) -> Checkpoint | None:
    """A checkpoint from its commit's parts, or None when the commit is not stash-shaped.
    `parsed`: its manifest, already parsed."""
    if not plist:
        return None
    task, cp_id = name
    manifest, problem = parsed if parsed is not None else parse_manifest(message)
    if manifest.get("base_commit", "") is None:
        # An unborn HEAD had no B: the parents are I, then U when there is an overlay.
        base, index_commit = None, plist[0]
        overlay = plist[1] if len(plist) > 1 else None
    elif len(plist) >= 2:
        base, index_commit = plist[0], plist[1]
        overlay = plist[2] if len(plist) > 2 else None
    else:
        return None  # not stash-shaped: never taken for a checkpoint
    claimed = manifest.get("base_commit")
    if problem is None and isinstance(claimed, str) and claimed != base:
        problem = "manifest base_commit is not the commit's first parent"
    return Checkpoint(
        task=task,
        id=cp_id,
        ref=ref,
        commit=oid,
        worktree_tree=tree,
        base=base,
        index_commit=index_commit,
        overlay_commit=overlay,
        message=summary_message(message),
        manifest=manifest,
        problem=problem,
    )


def checkpoint_at(repo: Repo, commit: str, task: str, cp_id: str) -> Checkpoint:
    """A checkpoint by its commit alone, for one this repository recorded itself (a
    restore's safety checkpoint): found whether or not a ref still points at it.
    """
    for cp in load_checkpoints(repo, f"{REF_ROOT}{task}/"):
        if cp.commit == commit:
            return cp
    out = repo.git("show", "-s", "--format=%H%x00%T%x00%P%x00%B", commit, "--")
    oid, tree, parents, message = out.decode("utf-8", "surrogateescape").split("\0", 3)
    ref = f"{REF_ROOT}{task}/{cp_id}"
    found = _checkpoint_from(
        ref, (task, cp_id), oid, tree, parents.split(), message=message.rstrip("\n")
    )
    if found is None:
        raise UsageError(f"recorded checkpoint {commit[:12]} is not a checkpoint commit")
    return found


def task_checkpoints(repo: Repo, task: str) -> list[Checkpoint]:
    return [c for c in load_checkpoints(repo, f"{REF_ROOT}{task}/") if c.task == task]


def recent_checkpoints(repo: Repo, task: str) -> list[Checkpoint]:
    """The end of `task_checkpoints(repo, task)` that a save needs (TaskListing.recent)."""
    return TaskListing(repo, task).recent()


def _refs_from_git(repo: Repo, folder: str) -> list[tuple[str, str]]:
    """(ref, commit id) of each ref under `folder`, as `git for-each-ref` lists them."""
    out = repo.git("for-each-ref", "--format=%(refname)%00%(objectname)", folder)
    lines = out.decode("utf-8", "surrogateescape").splitlines()
    return [(ref, oid) for ref, _, oid in (line.partition("\0") for line in lines)]


class _AskGit(Exception):
    """A ref file read late says what only git can read (locate.RefFolder.id_of)."""


def _plain_id(name: str) -> bool:
    """A checkpoint id as git and split_ref read it alike (ASCII digits, no newline)."""
    return name.isascii() and ID.fullmatch(name) is not None


class TaskListing:
    """A task's checkpoints as a save or a restore reads them, at the cost of what they
    use, not of the task's history: the names and commit ids of all (one for-each-ref
    that reads no object), and the commits only of those asked for, from the newest
    down, a few at a time. What it gives is what task_checkpoints gives, parsed the
    same."""

    def __init__(self, repo: Repo, task: str) -> None:
        self._repo = repo
        self._task = task
        self._read: list[Checkpoint] = []  # newest first, what is a checkpoint of those read
        # number, ref, commit ("": a loose ref whose file is read when it is reached); oldest first
        self._unread: list[tuple[int, str, str]] = []
        self._ids: dict[str, tuple[str, str]] = {}  # id -> ref, commit (or "", as above)
        self._files: RefFolder | None = None  # where the ids not read yet are read
        if any((repo.common_dir / p).exists() for p in ("shallow", "info/grafts")):
            # Parents other than those a commit names: as for-each-ref reads them.
            self._read = task_checkpoints(repo, task)[::-1]
            return
        folder = f"{REF_ROOT}{task}/"
        self._files = RefFolder.listed(repo.common_dir, folder, _plain_id)
        if self._files is not None:  # names only: a file is read when its ref is reached
            self._list(list(self._files.names.items()))
        else:
            self._list(_refs_from_git(repo, folder))

    def _list(self, refs: list[tuple[str, str]]) -> None:
        self._read, self._unread, self._ids = [], [], {}
        for ref, oid in refs:
            parsed = split_ref(ref)
            if parsed is not None and parsed[0] == self._task:
                self._unread.append((int(parsed[1][3:]), ref, oid))
                self._ids[parsed[1]] = ref, oid
        self._unread.sort()

    def _resolved(self, ref: str, oid: str) -> str:
        """The commit id of `ref`, its file read if not yet; "" when it is gone."""
        if oid or self._files is None:
            return oid
        found = self._files.id_of(ref)
        if found is None:
            raise _AskGit()
        return found

    def _from_git(self) -> None:
        """Start over from git's listing (a ref file said what only git reads)."""
        self._files = None
        self._list(_refs_from_git(self._repo, f"{REF_ROOT}{self._task}/"))

    def _more(self) -> bool:
        """Read the next few commits down; False when all are read."""
        if not self._unread:
            return False
        batch = max(2, 4 * len(self._read))  # usually the newest, or a safety and the one before
        chunk, self._unread = self._unread[-batch:], self._unread[:-batch]
        try:
            named = [(ref, self._resolved(ref, oid)) for _, ref, oid in chunk]
        except _AskGit:
            self._from_git()
            return True
        named = [(ref, oid) for ref, oid in named if oid]  # (deleted since the listing)
        found = self._repo.objects.read_specs([oid for _, oid in named])
        for (ref, oid), answer in zip(reversed(named), reversed(found), strict=True):
            cp = _from_commit(ref, oid, answer)
            if cp is not None:  # else not a checkpoint (task_checkpoints leaves it out too)
                self._read.append(cp)
        return True

    def recent(self) -> list[Checkpoint]:
        """Oldest first: the latest checkpoint that is no safety checkpoint and every one
        after it (the state a save compares with, and the highest id taken); all of
        them when none is such."""
        while not any(not c.is_safety for c in self._read) and self._more():
            pass
        normal = [n for n, c in enumerate(self._read) if not c.is_safety]
        return self._read[: normal[0] + 1][::-1] if normal else self._read[::-1]

    def normal_back(self, back: int) -> Checkpoint | None:
        """The checkpoint `back` before the latest one that is no safety checkpoint (0:
        that one); None when there are not that many."""
        while True:
            normal = [c for c in self._read if not c.is_safety]
            if back < len(normal):
                return normal[back]
            if not self._more():
                return None

    def by_id(self, cp_id: str) -> Checkpoint | None:
        """The task's checkpoint `cp_id` (its commit alone read, unless it is read
        already); None when there is none or its ref names no checkpoint."""
        read = next((c for c in self._read if c.id == cp_id), None)
        if read is not None or cp_id not in self._ids:
            return read
        ref, oid = self._ids[cp_id]
        try:
            oid = self._resolved(ref, oid)
        except _AskGit:
            self._from_git()
            return self.by_id(cp_id)
        if not oid:
            return None  # (deleted since the listing)
        return _from_commit(ref, oid, self._repo.objects.read_specs([oid])[0])


def _from_commit(ref: str, oid: str, answer: tuple[str, bytes] | None) -> Checkpoint | None:
    """The checkpoint `ref` names, from its commit's raw bytes (as for-each-ref's
    %(tree), %(parent) and %(contents) give them to load_checkpoints)."""
    parsed = split_ref(ref)
    if answer is None or answer[0] != "commit" or parsed is None:
        return None
    header, _, body = answer[1].partition(b"\n\n")
    lines = header.split(b"\n")
    if not lines[0].startswith(b"tree "):
        return None
    parents = []  # as git parses a commit: the parent lines right after the tree's
    for line in lines[1:]:
        if line[:7] != b"parent ":
            break
        parents.append(line[7:].decode("ascii", "replace"))
    message = body.decode("utf-8", "surrogateescape")
    tree = lines[0][5:].decode("ascii", "replace")
    return _checkpoint_from(ref, parsed, oid, tree, parents, message=message)


def history(repo: Repo, task: str) -> list[Checkpoint]:
    """The task's own checkpoints, oldest first: safety checkpoints are restore's
    bookkeeping, never "the latest".
    """
    return [c for c in task_checkpoints(repo, task) if not c.is_safety]


# --- naming ---------------------------------------------------------------------------


def _trusted(cp: Checkpoint) -> Checkpoint:
    problem = cp.problem
    if problem is None and cp.remote is not None:  # fetched: read strictly, like config
        from .untrusted import fetched_manifest_problem

        problem = fetched_manifest_problem(cp.manifest)
    if problem:
        raise UsageError(f"checkpoint {cp.name} is malformed: {problem}")
    return cp


def resolve(
    repo: Repo, name: str, task: str, listed: list[Checkpoint] | TaskListing | None = None
) -> Checkpoint:
    """A checkpoint by any of the names design.md §7 allows. `listed`: the task's
    checkpoints, when the caller has listed them already (or a listing of the task)."""
    at = re.fullmatch(r"@(?:~(\d+))?", name)
    if at or ID.match(name):  # task-local names: read only the task's refs
        if not isinstance(listed, list):  # and of those only the commits the name needs
            listing = TaskListing(repo, task) if listed is None else listed
            back = int(at.group(1) or 0) if at else 0
            hit = listing.normal_back(back) if at else listing.by_id(name)
            if hit is not None:
                return _trusted(hit)
        mine = listed if isinstance(listed, list) else task_checkpoints(repo, task)
        if at:
            back = int(at.group(1) or 0)
            normal = [c for c in mine if not c.is_safety]
            if back < len(normal):
                return _trusted(normal[-1 - back])
            held = counted(len(normal), "checkpoint")
            raise UsageError(f"no checkpoint {name} in task {task!r} ({held})")
        found = [c for c in mine if c.id == name]
        if found:
            return _trusted(found[0])
    everything = load_checkpoints(repo)
    mine = [c for c in everything if c.task == task]
    # Local names first (the sort puts them first): a local task `origin/x` wins over
    # the fetched `origin/x`, which `remotes/origin/x/cp_001` always names.
    candidates = [
        c
        for c in everything
        if name in (c.ref, c.name, f"{c.task}/{c.id}") or (c.task == task and c.id == name)
    ]
    if not candidates and re.fullmatch(r"[0-9a-fA-F]{4,40}", name):
        lowered = name.lower()
        candidates = [c for c in everything if c.commit.startswith(lowered)]
        if len({c.commit for c in candidates}) > 1:
            raise UsageError(
                f"commit id {name} is ambiguous: {', '.join(c.name for c in candidates)}"
            )
    if candidates:
        return _trusted(candidates[0])
    names = [c.id for c in mine] + [c.name for c in everything]
    import difflib  # only for a name that is not there

    close = difflib.get_close_matches(name, names, n=3, cutoff=0.5)
    hint = f"; did you mean {', '.join(dict.fromkeys(close))}?" if close else ""
    if not everything:
        hint = "; no checkpoints yet (git checkpoint save)"
    raise UsageError(f"unknown checkpoint {name!r} in task {task!r}{hint}")
