"""The checks a restore makes of a checkpoint's trees (what git's fsck flags, an overlay
that collides with the tracked files) and of the disk before it writes: which paths git
refuses, whether a file on disk holds a given blob (raw bytes, else git's clean filters),
whether a path is reached through real folders only, and the git operations in progress
that stop a restore."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable
from pathlib import Path

from ..core.errors import Refused
from ..gitcore.catfile import Tree
from ..gitcore.formats import (
    FILE_MODE,
    GITLINK_MODE,
    SYMLINK_MODE,
    TREE_MODE,
    object_id,
    raw_entries,
)
from ..gitcore.pathrules import git_refuses_path
from ..gitcore.repo import Repo
from ..save.overlay import looks_secret

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    from ..gitcore.catfile import Objects

Entry = tuple[int, str]  # (mode, object id)


def check_path(path: str, mode: int = FILE_MODE) -> None:
    """Refuse a path git itself would refuse to check out here (absolute, `..`, `.git`)."""
    if git_refuses_path(path, symlink=mode == SYMLINK_MODE):
        raise Refused(f"unsafe path in checkpoint, nothing written: {path!r}")


def _tree_key(name: bytes, mode: int) -> bytes:
    return name + b"/" if mode == TREE_MODE else name


def _entries(odb: Objects, tree_id: str) -> list[tuple[bytes, bytes, str]]:
    """A tree's entries in stored order: (raw name, mode as written, id)."""
    tree = odb[tree_id]
    if not isinstance(tree, Tree):
        raise ValueError(f"{tree_id} is not a tree")
    return raw_entries(tree.read_raw())


# The modes git writes, and 100664, which git's fsck lets through (early git wrote it;
# old histories still hold it) and reads as 100644.
SOUND_MODES = frozenset({b"100644", b"100755", b"120000", b"40000", b"160000", b"100664"})


def _mode_problem(mode: bytes) -> str | None:
    """What git's fsck says of a mode as written in a tree (None: nothing)."""
    if mode in SOUND_MODES:
        return None
    return "zeroPaddedFilemode" if mode.startswith(b"0") else "badFilemode"


def check_tree(odb: Objects, tree_id: str | None, against: str | None = None) -> None:
    """Refuse a tree git fsck would flag (entries out of order or named twice, a mode
    git never writes: read as git reads it, `12345` would be a submodule, `100777` an
    executable file, so what the checkpoint means is a guess), walking only the subtrees
    that differ from `against` (a tree of our own, already sound), so the cost grows
    with the difference.
    """
    if tree_id is None or tree_id == against:
        return
    known = {}
    if against is not None:
        known = {name: oid for name, mode, oid in _entries(odb, against) if mode == b"40000"}
    previous = b""
    names: set[bytes] = set()
    for name, raw_mode, oid in _entries(odb, tree_id):
        shown = name.decode("utf-8", "replace")
        problem = _mode_problem(raw_mode)
        if problem:
            raise Refused(
                f"unsafe checkpoint: tree {tree_id[:12]} gives {shown!r} the mode "
                f"{raw_mode.decode('ascii')}, which git's fsck flags ({problem})"
            )
        mode = int(raw_mode, 8)
        key = _tree_key(name, mode)
        if name in names or key <= previous:
            raise Refused(f"unsafe checkpoint: tree {tree_id[:12]} has {shown!r} out of order")
        names.add(name)
        previous = key
        if mode == TREE_MODE:
            check_tree(odb, oid, known.get(name))


def check_overlay(
    name: str, overlay: Iterable[str], tracked: Callable[[str], Entry | None]
) -> None:
    """Refuse checkpoint `name` when its overlay and tracked files collide: an overlay
    path its tracked tree also holds (`tracked`: a path's entry there), or one below a
    tracked file, symlink or submodule. No save writes one (the overlay is what git does
    not track), and no restore can write both."""
    seen: dict[str, Entry | None] = {}
    kinds = {TREE_MODE: "folder", SYMLINK_MODE: "symlink", GITLINK_MODE: "submodule"}
    for path in overlay:
        at = path
        while at:
            if at not in seen:
                seen[at] = tracked(at)
            entry = seen[at]
            if entry is not None and (at == path or entry[0] != TREE_MODE):
                held = f"holds {path!r}" if at == path else f"holds {path!r} below it"
                raise Refused(
                    f"unsafe checkpoint {name}: its overlay and its tracked files "
                    f"collide: {at!r} is a tracked {kinds.get(entry[0], 'file')} and the "
                    f"overlay {held}"
                )
            if entry is not None:
                break  # a tracked folder: the folders above it are folders too
            at = at.rpartition("/")[0]


# An unmanaged file a restore overwrites is kept in the safety checkpoint up to this
# size (the overlay's default limit); a bigger one (a model, a database) is refused.
ADOPT_MAX_BYTES = 50 << 20


def unadoptable(path: str, st: os.stat_result, adopt: bool) -> str | None:
    """Why an unmanaged file in a restore's way cannot be kept in the safety checkpoint
    and replaced (None: it can)."""
    if not adopt:
        return "the checkpoint comes from another machine"
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
        return "it is no file or symlink (a FIFO, a socket or a device)"
    if looks_secret(path):
        return "its name says it holds secrets, which are never stored"
    if st.st_size > ADOPT_MAX_BYTES:
        return f"it is too big to keep in the safety checkpoint ({st.st_size >> 20} MiB)"
    return None


def cwd_in(root: str) -> str | None:
    """The folder this command runs in, relative to the work tree (None: outside it)."""
    try:
        rel = os.path.relpath(os.getcwd(), root)
    except (OSError, ValueError):
        return None
    return None if rel == ".." or rel.startswith("../") else rel


def raw_match(odb: Objects, full: Path, mode: int, entry: Entry) -> bool | None:
    """Whether the file at `full` (of lstat mode `mode`) holds `entry`, from its raw
    bytes; None when a regular file's bytes differ, which clean filters (autocrlf, LFS)
    may still explain: then only git can tell.
    """
    if stat.S_ISLNK(mode):
        return entry[0] == SYMLINK_MODE and odb[entry[1]].read_raw() == os.fsencode(
            os.readlink(full)
        )
    if not stat.S_ISREG(mode):
        return False
    with open(full, "rb") as fh:
        same = object_id(b"blob", fh.read()) == entry[1]
    if entry[0] == SYMLINK_MODE:  # core.symlinks=false: git writes a link as a file of its text
        return same
    return True if same else None


def disk_holds(repo: Repo, path: str, entry: Entry) -> bool:
    """Whether the file at `path` holds exactly `entry` (through clean filters)."""
    full = repo.root / path
    try:
        st = os.lstat(full)
    except OSError:
        return False
    matched = raw_match(repo.objects, full, st.st_mode, entry)
    if matched is not None:
        return matched
    oid = repo.git("hash-object", "--path", path, "--", path).decode().strip()
    return oid == entry[1]


_MISSING, _OTHER, _FOLDER = 0, 1, 2


def through_folders(root: Path, path: str, known: dict[str, int] | None = None) -> bool:
    """Whether every folder above `path` is a real folder (no symlink to follow out); a
    missing one ends the walk (nothing below it). `known`: what one pass over many
    paths has already looked up (folder -> kind), as git's checkout keeps its lstat
    cache of leading paths."""
    known = {} if known is None else known
    base = os.fspath(root)
    end = path.find("/")
    while end > 0:
        folder = path[:end]
        kind = known.get(folder)
        if kind is None:
            try:
                kind = _FOLDER if stat.S_ISDIR(os.lstat(f"{base}/{folder}").st_mode) else _OTHER
            except FileNotFoundError:
                kind = _MISSING
            known[folder] = kind
        if kind != _FOLDER:
            return kind == _MISSING
        end = path.find("/", end + 1)
    return True


# A path in the git dir that says an operation is under way, what it is, how to end it.
_OPERATIONS = (
    ("MERGE_HEAD", "a merge", "git merge --continue / --abort"),
    ("CHERRY_PICK_HEAD", "a cherry-pick", "git cherry-pick --continue / --abort"),
    ("REVERT_HEAD", "a revert", "git revert --continue / --abort"),
    ("rebase-merge", "a rebase", "git rebase --continue / --abort"),
    ("rebase-apply/applying", "a git am", "git am --continue / --abort"),
    ("rebase-apply", "a rebase", "git rebase --continue / --abort"),
    ("BISECT_LOG", "a bisect", "git bisect reset"),
)


def operation_in_progress(repo: Repo) -> str | None:
    """The git operation this worktree is in the middle of, as a refusal message."""
    for name, what, how in _OPERATIONS:
        if os.path.lexists(repo.git_dir / name):
            return f"{what} is in progress: finish or abort it first ({how})"
    return None
