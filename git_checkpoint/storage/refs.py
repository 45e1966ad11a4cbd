"""Checkpoints in git: refs and stash-shaped commits (design.md §3).

A checkpoint is a commit W under `refs/checkpoints/<task>/cp_NNN` with parents B (base),
I (index) and, when the overlay is not empty, U (overlay). Its message carries the
immutable manifest (`manifest.py`); mutable state is in notes (`notes.py`).
"""

from __future__ import annotations

import datetime as dt
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ..config.model import Config
from ..core.errors import Refused, UsageError
from ..fast import quickstate
from ..gitcore.repo import Repo, nul_list
from ..save.capture import Snapshot, capture_workspace
from . import oplog as state
from .manifest import build_manifest, parse_manifest, repo_slug

REF_ROOT = "refs/checkpoints/"
REMOTE_ROOT = "refs/checkpoints/remotes/"
_ID = re.compile(r"^cp_(\d{3,})$")
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
        or any(not _TASK_PART.match(p) or p.endswith((".lock", ".")) or _ID.match(p) for p in parts)
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
    parts = [f"{p}-" if _ID.match(p) else p for p in parts]
    if parts[0] == "remotes":
        parts[0] = "remotes-"
    task = "/".join(p if _TASK_PART.match(p) else f"_{p}" for p in parts)
    if len(task) > TASK_MAX:  # cut, with a digest so that long branches stay apart
        import hashlib  # here: OpenSSL's start-up is 2 ms of every save's

        digest = hashlib.sha1(branch.encode("utf-8", "surrogateescape")).hexdigest()[:10]
        task = f"{task[: TASK_MAX - 11].rstrip('/.')}-{digest}"
    return task


def split_ref(ref: str) -> tuple[str, str] | None:
    """(task, id) of a checkpoint ref, or None if the ref is not one."""
    if not ref.startswith(REF_ROOT):
        return None
    task, _, cp_id = ref[len(REF_ROOT) :].rpartition("/")
    if not task or not _ID.match(cp_id):
        return None
    return task, cp_id


_FORMAT = "%(refname)%00%(objectname)%00%(tree)%00%(parent)%00%(contents)%00%01"


def _summary_message(message: str) -> str:
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
        cp = _checkpoint_from(ref, parsed, oid, tree, parents.split(), message, manifest)
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
        message=_summary_message(message),
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
    found = _checkpoint_from(ref, (task, cp_id), oid, tree, parents.split(), message.rstrip("\n"))
    if found is None:
        raise UsageError(f"recorded checkpoint {commit[:12]} is not a checkpoint commit")
    return found


def task_checkpoints(repo: Repo, task: str) -> list[Checkpoint]:
    return [c for c in load_checkpoints(repo, f"{REF_ROOT}{task}/") if c.task == task]


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


def resolve(repo: Repo, name: str, task: str, listed: list[Checkpoint] | None = None) -> Checkpoint:
    """A checkpoint by any of the names design.md §7 allows. `listed`: the task's
    checkpoints, when the caller has listed them already."""
    at = re.fullmatch(r"@(?:~(\d+))?", name)
    if at or _ID.match(name):  # task-local names: read only the task's refs
        mine = task_checkpoints(repo, task) if listed is None else listed
        if at:
            back = int(at.group(1) or 0)
            normal = [c for c in mine if not c.is_safety]
            if back < len(normal):
                return _trusted(normal[-1 - back])
            raise UsageError(f"no checkpoint {name} in task {task!r} ({len(normal)} checkpoints)")
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


# --- creation -----------------------------------------------------------------------------


# Commit -> tree: a commit id names its tree for good. What this process wrote, and the
# I and U commits of the last saves (the `trees` file in the state folder, kept by each
# save), answer trees_of without a `rev-parse`: a save compares with its last checkpoint,
# a restore reads a recent one, undo the safety checkpoint just written.
#
# The checkpoint commits a save here wrote are marked `ours`: a commit id names its trees
# for good, and those trees (W, and the I and U trees, which the save made, whatever
# commits it reused for them) are sound as git wrote them, so a restore of such a
# checkpoint need not check them as it checks a fetched one (ours_for_sure). An I or U
# commit a save reused is not marked: only its tree is the save's, the rest of it (its
# parents) may be anyone's.
_TREES: dict[str, str] = {}
_TREES_READ: set[str] = set()  # the files loaded into _TREES
_OURS: set[str] = set()  # the checkpoint commits those files mark, and this process wrote
_TREES_KEPT = 300  # lines: the W, I and U commits of the last hundred saves or more
_HEX = r"([0-9a-f]{40}|[0-9a-f]{64})"
_TREE_LINE = re.compile(rf"{_HEX} {_HEX}( ours)?")


def _trees_file(repo: Repo) -> Path:
    return repo.common_dir / "checkpoint" / "trees"


def _kept_trees(repo: Repo) -> list[str]:
    """The `trees` file's `commit tree [ours]` lines; anything else is not ours: git
    answers."""
    try:
        text = _trees_file(repo).read_text(encoding="ascii", errors="replace")
    except OSError:
        return []
    return [line for line in text.splitlines() if _TREE_LINE.fullmatch(line)]


def _read_trees_file(repo: Repo) -> None:
    path = str(_trees_file(repo))
    if path in _TREES_READ:
        return
    for line in _kept_trees(repo):
        commit, tree, *mark = line.split(" ")
        _TREES.setdefault(commit, tree)
        if mark:
            _OURS.add(commit)
    _TREES_READ.add(path)  # last: the secret scan's thread may be reading it too


def _keep_trees(repo: Repo, found: dict[str, str], ours: str) -> None:
    """Add commit -> tree pairs to the `trees` file, `ours` marked as the checkpoint
    commit this save wrote (the caller holds the lock)."""
    _TREES.update(found)
    _OURS.add(ours)
    lines = [line for line in _kept_trees(repo) if line.partition(" ")[0] not in found]
    lines += [f"{c} {t} ours" if c == ours else f"{c} {t}" for c, t in found.items()]
    path = repo.state_dir() / _trees_file(repo).name  # (state_dir: made if missing)
    tmp = path.with_name(f".trees.{os.getpid()}.tmp")
    try:  # a cache: no fsync, and a save never fails over it
        tmp.write_text("".join(f"{line}\n" for line in lines[-_TREES_KEPT:]), encoding="ascii")
        os.replace(tmp, path)
    except OSError:
        pass


def summary_line(cp_id: str, task: str, message: str) -> str:
    return " ".join(f"checkpoint {cp_id} on {task}: {message}".split())


def write_checkpoint(
    repo: Repo,
    snapshot: Snapshot,
    task: str,
    cp_id: str,
    message: str,
    manifest: dict[str, Any],
    previous: Checkpoint | None = None,
) -> tuple[str, str, str | None]:
    """Write I, U and W; return (W, I, U). The ref is created separately (it may be taken).

    An I or U equal to `previous`'s (same tree; for I, on the same base) is that commit
    again: most saves leave the index and the overlay as they were, and two commit
    objects less per checkpoint is time and space saved."""
    base_parents = [snapshot.base] if snapshot.base else []
    same_base = previous is not None and previous.problem is None and previous.base == snapshot.base
    before = save_trees_of(repo, previous) if previous is not None and same_base else None
    if previous is not None and before is not None and before[0] == snapshot.index_tree:
        index_commit = previous.index_commit
    else:
        index_commit = repo.commit_tree(
            snapshot.index_tree, base_parents, f"index on {task}: {cp_id}\n"
        )
    parents = [*base_parents, index_commit]
    overlay_commit = None
    if snapshot.overlay_tree:
        if previous is not None and before is not None and before[1] == snapshot.overlay_tree:
            overlay_commit = previous.overlay_commit
        else:
            overlay_commit = repo.commit_tree(
                snapshot.overlay_tree, [], f"untracked files on {task}: {cp_id}\n"
            )
        assert overlay_commit is not None
        parents.append(overlay_commit)
    body = yaml.safe_dump(manifest, sort_keys=False, allow_unicode=True, width=100)
    commit = repo.commit_tree(
        snapshot.worktree_tree, parents, f"{summary_line(cp_id, task, message)}\n\n{body}"
    )
    found = {index_commit: snapshot.index_tree}
    if overlay_commit and snapshot.overlay_tree:
        found[overlay_commit] = snapshot.overlay_tree
    found[commit] = snapshot.worktree_tree
    _keep_trees(repo, found, commit)
    return commit, index_commit, overlay_commit


def _tree_ids(repo: Repo, commits: list[str]) -> list[str]:
    missing = [c for c in commits if c not in _TREES]
    if missing:
        _read_trees_file(repo)
        missing = [c for c in commits if c not in _TREES]
    if missing:
        found = repo.git("rev-parse", *(f"{c}^{{tree}}" for c in missing)).decode().split()
        _TREES.update(zip(missing, found, strict=True))
    return [_TREES[c] for c in commits]


def ours_for_sure(repo: Repo, cp: Checkpoint) -> bool:
    """Whether `cp` is a checkpoint a save here wrote (one of the last hundred or so):
    then its trees are as sound as git's own, and a restore skips walking them for the
    flaws a crafted tree may have. False says nothing: such a checkpoint is checked."""
    _read_trees_file(repo)
    return cp.commit in _OURS


def save_trees_of(repo: Repo, cp: Checkpoint) -> tuple[str, str | None]:
    """trees_of, for a save comparing with the task's latest checkpoint: from the state
    the last save kept (quickstate) when `cp` is that save's, else from git. Only a save
    takes them from there (which I and U to reuse, what to scan for secrets): a restore
    writes what git says the checkpoint holds."""
    saved = quickstate.load(repo)
    trees = saved.get("trees") if saved is not None else None
    if saved is not None and saved.get("commit") == cp.commit and isinstance(trees, dict):
        index, overlay = trees.get("index"), trees.get("overlay")
        same_shape = (cp.overlay_commit is None) == (overlay is None)
        if isinstance(index, str) and same_shape and (overlay is None or isinstance(overlay, str)):
            return index, overlay
    return trees_of(repo, cp)


def trees_of(repo: Repo, cp: Checkpoint) -> tuple[str, str | None]:
    """(index tree, overlay tree or None)."""
    if cp.overlay_commit is None:
        return _tree_ids(repo, [cp.index_commit])[0], None
    index_tree, overlay_tree = _tree_ids(repo, [cp.index_commit, cp.overlay_commit])
    return index_tree, overlay_tree


def same_state(repo: Repo, snapshot: Snapshot, cp: Checkpoint) -> bool:
    if cp.base != snapshot.base or cp.worktree_tree != snapshot.worktree_tree:
        return False
    # An intent-to-add entry whose file is gone is in neither tree: only the manifest has it.
    if sorted(cp.manifest.get("intent_to_add") or ()) != sorted(snapshot.intent_to_add):
        return False
    if (cp.overlay_commit is None) != (snapshot.overlay_tree is None):
        return False
    return trees_of(repo, cp) == (snapshot.index_tree, snapshot.overlay_tree)


# --- saving -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class SaveOutcome:
    checkpoint: Checkpoint
    created: bool  # False: the workspace equals `checkpoint`, nothing was written
    snapshot: Snapshot


def save_checkpoint(
    repo: Repo,
    config: Config,
    task: str,
    *,
    message: str = "",
    hypothesis: str | None = None,
    next_move: str | None = None,
    auto: bool | str = False,
    dedupe: bool = True,
    run_id: str | None = None,
    snapshot: Snapshot | None = None,
    extra: dict[str, Any] | None = None,
    before_ref: Callable[[str, str], None] | None = None,
    existing: list[Checkpoint] | None = None,
) -> SaveOutcome:
    """Capture the workspace and store it as the task's next checkpoint (caller holds the
    lock). `before_ref(commit, name)` runs once the commit exists, before its ref does.
    `existing`: the task's checkpoints, when the caller has just listed them.
    """
    if not repo.sha1():
        raise Refused(
            "this repository names its objects with SHA-256 (extensions.objectFormat), "
            "which git-checkpoint does not support yet: nothing saved"
        )
    if snapshot is None:
        snapshot = capture_workspace(repo, config, keep=True)
    if existing is None:
        existing = task_checkpoints(repo, task)
    normal = [c for c in existing if not c.is_safety]
    if dedupe and normal and same_state(repo, snapshot, normal[-1]):
        return _remember(repo, SaveOutcome(normal[-1], created=False, snapshot=snapshot))
    number = max([state.read_high_water(repo, task)] + [c.number for c in existing]) + 1
    stamp = dt.datetime.now(dt.UTC)
    verifiers = [
        {"name": v.name, "command": v.command, "required": v.required} for v in config.verifiers
    ]
    for _ in range(1000):  # another process may take the id between our read and our write
        cp_id = f"cp_{number:03d}"
        manifest = build_manifest(
            snapshot=snapshot,
            task=task,
            cp_id=cp_id,
            run_id=run_id or stamp.strftime("run_%Y_%m_%d_%H%M"),
            repo_name=repo_slug(repo),
            include=config.include,
            exclude=config.exclude,
            verifiers=verifiers,
            notes=[message] if message else [],
            hypothesis=hypothesis,
            next_move=next_move,
            auto=auto,
        )
        manifest.update(extra or {})
        summary = message or "(no message)"
        commit, index_commit, overlay_commit = write_checkpoint(
            repo, snapshot, task, cp_id, summary, manifest, normal[-1] if normal else None
        )
        ref = f"{REF_ROOT}{task}/{cp_id}"
        # The mark first: a state folder that cannot be written fails the save before a
        # checkpoint exists, not after. (A mark past a ref never made only skips an id.)
        state.write_high_water(repo, task, number)
        if before_ref is not None:
            before_ref(commit, f"{task}/{cp_id}")
        if repo.create_ref(ref, commit, f"checkpoint: save {cp_id}"):
            saved = Checkpoint(
                task=task,
                id=cp_id,
                ref=ref,
                commit=commit,
                worktree_tree=snapshot.worktree_tree,
                base=snapshot.base,
                index_commit=index_commit,
                overlay_commit=overlay_commit,
                message=_summary_message(summary_line(cp_id, task, summary)),
                manifest=manifest,
            )
            return _remember(repo, SaveOutcome(saved, created=True, snapshot=snapshot))
        number += 1
    quickstate.discard(snapshot.seed)
    raise UsageError(f"could not find a free checkpoint id in task {task!r}")


def _remember(repo: Repo, outcome: SaveOutcome) -> SaveOutcome:
    """Keep what the quick auto-save needs, when this is now the task's latest checkpoint."""
    snap, cp = outcome.snapshot, outcome.checkpoint
    if snap.seed is None:
        return outcome
    if cp.is_safety:
        quickstate.discard(snap.seed)
        return outcome
    trees = {
        "base": snap.base,
        "worktree": snap.worktree_tree,
        "index": snap.index_tree,
        "overlay": snap.overlay_tree,
    }
    quickstate.record(repo, snap.seed, task=cp.task, ref=cp.ref, commit=cp.commit, trees=trees)
    return outcome


# --- reading ----------------------------------------------------------------------------------


def overlay_paths(repo: Repo, cp: Checkpoint) -> list[str]:
    if not cp.overlay_commit:
        return []
    return repo.git_lines("ls-tree", "-r", "-z", "--name-only", f"{cp.overlay_commit}^{{tree}}")


def combined_tree(repo: Repo, worktree_tree: str, overlay_tree: str | None) -> str:
    """One tree holding the tracked files and the overlay: the whole managed set."""
    if overlay_tree is None:
        return worktree_tree
    with repo.temp_index() as env:
        repo.git("read-tree", worktree_tree, env=env)
        entries = repo.git("ls-tree", "-r", "-z", overlay_tree)
        repo.git("update-index", "-z", "--index-info", stdin=entries, env=env)
        return repo.git("write-tree", env=env).decode().strip()


def managed_tree(repo: Repo, cp: Checkpoint) -> str:
    return combined_tree(repo, cp.worktree_tree, trees_of(repo, cp)[1])


def add_to_overlay(repo: Repo, cp: Checkpoint, paths: list[str]) -> tuple[str, str]:
    """A copy of a just-made checkpoint whose overlay also holds `paths`; return its W
    and its new overlay tree.

    Only for our own safety checkpoints, before anyone else has seen them: the caller
    records the new commit, then moves the ref by compare-and-swap from the old one.
    """
    overlay_tree = trees_of(repo, cp)[1]
    with repo.temp_index() as env:
        if overlay_tree:
            repo.git("read-tree", overlay_tree, env=env)
        repo.git("update-index", "--add", "-z", "--stdin", stdin=nul_list(paths), env=env)
        new_tree = repo.git("write-tree", env=env).decode().strip()
    new_overlay = repo.commit_tree(new_tree, [], f"untracked files on {cp.task}: {cp.id}\n")
    parents = ([cp.base] if cp.base else []) + [cp.index_commit, new_overlay]
    raw = repo.git("cat-file", "commit", cp.commit).decode("utf-8", "surrogateescape")
    message = raw.split("\n\n", 1)[1]  # after the header: the message, byte for byte
    return repo.commit_tree(cp.worktree_tree, parents, message), new_tree
