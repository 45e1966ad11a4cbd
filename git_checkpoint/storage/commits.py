"""Checkpoint commits written and read: W, I and U (design.md §3), the trees they
name, and the managed set they hold.

`store_checkpoint` writes a snapshot as the task's next checkpoint: its commits, its
manifest and a new ref, created by compare-and-swap so two savers never take one name.
Which workspace it stores, and under which policies, is the save's (save/session.py).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from ..config.model import Config
from ..core import yamltext
from ..core.anytype import Any
from ..core.errors import Refused, UsageError
from ..core.records import now
from ..core.text import kept
from ..fast import quickstate
from ..gitcore.repo import Repo, nul_list
from . import oplog
from .manifest import MANIFEST_MAX_BYTES, build_manifest, repo_slug
from .refs import REF_ROOT, Checkpoint, recent_checkpoints, summary_message

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    from .manifest import Captured

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


@dataclass(frozen=True)
class Written:
    """The three commits of a checkpoint: W (work tree), I (index), U (overlay)."""

    commit: str  # W
    index_commit: str  # I
    overlay_commit: str | None  # U


def write_checkpoint(
    repo: Repo,
    snapshot: Captured,
    *,
    task: str,
    cp_id: str,
    message: str,
    manifest: dict[str, Any],
    previous: Checkpoint | None = None,
) -> Written:
    """Write I, U and W. The ref is created separately (its name may be taken).

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
    body = dump_yaml(manifest)
    commit = repo.commit_tree(
        snapshot.worktree_tree, parents, f"{summary_line(cp_id, task, message)}\n\n{body}"
    )
    found = {index_commit: snapshot.index_tree}
    if overlay_commit and snapshot.overlay_tree:
        found[overlay_commit] = snapshot.overlay_tree
    found[commit] = snapshot.worktree_tree
    _keep_trees(repo, found, commit)
    return Written(commit, index_commit, overlay_commit)


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


def same_state(repo: Repo, snapshot: Captured, cp: Checkpoint) -> bool:
    if cp.base != snapshot.base or cp.worktree_tree != snapshot.worktree_tree:
        return False
    # An intent-to-add entry whose file is gone is in neither tree: only the manifest has it
    # (the first of them, sorted, when there were too many to list: intent_to_add_total).
    named = sorted(cp.manifest.get("intent_to_add") or ())
    marked = sorted(snapshot.intent_to_add)
    total = cp.manifest.get("intent_to_add_total", len(named))
    if total != len(marked) or named != marked[: len(named)]:
        return False
    if (cp.overlay_commit is None) != (snapshot.overlay_tree is None):
        return False
    return trees_of(repo, cp) == (snapshot.index_tree, snapshot.overlay_tree)


@dataclass(frozen=True)
class Labels:
    """What a checkpoint says of itself beyond its trees, in its manifest."""

    message: str = ""
    hypothesis: str | None = None
    next_move: str | None = None
    auto: bool | str = False  # True: saved by a hook; SAFETY: a restore's safety checkpoint
    run_id: str | None = None
    left_out: tuple[dict[str, Any], ...] = ()  # what the save did not capture, and why
    left_out_total: int = 0  # how many there were, when the list was cut short
    # The agent session of a hook's save: {"agent", "id", "turn", "turn_id"} (some).
    session: dict[str, Any] | None = None

    def fitted(self) -> tuple[Labels, list[str]]:
        """These labels as every reader accepts them (core.text.kept), and what was
        changed."""
        said: list[str] = []
        message, note = kept(self.message, MESSAGE_MAX)
        said += [f"message: {note}"] if note else []
        changed: dict[str, Any] = {"message": message}
        for name, value in (("hypothesis", self.hypothesis), ("next_move", self.next_move)):
            if value is not None:
                changed[name], note = kept(value, NOTE_MAX)
                said += [f"{name.replace('_', ' ')}: {note}"] if note else []
        return replace(self, **changed), said


# The most a checkpoint keeps of its message (its summary line and its notes), and of a
# hypothesis or a next move. Longer text is cut, and the save says so.
MESSAGE_MAX = 2000
NOTE_MAX = 4000


def fit_manifest(manifest: dict[str, Any], limit: int = MANIFEST_MAX_BYTES) -> list[str]:
    """Cut `manifest` in place until its YAML is within `limit` (what every reader
    accepts): the `git add -N` paths it lists past the first ones (their count stays),
    then the excludes and includes of the configuration (their count stays); what was
    cut, said. Ours are about 1 KiB: this is for thousands of paths or patterns."""
    said: list[str] = []
    if len(dump_yaml(manifest)) <= limit:
        return said
    marked = manifest.get("intent_to_add") or []
    if marked:
        others = len(dump_yaml({**manifest, "intent_to_add": []}))
        kept_paths, room = 0, limit - others - 64  # (64: the total's line)
        for path in marked:
            room -= len(dump_yaml({"p": [path]})) - len("p:\n")  # its line
            if room < 0:
                break
            kept_paths += 1
        manifest["intent_to_add"] = marked[:kept_paths]
        manifest["intent_to_add_total"] = len(marked)
        said.append(
            f"the manifest lists {kept_paths:,} of {len(marked):,} intent-to-add paths "
            "(the others are restored as untracked files)"
        )
    untracked = manifest.get("untracked")
    if len(dump_yaml(manifest)) > limit and isinstance(untracked, dict):
        counts = {k: len(v) for k, v in untracked.items() if isinstance(v, list)}
        manifest["untracked"] = {k: [f"({n:,} patterns)"] for k, n in counts.items()}
        said.append("the manifest counts the include and exclude patterns, not lists them")
    return said


def dump_yaml(data: Any) -> str:
    """`data` as YAML: the plain form core.yamltext writes, else PyYAML's."""
    try:
        return yamltext.dump(data)
    except yamltext.Unsupported:
        import yaml

        return str(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100))


@dataclass(frozen=True)
class StoreOutcome:
    """A stored checkpoint, or the task's latest when it holds the same state."""

    checkpoint: Checkpoint
    created: bool  # False: the workspace equals `checkpoint`, nothing was written
    cut: tuple[str, ...] = ()  # what was cut from its labels or manifest to fit


def store_checkpoint(
    repo: Repo,
    config: Config,
    task: str,
    snapshot: Captured,
    labels: Labels,
    *,
    dedupe: bool = True,
    before_ref: Callable[[str, str], None] | None = None,
    existing: list[Checkpoint] | None = None,
) -> StoreOutcome:
    """Store `snapshot` as the task's next checkpoint (the caller holds the lock), or,
    with `dedupe`, name the latest one when it holds the same state. `before_ref(commit,
    name)` runs once the commit exists, before its ref does. `existing`: the task's
    checkpoints from its latest normal one on (refs.recent_checkpoints; the whole list
    does too), when the caller has just listed them.
    """
    if not repo.sha1():
        raise Refused(
            "this repository names its objects with SHA-256 (extensions.objectFormat), "
            "which git-checkpoint does not support yet: nothing saved"
        )
    if existing is None:
        existing = recent_checkpoints(repo, task)
    labels, cut = labels.fitted()
    normal = [c for c in existing if not c.is_safety]
    if dedupe and normal and same_state(repo, snapshot, normal[-1]):
        return StoreOutcome(normal[-1], created=False)
    number = max([oplog.read_high_water(repo, task)] + [c.number for c in existing]) + 1
    stamp = now()  # the one clock of every record (GIT_CHECKPOINT_NOW in tests)
    verifiers = [
        {"name": v.name, "command": v.command, "required": v.required} for v in config.verifiers
    ]
    for _ in range(1000):  # another process may take the id between our read and our write
        cp_id = f"cp_{number:03d}"
        manifest = build_manifest(
            snapshot=snapshot,
            task=task,
            cp_id=cp_id,
            run_id=labels.run_id or stamp.strftime("run_%Y_%m_%d_%H%M"),
            repo_name=repo_slug(repo),
            include=config.include,
            exclude=config.exclude,
            verifiers=verifiers,
            notes=[labels.message] if labels.message else [],
            hypothesis=labels.hypothesis,
            next_move=labels.next_move,
            auto=labels.auto,
        )
        if labels.session:
            manifest["session"] = dict(labels.session)
        if labels.left_out:
            manifest["left_out"] = list(labels.left_out)
            if labels.left_out_total > len(labels.left_out):
                manifest["left_out_total"] = labels.left_out_total
        manifest_cut = fit_manifest(manifest)
        summary = labels.message or "(no message)"
        written = write_checkpoint(
            repo,
            snapshot,
            task=task,
            cp_id=cp_id,
            message=summary,
            manifest=manifest,
            previous=normal[-1] if normal else None,
        )
        ref = f"{REF_ROOT}{task}/{cp_id}"
        # The mark first: a state folder that cannot be written fails the save before a
        # checkpoint exists, not after. (A mark past a ref never made only skips an id.)
        oplog.write_high_water(repo, task, number)
        if before_ref is not None:
            before_ref(written.commit, f"{task}/{cp_id}")
        if repo.create_ref(ref, written.commit, f"checkpoint: save {cp_id}"):
            saved = Checkpoint(
                task=task,
                id=cp_id,
                ref=ref,
                commit=written.commit,
                worktree_tree=snapshot.worktree_tree,
                base=snapshot.base,
                index_commit=written.index_commit,
                overlay_commit=written.overlay_commit,
                message=summary_message(summary_line(cp_id, task, summary)),
                manifest=manifest,
            )
            return StoreOutcome(saved, created=True, cut=(*cut, *manifest_cut))
        number += 1
    raise UsageError(f"could not find a free checkpoint id in task {task!r}")


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
