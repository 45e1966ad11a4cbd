"""A restore plan carried out on disk, once every file is staged (stage.py).

Each path is replaced only after checking that what it replaces or removes is stored in
the safety checkpoint: a file that changed during the restore, or that git could not
store, is left where it is and reported. A staged file replaces its path by a rename;
content from memory is written as git's checkout writes it, the old file unlinked and a
new one created (O_EXCL: never through a symlink, never over a file that appeared
meanwhile). Never written over in place: a script running from the old file would read
on in the new one, a process mapping it would die of SIGBUS. Neither way follows a
symlink or removes a folder with files in it. Then the index entries, their marks and
their stat data.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import tempfile
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..core.errors import GitFailed, Refused
from ..fast import quickstate
from ..gitcore import indexfile
from ..gitcore.formats import EMPTY_BLOB, EXECUTABLE_MODE, FILE_MODE, ZERO_OID
from ..gitcore.repo import Repo, concurrently, nul_list
from ..save.staged import MARK_OPTIONS
from .checks import Entry, cwd_in, disk_holds, raw_match, through_folders
from .plan import Plan, TreeView, Write, under_rules

LITERAL = {"GIT_LITERAL_PATHSPECS": "1"}


@dataclass
class Outcome:
    """What happened on disk: paths left alone because they were not safe to touch."""

    left: dict[str, str] = field(default_factory=dict)  # path -> why
    removed_residue: list[str] = field(default_factory=list)  # uncovered by new rules
    kept: set[str] = field(default_factory=set)  # outside the target's managed set after all
    submodules: list[str] = field(default_factory=list)  # at another commit than the target
    # Files written from memory: their stat data right after (update_index's to record).
    stats: dict[str, os.stat_result] = field(default_factory=dict)
    # Files git's checkout wrote aside through the filters (autocrlf, attributes), moved
    # into place: their stat data right after the move. Their size on disk need not be
    # the blob's, so a refresh (which then takes them for changed, unread) cannot
    # record them clean: their stat data is set, as git's checkout sets it.
    converted: dict[str, os.stat_result] = field(default_factory=dict)
    # Files the plan wrote only for a rule change whose bytes were git's already: left.
    as_written: set[str] = field(default_factory=set)


# Above this many written files, their stat data is refreshed by one pass over the index.
REFRESH_PATHS_MAX = 128


# From this many files, two threads write them (move_into_place).
PARALLEL_WRITES = 256


def unstored(repo: Repo, now: TreeView, paths: Iterable[str], plan: Plan) -> dict[str, str]:
    """Paths whose bytes on disk are not what the safety snapshot `now` stored for them:
    removing or replacing one of these would lose work. Missing paths lose nothing, nor
    does a file that already holds what the plan writes there.
    """
    out: dict[str, str] = {}
    ask_git: dict[str, str] = {}
    writing = {w.path: (w.mode, w.oid) for w in plan.writes}
    known: dict[str, int] = {}
    for path in paths:
        full = repo.root / path
        st = _lstat(full) if through_folders(repo.root, path, known) else None
        if st is None:
            continue  # (what a symlink above it shows is not this path: never touched)
        stored = now.get(path)
        if stat.S_ISDIR(st.st_mode):
            continue  # folders are never removed here; writes check them themselves
        if stored is None:
            if path not in writing or not disk_holds(repo, path, writing[path]):
                out[path] = "not in the safety checkpoint"
            continue
        matched = raw_match(now.odb, full, st.st_mode, stored)
        if matched is None:
            ask_git[path] = stored[1]  # batched below: one git call for all of them
        elif not matched:
            out[path] = "changed during the restore"
    for path in [p for p in ask_git if "\n" in p]:  # --stdin-paths cannot say these
        with open(repo.root / path, "rb") as fh:
            one = repo.git("hash-object", f"--path={path}", "--stdin", stdin=fh.read())
        if one.decode().strip() == ask_git[path]:
            del ask_git[path]
    plain = [p for p in ask_git if "\n" not in p]
    if plain:
        listing = b"".join(os.fsencode(p) + b"\n" for p in plain)
        hashed = repo.git("hash-object", "--stdin-paths", stdin=listing)
        for path, oid in zip(plain, hashed.decode().split(), strict=True):
            if oid == ask_git[path]:
                del ask_git[path]
    out.update({p: "changed during the restore" for p in ask_git})
    return out


def remove_files(repo: Repo, paths: Iterable[str], outcome: Outcome) -> list[str]:
    """Unlink files (never folders), deepest first; return the paths removed."""
    removed = []
    known: dict[str, int] = {}  # (a folder pruned meanwhile: its files are gone anyway)
    for path in sorted(paths, key=lambda p: p.count("/"), reverse=True):
        if path in outcome.left:
            continue
        full = repo.root / path
        if not through_folders(repo.root, path, known):
            outcome.left[path] = "a folder above it became a symlink during the restore"
            continue
        found = _lstat(full)
        if found is None or stat.S_ISDIR(found.st_mode):
            continue  # gone, or a folder where a file was: nothing of ours to remove
        try:
            os.unlink(full)
        except (FileNotFoundError, NotADirectoryError):
            continue
        removed.append(path)
        prune_empty_parents(repo.root, path)
    return removed


def _lstat(path: str | os.PathLike[str]) -> os.stat_result | None:
    """lstat; None where nothing can be: a path missing, below a file, or below a
    symlink that loops."""
    try:
        return os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return None
        raise


def move_into_place(
    repo: Repo, stage: Mapping[str, str | bytes], writes: Iterable[Write], outcome: Outcome
) -> None:
    """Put each staged file in its path (renamed, or written from memory); a folder in
    the way is replaced only when it is empty (what the plan removed from it), and never
    followed if it is a symlink. Many files are written by two threads, each on its half
    of the sorted paths (other folders, mostly): the file system's work (unlinks,
    creates, renames) then runs on both cores.
    """
    root = os.fspath(repo.root)  # a str, not a Path, for each of many paths
    todo = [w for w in writes if w.path not in outcome.left]
    if len(todo) < PARALLEL_WRITES:
        _move(root, stage, todo, outcome)
        return
    half = len(todo) // 2
    concurrently(
        lambda: _move(root, stage, todo[:half], outcome),
        lambda: _move(root, stage, todo[half:], outcome),
    )


def _move(
    root: str, stage: Mapping[str, str | bytes], writes: list[Write], outcome: Outcome
) -> None:
    made: set[str] = set()
    for write in writes:
        _make_parents(root, write.path, made)
        dest = f"{root}/{write.path}"
        st = _lstat(dest)
        if st is not None and stat.S_ISDIR(st.st_mode) and not _remove_empty_tree(Path(dest)):
            outcome.left[write.path] = "a folder with files is in the way"
            continue
        source = stage[write.path]
        if isinstance(source, bytes):
            done = _write_in_place(dest, write, source, outcome)
            if done is not None:
                outcome.stats[write.path] = done
            continue
        try:
            os.rename(source, dest)
            outcome.converted[write.path] = os.lstat(dest)
        except OSError as exc:
            if exc.errno == errno.EXDEV:
                _copy_across(Path(source), Path(dest))
            elif exc.errno in (errno.EISDIR, errno.ENOTEMPTY, errno.EEXIST):
                outcome.left[write.path] = "a folder appeared there during the restore"
            else:
                raise


def _write_in_place(
    dest: str, write: Write, data: bytes, outcome: Outcome
) -> os.stat_result | None:
    """Replace `dest` with a new file holding `data`, as git's checkout does: unlink, then
    create (its stat data after). O_EXCL refuses whatever appears there in between (a
    symlink included)."""
    try:
        os.unlink(dest)
    except FileNotFoundError:
        pass
    except IsADirectoryError:
        outcome.left[write.path] = "a folder appeared there during the restore"
        return None
    mode = 0o777 if write.mode == EXECUTABLE_MODE else 0o666
    try:
        fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    except FileExistsError:
        outcome.left[write.path] = "a file appeared there during the restore"
        return None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            return os.fstat(fh.fileno())
    except OSError:  # a full disk: no half file left for the way back to store
        with contextlib.suppress(OSError):
            os.unlink(dest)
        raise


def _make_parents(root: str, path: str, made: set[str]) -> None:
    """Each folder above `path` made or found to be a real folder during this pass
    (never a symlink to follow out of the work tree). `made`: the folders this pass
    already made or found, not looked up again, as git's checkout keeps its cache of
    leading paths (1,000 files five folders deep: 5,000 mkdir and lstat calls less)."""
    folder = root
    for depth, name in enumerate(path.split("/")[:-1], start=1):
        folder = f"{folder}/{name}"
        if folder in made:
            continue
        try:
            os.mkdir(folder)
        except FileExistsError:
            st = os.lstat(folder)
            if not stat.S_ISDIR(st.st_mode):
                what = "symlink" if stat.S_ISLNK(st.st_mode) else "file"
                above = "/".join(path.split("/")[:depth])
                raise Refused(f"refusing to write {path!r}: {above!r} is a {what}") from None
        made.add(folder)


def make_submodule_folders(repo: Repo, paths: Iterable[str]) -> None:
    """An empty folder at each submodule path where nothing is (a folder of files, a
    file or nothing was there before), as git's checkout makes one: a submodule's
    checkout is never entered, never made."""
    root = os.fspath(repo.root)
    made: set[str] = set()
    for path in paths:
        if _lstat(f"{root}/{path}") is not None or not through_folders(repo.root, path):
            continue
        _make_parents(root, f"{path}/.", made)  # (the folders of `path/.`: `path` too)


def _copy_across(source: Path, dest: Path) -> None:
    """The staging folder is on another filesystem: copy next to dest, then rename."""
    folder = tempfile.mkdtemp(prefix=".checkpoint-", dir=dest.parent)  # a name of our own
    tmp = Path(folder) / "file"
    try:
        if source.is_symlink():
            os.symlink(os.readlink(source), tmp)
        else:
            shutil.copy2(source, tmp)
        os.rename(tmp, dest)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _remove_empty_tree(folder: Path) -> bool:
    """Remove a tree of empty folders; False (some of it left) if anything is inside."""
    for dirpath, _, _ in sorted(os.walk(folder), key=lambda x: -len(x[0])):
        try:
            os.rmdir(dirpath)
        except OSError:
            return False
    return True


def prune_empty_parents(root: Path, path: str) -> None:
    """Remove the folders above `path` that are left empty, up to the root; never the
    folder the command runs in or one above it (as git since 2.35: the shell there
    would be left in a folder that is gone)."""
    parent = os.path.dirname(path)
    here = cwd_in(os.fspath(root))
    while parent:
        if here is not None and (here == parent or here.startswith(f"{parent}/")):
            return
        try:
            os.rmdir(root / parent)
        except OSError:
            return
        parent = os.path.dirname(parent)


@contextlib.contextmanager
def _placeholders(root: str, paths: Iterable[str]) -> Iterator[set[str]]:
    """An empty file at each of `paths` while the block runs (`git add -N` marks only a
    file it finds: an entry marked, then its file deleted, is marked this way), where
    nothing is, below real folders (made for the while if missing); the paths made."""
    made: set[str] = set()
    folders: list[str] = []
    try:
        for path in paths:
            parts = path.split("/")
            folder, ok = root, True
            for name in parts[:-1]:
                folder = f"{folder}/{name}"
                st = _lstat(folder)
                if st is None:
                    with contextlib.suppress(OSError):
                        os.mkdir(folder)
                        folders.append(folder)
                    st = _lstat(folder)
                if st is None or not stat.S_ISDIR(st.st_mode):
                    ok = False
                    break
            if not ok:
                continue
            with contextlib.suppress(OSError):
                os.close(os.open(f"{root}/{path}", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
                made.add(path)
        yield made
    finally:
        for path in made:
            with contextlib.suppress(OSError):
                os.unlink(f"{root}/{path}")
        for folder in reversed(folders):
            with contextlib.suppress(OSError):
                os.rmdir(folder)


def changed_since(root: Path, seen: dict[str, list[int] | None]) -> dict[str, str]:
    """The paths of `seen` (quickstate.overlay_stats) changed since, to leave as they are."""
    now = quickstate.overlay_stats(root, seen)
    return {p: "changed during the restore" for p, key in seen.items() if now[p] != key}


def update_index(
    repo: Repo,
    plan: Plan,
    written: Iterable[Write],
    stats: Mapping[str, os.stat_result],
    converted: Mapping[str, os.stat_result],
) -> None:
    """Set the index entries that differ, mark intent-to-add and flags again, and refresh
    the stat data of the written files whose content the index now holds, so that git
    sees them clean (autocrlf included) without re-hashing the rest. Many files written
    from memory (raw blobs: no filter converts them) get the stat data taken right after
    their write, set here in the index (indexfile.set_stats), as a checkout sets them.
    """
    drops = [p for p, e in plan.index_changes if e is None]
    sets = [(p, e) for p, e in plan.index_changes if e is not None]
    lines = [f"0 {ZERO_OID}\t".encode() + os.fsencode(p) + b"\0" for p in drops]
    lines += [f"{e[0]:o} {e[1]}\t".encode() + os.fsencode(p) + b"\0" for p, e in sets]
    if lines:
        repo.git("update-index", "-z", "--index-info", stdin=b"".join(lines))
    if plan.intent_to_add:
        with _placeholders(os.fspath(repo.root), plan.intent_gone) as made:
            marking = [p for p in plan.intent_to_add if p not in plan.intent_gone or p in made]
            if marking:
                repo.git(
                    "add",
                    "--intent-to-add",
                    "--force",  # (an ignored path marked with `add -N -f`, as the target has it)
                    "--pathspec-from-file=-",
                    "--pathspec-file-nul",
                    stdin=nul_list(marking),
                    env=LITERAL,
                )
    for mark, option in MARK_OPTIONS:
        marked = [p for p, marks in plan.marks if mark in marks]
        if marked:
            repo.git("update-index", f"--{option}", "-z", "--stdin", stdin=nul_list(marked))
    wanted: dict[str, Entry | None] = dict(plan.index_entries)
    flagged = {p for p, _ in plan.marks}
    fresh = [
        w for w in written if wanted.get(w.path, ()) == (w.mode, w.oid) and w.path not in flagged
    ]
    if repo.sha1():
        many = len(fresh) > REFRESH_PATHS_MAX
        # (below a changed rule, the index may hold the stat data of other bytes of the
        # same blob, of another size: a refresh takes the file for changed, unread)
        known = {
            w.path: (w.mode, w.oid, converted[w.path] if w.path in converted else stats[w.path])
            for w in fresh
            if w.path in converted
            or (w.path in stats and (many or under_rules(w.path, plan.rules_changed)))
        }
        if known:
            done = indexfile.set_stats(os.fspath(repo.git_dir / "index"), known)
            fresh = [w for w in fresh if w.path not in done]
    if len(fresh) > REFRESH_PATHS_MAX:
        # Matching pathspecs costs git paths x entries; past a few hundred paths, a
        # refresh of the whole index, which stats each entry once, costs less.
        with contextlib.suppress(GitFailed):
            repo.git("update-index", "-q", "--refresh")
    elif fresh:
        # Only the stat cache: if git declines (a sparse entry), it re-hashes those later.
        with contextlib.suppress(GitFailed):
            repo.git(
                "add",
                "--refresh",
                "--pathspec-from-file=-",
                "--pathspec-file-nul",
                stdin=nul_list(w.path for w in fresh),
                env=LITERAL,
            )


def leftovers(repo: Repo, plan: Plan, left: Collection[str] = ()) -> list[str]:
    """Paths the plan removed that are somehow still there, and an index that differs
    (`left`: paths deliberately left alone, already reported).
    """
    # (a folder where a write or a submodule goes is no leftover)
    folders = {os.path.dirname(w.path) for w in plan.writes} | {p for p, _ in plan.gitlinks}
    out = [
        p
        for p in plan.removes
        if p not in left
        and os.path.lexists(repo.root / p)
        and through_folders(repo.root, p)  # not a file a new symlink above it shows
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
        # A path the plan dropped and then marked intent-to-add (`git add -N`, as the
        # target has it) holds git's placeholder: the empty blob, at stage 0.
        marked = set(plan.intent_to_add)
        out += [
            f"(index) {p}"
            for p, e in plan.index_changes
            if found.get(p) != wanted.get(p) and not (p in marked and _placeholder(found.get(p)))
        ]
    return out


def _placeholder(entry: Entry | None) -> bool:
    return entry is not None and entry[1] == EMPTY_BLOB and entry[0] in (FILE_MODE, EXECUTABLE_MODE)
