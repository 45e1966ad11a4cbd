"""What the index itself says of a capture, and the capture that stages with git where
the graft does not serve: `git add -N` entries, the assume-unchanged and skip-worktree
marks, a conflicted index, a sparse checkout, tracked files hidden below a symlink that
loops. W comes from `add -u` + `write-tree` on the copy of the index."""

from __future__ import annotations

import errno
import os
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import GitFailed, Refused
from ..gitcore.formats import FLAGGED_ARGV, Scan
from ..gitcore.repo import Repo, nul_list
from ..gitcore.scan import scan, stage

# Above this many changed paths, one whole `add -u` (stat only: the scan refreshed the
# index) beats matching that many pathspecs against every entry.
STAGE_PATHS_MAX = 500


@dataclass(frozen=True)
class TrackedTrees:
    """The tracked part of a capture: W and I, and what only the index knows."""

    worktree_tree: str
    index_tree: str
    flagged: dict[str, str]  # path -> its marks ("h": assume-unchanged, "S": skip-worktree)
    intent_to_add: list[str]  # `git add -N` entries: in W, not in I


def intent_to_add(repo: Repo, env: dict[str, str], index_tree: str) -> list[str]:
    """`git add -N` entries, which git shows as added in the work tree (or as deleted
    when the file is gone, told from a real deletion by their absence from the index
    tree). Only an index of version 3 or later can hold them, so the common version-2
    index costs nothing here.
    """
    try:
        with open(env["GIT_INDEX_FILE"], "rb") as fh:
            header = fh.read(8)
    except FileNotFoundError:  # no index yet
        return []
    if len(header) < 8 or int.from_bytes(header[4:8], "big") < 3:
        return []
    listed = repo.git_lines("diff-files", "-z", "--name-status", "--diff-filter=AD", env=env)
    pairs = list(zip(listed[::2], listed[1::2], strict=True))
    added = [path for status, path in pairs if status == "A"]
    gone = [path for status, path in pairs if status == "D"]
    if gone:  # an intent-to-add entry whose file was removed: in no index tree
        in_tree = set(
            repo.git_lines(
                "ls-tree", "-r", "-z", "--name-only", "--full-tree", index_tree, "--", *gone
            )
        )
        added += [p for p in gone if p not in in_tree]
    return added


MARK_OPTIONS = (("h", "assume-unchanged"), ("S", "skip-worktree"))


def flagged_entries(repo: Repo, env: dict[str, str]) -> dict[str, str]:
    """Index entries marked assume-unchanged or skip-worktree: path -> marks ("h", "S"
    or both). Neither `status` nor `add -u` looks at their files."""
    return marks(repo.git(*FLAGGED_ARGV, env=env))


def marks(out: bytes) -> dict[str, str]:
    """`ls-files -v -z` output: path -> marks, for the marked entries only."""
    flagged: dict[str, str] = {}
    if out.count(b"\0") == out.count(b"\0H ") + out.startswith(b"H "):
        return flagged  # every entry is a plain "H": the common case, at C speed
    for item in out.decode("utf-8", "surrogateescape").split("\0")[:-1]:
        tag, path = item[0], item[2:]
        marks = ("h" if tag.islower() else "") + ("S" if tag in "Ss" else "")
        if marks:
            flagged[path] = marks
    return flagged


def _capture_flagged(repo: Repo, env: dict[str, str], flagged: dict[str, str]) -> None:
    """A flagged file that is on disk may hold edits: hash it too (in the temporary
    index only)."""
    present = [p for p in flagged if os.path.lexists(repo.root / p)]
    # One mark per call: given both options at once, git 2.39 drops the entries.
    for mark, option in MARK_OPTIONS:
        chosen = [p for p in present if mark in flagged[p]]
        if chosen:
            repo.git(
                "update-index", f"--no-{option}", "-z", "--stdin", stdin=nul_list(chosen), env=env
            )
    if present:
        repo.git("update-index", "--add", "-z", "--stdin", stdin=nul_list(present), env=env)


def _resolve_unmerged(repo: Repo, env: dict[str, str]) -> None:
    """Stage the work tree's version of every conflicted path (or its absence), as
    `git add` would when the user resolves it: only in the temporary index.
    """
    listed = repo.git_lines("ls-files", "-u", "-z", env=env)  # "mode id stage\tpath"
    paths = sorted({item.partition("\t")[2] for item in listed})
    repo.git("update-index", "--add", "--remove", "-z", "--stdin", stdin=nul_list(paths), env=env)


def sparse_option(repo: Repo) -> tuple[str, ...]:
    """In a sparse checkout, `add -u` passes over tracked files outside the cone even when
    they are on disk (git >= 2.37 clears their skip-worktree bit): `--sparse` takes them.
    """
    return ("--sparse",) if (repo.git_dir / "info" / "sparse-checkout").is_file() else ()


def _stage_all(
    repo: Repo, env: dict[str, str], sparse: tuple[str, ...], scanned: Scan | None
) -> None:
    """The temporary index brought to the work tree, where a graft does not serve."""
    if scanned is None:
        repo.git("add", "-u", *sparse, env=env)
    elif len(scanned.changed) > STAGE_PATHS_MAX:
        repo.git("add", "-u", env=env)
    else:
        stage(repo, env, scanned.changed)


def staged_capture(
    repo: Repo, env: dict[str, str], sparse: tuple[str, ...], allow_unmerged: bool
) -> tuple[TrackedTrees, Scan | None]:
    """W by `add -u` + `write-tree` on the copy of the index."""
    try:
        index_tree = repo.git("write-tree", env=env).decode().strip()
    except GitFailed as exc:
        if "unmerged" not in exc.stderr and "merge" not in exc.stderr:
            raise
        if not allow_unmerged:
            raise Refused(
                "the index has unmerged paths (a conflicted merge, rebase or stash pop): "
                "resolve them and `git add` them (or abort the operation), then try again"
            ) from None
        _resolve_unmerged(repo, env)
        index_tree = repo.git("write-tree", env=env).decode().strip()
    added = intent_to_add(repo, env, index_tree)
    flagged = flagged_entries(repo, env)
    scanned = None if sparse else scan(repo, Path(env["GIT_INDEX_FILE"]))
    _stage_all(repo, env, sparse, scanned)
    _capture_flagged(repo, env, flagged)
    if scanned is not None:  # what add -u skips as status does: below a looping link
        hidden = looping_entries(repo, index_tree, scanned, [])
        if hidden:
            argv = ["update-index", "--force-remove", "-z", "--stdin"]
            repo.git(*argv, stdin=nul_list(hidden), env=env)
    worktree_tree = repo.git("write-tree", env=env).decode().strip()
    return TrackedTrees(worktree_tree, index_tree, flagged, added), scanned


def behind_looping_links(repo: Repo, index_tree: str, scanned: Scan, seen: list[str]) -> Scan:
    """`scanned` with the tracked files below a symlink that loops (`d/a -> a`, where a
    tracked folder was) counted as gone, as git counts them below any other symlink:
    status meets ELOOP there, says so on stderr and skips them, so the snapshot would
    keep their index entries (beside the link, when the link is saved: a checkpoint no
    restore accepts)."""
    gone = looping_entries(repo, index_tree, scanned, seen)
    gone = [p for p in gone if p not in scanned.modes]
    return scanned.with_gone(gone) if gone else scanned


def looping_entries(repo: Repo, index_tree: str, scanned: Scan, seen: list[str]) -> list[str]:
    """Tracked paths that a symlink looping above them hides: the ones status named on
    stderr (in any language: a line starting with the path, which lstat finds looping),
    and those below an untracked or included symlink that loops (a caller's status may
    not have kept its stderr)."""
    found: set[str] = set()
    for line in scanned.errors.decode("utf-8", "surrogateescape").splitlines():
        at = line.find(": ")
        while at > 0:
            if loops_at(repo, line[:at]):
                found.add(line[:at])
                break
            at = line.find(": ", at + 1)
    links = [p for p in [*scanned.untracked, *seen] if not p.endswith("/") and loops_at(repo, p)]
    if links:
        argv = ["ls-tree", "-r", "-z", "--name-only", index_tree, "--", *links]
        below = repo.git_lines(*argv, env={"GIT_LITERAL_PATHSPECS": "1"})
        inside = tuple(f"{q}/" for q in links)
        found.update(p for p in below if p.startswith(inside))
    return sorted(found)


def loops_at(repo: Repo, path: str) -> bool:
    """Whether looking at `path` meets a symlink that loops (ELOOP)."""
    full = os.path.join(repo.root, path)
    try:
        os.stat(full)
    except OSError as exc:
        return exc.errno == errno.ELOOP
    return False
