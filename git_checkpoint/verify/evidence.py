"""Verifier evidence found by tree: the checkpoints (local, and fetched ones under
`refs/checkpoints/remotes/`) whose tracked files, or whose tracked files and overlay
together, are a given tree, each with the latest result of its verifiers and its status.
A commit made from a checkpoint has that tree, and so has one rebased or squashed to the
same tree: the evidence survives history being rewritten.

A checkpoint's managed tree (tracked files and overlay in one tree, as `git add -A` of
its workspace would commit it) is computed once, from its trees read through cat-file
and hashed here, nothing written, then kept (fast/treecache.py): checkpoints never change.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from ..core.errors import GitFailed
from ..core.records import to_the_second
from ..core.text import printable
from ..fast import treecache
from ..gitcore.catfile import Objects, Tree
from ..gitcore.formats import TREE, canonical_mode, object_id, raw_entries
from ..gitcore.repo import Repo
from ..storage.notes import derive_status, latest_results, read_events
from ..storage.refs import Checkpoint, load_checkpoints
from ..storage.untrusted import fetched_manifest_problem
from .verifiers import verifier_line

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    from typing import Any

ALL_FILES = "all of its files"
TRACKED_ONLY = "its tracked files, not its untracked ones"


@dataclass(frozen=True)
class VerifierEvidence:
    """A verifier's latest result on a checkpoint, as its notes record it."""

    name: str
    status: str  # passed | failed | error
    at: str
    host: str | None = None  # the machine it ran on, when recorded
    where: str | None = None  # workspace | temporary worktree | …

    def line(self) -> str:
        detail = f"{self.status} {to_the_second(self.at)}".strip()
        if self.host:
            detail += f" on {self.host}"
        return verifier_line(self.name, detail)


@dataclass(frozen=True)
class CheckpointEvidence:
    """A checkpoint that holds the tree, and what its notes say."""

    checkpoint: str  # main/cp_004; a fetched one origin/main/cp_004
    commit: str
    remote: str | None  # the remote it was fetched from; None for a local one
    holds: str  # what of it the tree is: ALL_FILES or TRACKED_ONLY
    status: str  # candidate | promoted | rejected
    verifiers: list[VerifierEvidence]

    @property
    def verified(self) -> bool:
        return bool(self.verifiers) or self.status != "candidate"

    def lines(self) -> list[str]:
        fetched = f", fetched from {self.remote}" if self.remote else ""
        out = [f"{self.checkpoint} {self.status}{fetched}: the commit has {self.holds}"]
        return out + [f"  {v.line()}" for v in self.verifiers]


def evidence_for_tree(repo: Repo, tree: str) -> list[CheckpointEvidence]:
    """Every checkpoint whose tree is `tree`, in either form, once per commit: local ones
    first, each task's in id order. Malformed ones (problem, or a fetched manifest that is
    not ours) vouch for nothing and are left out."""
    checkpoints = load_checkpoints(repo)
    managed = managed_trees(repo, checkpoints)
    found: list[CheckpointEvidence] = []
    seen: set[str] = set()
    for cp in checkpoints:
        if cp.commit in seen or not sound(cp):
            continue
        if managed.get(cp.commit) == tree:
            holds = ALL_FILES
        elif cp.worktree_tree == tree:
            holds = TRACKED_ONLY
        else:
            continue
        seen.add(cp.commit)
        events = read_events(repo, cp.commit)
        found.append(
            CheckpointEvidence(
                checkpoint=printable(cp.name, 200),
                commit=cp.commit,
                remote=cp.remote,
                holds=holds,
                status=derive_status(events),
                verifiers=[_verifier(e) for e in latest_results(events).values()],
            )
        )
    return found


def sound(cp: Checkpoint) -> bool:
    """Whether `cp` can vouch for anything: its commit and manifest are as we write them
    (a fetched one's manifest read strictly, as storage.refs.resolve reads it)."""
    return cp.problem is None and (cp.remote is None or not fetched_manifest_problem(cp.manifest))


def _verifier(event: dict[str, Any]) -> VerifierEvidence:
    """One `verifier` event as shown: its fields may come from another machine's notes."""
    host, where = event.get("host"), event.get("where")
    return VerifierEvidence(
        name=printable(str(event.get("name", "?")), 60),
        status=printable(str(event.get("status", "unknown")), 20),
        at=printable(str(event.get("at", "")), 40),
        host=printable(host, 80) if isinstance(host, str) and host else None,
        where=printable(where, 40) if isinstance(where, str) and where else None,
    )


# --- managed trees ---------------------------------------------------------------------


def managed_trees(repo: Repo, checkpoints: list[Checkpoint]) -> dict[str, str]:
    """commit -> its managed tree (treecache.NO_TREE when it has none), for each of
    `checkpoints` (every checkpoint there is: the file keeps theirs only): from the
    kept file, the others computed and added to it."""
    known = treecache.read(repo.common_dir)
    missing = [cp for cp in checkpoints if cp.commit not in known]
    if not missing:
        return known
    overlays = _overlay_trees(repo, [cp for cp in missing if cp.overlay_commit is not None])
    for cp in missing:
        if cp.overlay_commit is None:
            known[cp.commit] = cp.worktree_tree
            continue
        overlay = overlays.get(cp.overlay_commit)
        joined = _joined(repo.objects, cp.worktree_tree, overlay) if overlay else None
        known[cp.commit] = joined or treecache.NO_TREE
    listed = {cp.commit for cp in checkpoints}
    treecache.write(repo.common_dir, {c: t for c, t in known.items() if c in listed})
    return known


def _overlay_trees(repo: Repo, checkpoints: Iterable[Checkpoint]) -> dict[str, str]:
    """overlay commit -> its tree, read through the repository's cat-file child."""
    found: dict[str, str] = {}
    for cp in checkpoints:
        commit = cp.overlay_commit
        assert commit is not None
        try:
            body = repo.objects[commit].read_raw()
        except (KeyError, GitFailed):
            continue
        first = body.split(b"\n", 1)[0].decode("ascii", "replace")
        if first.startswith("tree "):
            found[commit] = first[len("tree ") :]
    return found


class _CannotJoin(Exception):
    """A path that is a file on one side and a folder on the other, or a tree git cannot
    read: `update-index` would refuse it as well."""


def _joined(objects: Objects, worktree_tree: str, overlay_tree: str) -> str | None:
    """The id of the tree holding the tracked files and the overlay's over them, as
    `read-tree W`, `update-index --index-info` of U's files and `write-tree` would write
    it (storage.commits.combined_tree), or None when they cannot be joined."""
    try:
        return _merge(objects, worktree_tree, overlay_tree)
    except _CannotJoin:
        return None


def _entries(objects: Objects, tree: str) -> dict[bytes, tuple[str, str]]:
    """name -> (mode as git writes it, id)."""
    try:
        found = objects[tree]
        if not isinstance(found, Tree):
            raise _CannotJoin
        entries = raw_entries(found.read_raw())
    except (KeyError, ValueError, GitFailed):
        raise _CannotJoin from None
    return {name: (f"{canonical_mode(int(mode, 8)):o}", oid) for name, mode, oid in entries}


def _merge(objects: Objects, base: str, over: str) -> str:
    entries = _entries(objects, base)
    for name, (mode, oid) in _entries(objects, over).items():
        mine = entries.get(name)
        if mode == TREE:
            if mine is None:
                entries[name] = (mode, oid)
            elif mine[0] == TREE:
                entries[name] = (TREE, _merge(objects, mine[1], oid))
            else:
                raise _CannotJoin
        elif mine is not None and mine[0] == TREE:
            raise _CannotJoin
        else:
            entries[name] = (mode, oid)
    ordered = sorted(entries.items(), key=lambda e: e[0] + b"/" if e[1][0] == TREE else e[0])
    body = b"".join(
        m.encode() + b" " + name + b"\0" + bytes.fromhex(oid) for name, (m, oid) in ordered
    )
    return object_id(b"tree", body)
