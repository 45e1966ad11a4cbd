"""Trees -> workspace: make the managed set equal to a checkpoint (design.md §4, §9, §11).

The plan is a tree-to-tree diff between a fresh snapshot of the workspace (which becomes
the safety checkpoint) and the target, so the cost grows with the difference, not the
repository. Every path is checked before anything is written: the target may be a
fetched, hostile tree. A journal in the git dir lets an interrupted restore be finished.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import Refused, UsageError
from .gitio import ZERO_OID, Repo, nul_list
from .snapshot import MARK_OPTIONS, Snapshot
from .state import write_atomic
from .store import Checkpoint, trees_of

if TYPE_CHECKING:
    import pygit2

SYMLINK = 0o120000
GITLINK = 0o160000
Entry = tuple[int, str]  # (mode, object id)


@dataclass(frozen=True)
class Write:
    path: str
    mode: int
    oid: str


@dataclass(frozen=True)
class Plan:
    index_tree: str
    writes: tuple[Write, ...]
    removes: tuple[str, ...]
    # Index entries that differ from the target's: (path, (mode, id)), or None to drop.
    index_changes: tuple[tuple[str, Entry | None], ...] = ()
    # Marks (assume-unchanged, skip-worktree) to put back on entries that were rewritten.
    marks: tuple[tuple[str, str], ...] = ()
    # Paths to mark again with `git add -N`, as they were when the target was saved.
    intent_to_add: tuple[str, ...] = ()


def _is_hostile_component(part: str) -> bool:
    if part in ("", ".", "..") or "\\" in part or "\0" in part:
        return True
    folded = part.rstrip(". ").lower()
    return folded in (".git", "git~1")


def check_path(path: str) -> None:
    """Refuse a path that is absolute, has `..`/`.git` parts, or is otherwise unsafe."""
    if path.startswith("/") or any(_is_hostile_component(p) for p in path.split("/")):
        raise Refused(f"unsafe path in checkpoint, nothing written: {path!r}")


class TreeView:
    """The managed set of a checkpoint or snapshot: tracked tree W plus overlay tree U."""

    def __init__(self, odb: pygit2.Repository, worktree: str, overlay: str | None) -> None:
        self.odb = odb
        self.worktree: Any = odb[worktree]
        self.worktree_id = worktree
        self.overlay: dict[str, Entry] = {}
        if overlay is not None:
            self.walk(odb[overlay], "", self.overlay)

    def walk(self, tree: Any, prefix: str, out: dict[str, Entry]) -> None:
        for entry in tree:
            path = f"{prefix}{entry.name}"
            if entry.filemode == 0o040000:
                self.walk(self.odb[entry.id], f"{path}/", out)
            else:
                out[path] = (int(entry.filemode), str(entry.id))

    def tracked(self, path: str) -> Entry | None:
        try:
            entry = self.worktree[path]
        except (KeyError, ValueError):
            return None
        return (int(entry.filemode), str(entry.id))

    def get(self, path: str) -> Entry | None:
        found = self.tracked(path)
        if found is None or found[0] == 0o040000:
            return self.overlay.get(path)
        return found


def _changed_paths(odb: pygit2.Repository, old: str, new: str) -> set[str]:
    import pygit2

    if old == new:
        return set()
    old_tree = odb[old].peel(pygit2.Tree)
    new_tree = odb[new].peel(pygit2.Tree)
    diff = old_tree.diff_to_tree(new_tree, flags=pygit2.enums.DiffOption.SKIP_BINARY_CHECK)
    paths: set[str] = set()
    for delta in diff.deltas:
        paths.add(delta.old_file.path)
        paths.add(delta.new_file.path)
    return paths


def _views(repo: Repo, current: Snapshot, target: Checkpoint) -> tuple[TreeView, TreeView]:
    now = TreeView(repo.odb, current.worktree_tree, current.overlay_tree)
    then = TreeView(repo.odb, target.worktree_tree, trees_of(repo, target)[1])
    return now, then


def _candidates(repo: Repo, now: TreeView, then: TreeView) -> set[str]:
    """Paths that may differ between two managed sets, found by tree-to-tree diffs."""
    paths = _changed_paths(repo.odb, now.worktree_id, then.worktree_id)
    paths |= set(now.overlay) ^ set(then.overlay)
    paths |= {p for p in set(now.overlay) & set(then.overlay) if now.overlay[p] != then.overlay[p]}
    return paths


@contextlib.contextmanager
def _readable_trees(target: Checkpoint) -> Iterator[None]:
    """A tree libgit2 cannot parse (an empty or slashed name) is an unsafe checkpoint."""
    import pygit2

    try:
        yield
    except pygit2.GitError as exc:
        raise Refused(f"unsafe checkpoint {target.name}: unreadable tree ({exc})") from None


def managed_differences(repo: Repo, current: Snapshot, target: Checkpoint) -> list[str]:
    """Paths of the managed set whose content, mode or presence differs from `target`."""
    with _readable_trees(target):
        now, then = _views(repo, current, target)
        return sorted(p for p in _candidates(repo, now, then) if now.get(p) != then.get(p))


def check_whole_checkpoint(repo: Repo, target: Checkpoint) -> None:
    """Every path of every tree of `target` checked, for a full checkout (verify)."""
    with _readable_trees(target):
        index_tree, overlay_tree = trees_of(repo, target)
        tracked: dict[str, Entry] = {}
        then = TreeView(repo.odb, target.worktree_tree, overlay_tree)
        then.walk(then.worktree, "", tracked)
        staged: dict[str, Entry] = {}
        then.walk(repo.odb[index_tree], "", staged)
    for path in [*tracked, *then.overlay, *staged]:
        check_path(path)
    links = {p for p, (mode, _) in tracked.items() if mode == SYMLINK}
    for path in then.overlay:
        parts = path.split("/")
        parents = {"/".join(parts[:i]) for i in range(1, len(parts))}
        if parents & links or path in tracked:
            raise Refused(f"unsafe checkpoint: {path!r} collides with a tracked path or symlink")


def plan_restore(repo: Repo, current: Snapshot, target: Checkpoint) -> Plan:
    """What must be written and removed so the managed set equals `target`.

    Valid only while the work tree equals `current` — which it does right after the
    snapshot that becomes the safety checkpoint.
    """
    with _readable_trees(target):
        now, then = _views(repo, current, target)
        target_index = trees_of(repo, target)[0]
        candidates = _candidates(repo, now, then)
        index_paths = _changed_paths(repo.odb, current.index_tree, target_index)
    for path in sorted(candidates | index_paths | set(then.overlay)):
        check_path(path)
    for path in then.overlay:
        if then.tracked(path) is not None:
            raise Refused(f"unsafe checkpoint: {path!r} is both tracked and untracked")

    writes: list[Write] = []
    removes: list[str] = []
    for path in sorted(candidates):
        before, after = now.get(path), then.get(path)
        if before == after:
            continue
        if after is None:
            if before is not None and before[0] != GITLINK:
                removes.append(path)
        elif after[0] != GITLINK:
            writes.append(Write(path, after[0], after[1]))
    _check_writes(repo.root, writes, removes, now, then)
    wanted_index = TreeView(repo.odb, target_index, None)
    index_changes = [(p, wanted_index.tracked(p)) for p in sorted(index_paths)]
    # `git add -N` entries are in no index tree: carry them by name (manifest) instead.
    then_ita = _intent_to_add_of(target, then, wanted_index)
    index_changes += [
        (p, None)
        for p in current.intent_to_add
        if p not in then_ita and p not in index_paths and wanted_index.tracked(p) is None
    ]
    return Plan(
        index_tree=target_index,
        writes=tuple(writes),
        removes=tuple(removes),
        index_changes=tuple(c for c in index_changes if c[1] is None or c[1][0] != 0o040000),
        marks=tuple((p, m) for p, m in current.flagged if wanted_index.tracked(p) is not None),
        intent_to_add=tuple(p for p in then_ita if p not in current.intent_to_add),
    )


def _intent_to_add_of(target: Checkpoint, then: TreeView, index: TreeView) -> list[str]:
    """The target's `git add -N` paths: named in its manifest, tracked in W, not in I."""
    named = target.manifest.get("intent_to_add")
    if not isinstance(named, list):
        return []
    paths = [p for p in named if isinstance(p, str)]
    for path in paths:
        check_path(path)
    return [p for p in paths if then.tracked(p) is not None and index.tracked(p) is None]


def _check_writes(
    root: Path, writes: list[Write], removes: list[str], now: TreeView, then: TreeView
) -> None:
    """Refuse writes through symlinks, over unmanaged files, or outside the work tree."""
    removing = set(removes)
    folders: dict[str, str] = {}  # every folder a write passes through -> one such write
    for write in writes:
        parts = write.path.split("/")
        for depth in range(1, len(parts)):
            folders.setdefault("/".join(parts[:depth]), write.path)
    fresh: set[str] = set()  # folders that will be created: nothing below them to check
    for folder in sorted(folders, key=lambda f: f.count("/")):
        path = folders[folder]
        entry = then.get(folder)
        if entry is not None and entry[0] == SYMLINK:
            raise Refused(
                f"unsafe checkpoint: {path!r} would be written through symlink {folder!r}"
            )
        parent = folder.rpartition("/")[0]
        if parent in fresh or folder in removing:
            fresh.add(folder)  # removed first, or below something created fresh
            continue
        try:
            st = os.lstat(root / folder)
        except (FileNotFoundError, NotADirectoryError):
            fresh.add(folder)
            continue
        if stat.S_ISLNK(st.st_mode):
            raise Refused(f"refusing to write {path!r} through the symlink {folder!r}")
        if not stat.S_ISDIR(st.st_mode):
            raise Refused(f"{folder!r} is in the way of {path!r} and is not managed")
    for write in writes:
        full = root / write.path
        if full.is_dir() and not full.is_symlink():
            # A folder (or a submodule's checkout) where a file goes: only what the plan
            # removes may be in it.
            inside = (
                os.path.relpath(os.path.join(d, f), root)
                for d, _, files in os.walk(full)
                for f in files
            )
            unmanaged = [p for p in inside if p not in removing]
            if unmanaged or now.get(write.path) is not None:
                what = "submodule" if (now.get(write.path) or (0,))[0] == GITLINK else "folder"
                raise Refused(
                    f"restore would replace the {what} {write.path!r}, which holds files "
                    f"outside the managed set: {', '.join(unmanaged[:3]) or '(its checkout)'}"
                )
        elif os.path.lexists(full) and now.get(write.path) is None:
            raise Refused(
                f"restore would overwrite {write.path!r}, which is outside the managed set "
                "(ignored or excluded); move it away or add it to untracked.include"
            )


# --- carrying out a plan ------------------------------------------------------------------


def journal_path(repo: Repo) -> Path:
    folder = repo.git_dir / "checkpoint"
    folder.mkdir(parents=True, exist_ok=True)
    return folder / "restore-journal.json"


@dataclass(frozen=True)
class Journal:
    target: str  # commit of the checkpoint being restored
    target_name: str
    safety: str | None  # commit of the safety checkpoint
    safety_name: str | None
    head_from: str | None
    head_to: str | None
    move_head: bool
    started_at: str
    pid: int


def read_journal(repo: Repo) -> Journal | None:
    try:
        data = json.loads(journal_path(repo).read_text())
        return Journal(**data)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError) as exc:
        raise UsageError(f"restore journal {journal_path(repo)} is unreadable: {exc}") from None


def set_journal_aside(repo: Repo) -> None:
    path = journal_path(repo)
    path.replace(path.with_name(f"{path.name}.unreadable"))


def write_journal(repo: Repo, journal: Journal) -> None:
    write_atomic(journal_path(repo), json.dumps(asdict(journal), indent=1).encode())


def clear_journal(repo: Repo) -> None:
    journal_path(repo).unlink(missing_ok=True)


def apply_plan(repo: Repo, plan: Plan) -> None:
    """Remove, then write, then set the index; never follows a symlink while writing."""
    root = repo.root
    for path in sorted(plan.removes, key=lambda p: p.count("/"), reverse=True):
        full = root / path
        try:
            st = os.lstat(full)
        except FileNotFoundError:
            continue
        if stat.S_ISDIR(st.st_mode):
            continue  # a folder where a file was: nothing of ours to remove
        os.unlink(full)
        prune_empty_parents(root, path)
    for write in plan.writes:
        full = root / write.path
        if full.is_dir() and not full.is_symlink():
            _remove_empty_tree(full)
    if plan.writes:
        with repo.temp_index() as env:
            listing = b"".join(
                f"{w.mode:o} {w.oid}\t".encode() + os.fsencode(w.path) + b"\0" for w in plan.writes
            )
            repo.git("update-index", "-z", "--index-info", stdin=listing, env=env)
            # checkout-index applies smudge filters (autocrlf, LFS) the way git would.
            repo.git("checkout-index", "-f", "-u", "-a", env=env)
            stale = repo.git_lines("diff-files", "-z", "--name-only", env=env)
            if stale:
                raise Refused(f"restore could not write: {', '.join(stale[:5])}")
    # Only the entries that differ are touched: every other entry keeps its stat cache.
    drops = [p for p, e in plan.index_changes if e is None]
    sets = [(p, e) for p, e in plan.index_changes if e is not None]
    lines = [f"0 {ZERO_OID}\t".encode() + os.fsencode(p) + b"\0" for p in drops]
    lines += [f"{e[0]:o} {e[1]}\t".encode() + os.fsencode(p) + b"\0" for p, e in sets]
    if lines:
        repo.git("update-index", "-z", "--index-info", stdin=b"".join(lines))
    if plan.intent_to_add:
        repo.git(
            "add",
            "--intent-to-add",
            "--pathspec-from-file=-",
            "--pathspec-file-nul",
            stdin=nul_list(plan.intent_to_add),
            env={"GIT_LITERAL_PATHSPECS": "1"},
        )
    for mark, option in MARK_OPTIONS:
        marked = [p for p, marks in plan.marks if mark in marks]
        if marked:
            repo.git("update-index", f"--{option}", "-z", "--stdin", stdin=nul_list(marked))


def prune_empty_parents(root: Path, path: str) -> None:
    parent = os.path.dirname(path)
    while parent:
        try:
            os.rmdir(root / parent)
        except OSError:
            return
        parent = os.path.dirname(parent)


def _remove_empty_tree(folder: Path) -> None:
    for dirpath, _, _ in sorted(os.walk(folder), key=lambda x: -len(x[0])):
        try:
            os.rmdir(dirpath)
        except OSError as exc:
            raise Refused(f"cannot replace folder {folder}: {exc}") from None


def leftovers(repo: Repo, plan: Plan) -> list[str]:
    """Paths the plan removed that are somehow still there, and an index that differs."""
    folders = {os.path.dirname(w.path) for w in plan.writes}
    out = [
        p
        for p in plan.removes
        if os.path.lexists(repo.root / p)
        and not (
            os.path.isdir(repo.root / p) and any(f == p or f.startswith(f"{p}/") for f in folders)
        )
    ]
    if plan.index_changes:
        wanted = {p: e for p, e in plan.index_changes if e is not None}
        # Name the paths while the command line stays short; past that, read the index.
        paths = [p for p, _ in plan.index_changes] if len(plan.index_changes) <= 1000 else []
        listed = repo.git_lines(
            "ls-files", "-s", "-z", "--", *paths, env={"GIT_LITERAL_PATHSPECS": "1"}
        )
        found = {}
        for item in listed:
            meta, _, path = item.partition("\t")
            mode, oid, stage = meta.split()
            found[path] = (int(mode, 8), oid) if stage == "0" else None
        out += [f"(index) {p}" for p, e in plan.index_changes if found.get(p) != wanted.get(p)]
    return out
