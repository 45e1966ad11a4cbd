"""Carrying out a restore plan on disk: stage, check, then move into place.

Every file to write is first read (raw blobs, into memory up to a budget) or checked out
(with git's smudge filters, into a staging folder in the git dir), so a missing blob or
a failing filter stops the restore before the work tree is touched. Then each path is
replaced, only after checking that what it replaces or removes is stored in the safety
checkpoint: a file that changed during the restore, or that git could not store, is
left where it is and reported. A staged file replaces its path by a rename; content
from memory is written as git's checkout writes it, the old file unlinked and a new one
created (O_EXCL: never through a symlink, never over a file that appeared meanwhile).
Never written over in place: a script running from the old file would read on in the
new one, a process mapping it would die of SIGBUS. Neither way follows a symlink or
removes a folder with files in it. A `.gitattributes` the restore changes or removes
goes first, and the files below it are staged again under the rules that stay (restage),
as git's checkout removes before it writes.
"""

from __future__ import annotations

import contextlib
import errno
import itertools
import os
import shutil
import stat
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from ..core.errors import GitFailed, Refused
from ..fast import quickstate
from ..gitcore import indexfile
from ..gitcore.catfile import Blob, stream_blobs
from ..gitcore.repo import ZERO_OID, Repo, concurrently, nul_list
from ..gitcore.spawn import empty_folder
from ..save.capture import MARK_OPTIONS
from ..save.graft import is_attributes
from .plan import (
    SYMLINK,
    Entry,
    Plan,
    TreeView,
    Write,
    cwd_in,
    disk_holds,
    raw_match,
    through_folders,
)

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


# Above this many written files, their stat data is refreshed by one pass over the index.
REFRESH_PATHS_MAX = 128
STAGING = "staging"  # under <git dir>/checkpoint/: kept from one restore to the next
# From this many files, two threads write them (move_into_place).
PARALLEL_WRITES = 256
# Raw blobs up to this many bytes in all are staged in memory, and blobs above
# MEMORY_BLOB_MAX never are. A new file in the staging folder costs 0.03 to 0.5 ms here
# (ext4: files just freed in a folder, after a sync, are slow to make again), and its
# rename over the old file 0.07 to 0.14 ms (ext4's auto_da_alloc writes the data out):
# 0.4 to 0.6 s for 1,000 files, where creating each in its own place costs 0.11 ms.
MEMORY_MAX = 64 << 20
MEMORY_BLOB_MAX = 1 << 20
# path -> its staged file, or its bytes (a regular file staged in memory).
Stage = dict[str, str | bytes]


@contextlib.contextmanager
def staged(repo: Repo, writes: Iterable[Write], rules: Iterable[str] = ()) -> Iterator[Stage]:
    """The files of `writes`, with git's smudge filters applied: raw blobs in memory
    (up to MEMORY_MAX), the rest each in one flat file of a staging folder that stays
    between restores (path -> staged file, or bytes). Those below a `.gitattributes`
    the restore changes or removes (`rules`) are read raw, only to know their blobs are
    there: restage converts them once, under the rules that stay (git never runs a
    filter of a rule it removes).

    Flat and lasting on purpose: a new folder lands in a fresh part of the file system,
    where each new file costs a fresh inode (0.6 ms here, against 0.03 ms in a folder
    in use), and a checkout into a mirror of the work tree makes one folder per folder.
    """
    writes = list(writes)
    folder = repo.git_dir / "checkpoint"
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("staging-*"):  # the folders of earlier versions
        shutil.rmtree(old, ignore_errors=True)
    stage = folder / STAGING
    _empty(stage)
    out: Stage = {}
    try:
        files = [w for w in writes if w.mode != SYMLINK]
        at = {write.path: os.fspath(stage / str(n)) for n, write in enumerate(writes)}
        out.update(at)
        rules = list(rules)
        later = [w for w in files if under_rules(w.path, rules)]
        _stage_files(repo, [w for w in files if not under_rules(w.path, rules)], out)
        if later:
            _stream_raw(repo, later, out)
        _spill_unless_room(repo.root, files, out, at)
        links = [w for w in writes if w.mode == SYMLINK]
        as_files = bool(links) and not _symlinks_on(repo)
        for write in links:
            target = _link_target(repo, write)
            staged_at = _at(out, write.path)
            if as_files:  # core.symlinks false: git writes the link text as a file
                _write_staged(staged_at, 0o100644, [target])
            else:
                os.symlink(target, os.fsencode(staged_at))
        yield out
    finally:
        _empty(stage)


def _symlinks_on(repo: Repo) -> bool:
    try:
        value = repo.git("config", "--bool", "core.symlinks").decode().strip()
    except GitFailed:
        return True  # unset: git's default here
    return value != "false"


def _link_target(repo: Repo, write: Write) -> bytes:
    """A symlink's target from its blob, cut at a NUL as git's symlink() reads it."""
    try:
        found = repo.objects[write.oid]
    except KeyError:
        raise Refused(f"unsafe checkpoint: symlink {write.path!r} names a missing object") from None
    if not isinstance(found, Blob) or found.kind != "blob":
        raise Refused(f"unsafe checkpoint: symlink {write.path!r} does not name a blob")
    target = found.read_raw().split(b"\0", 1)[0]
    if not target:
        raise Refused(f"unsafe checkpoint: symlink {write.path!r} has an empty target")
    return target


def _empty(stage: Path) -> None:
    """The staging folder, made if missing, with nothing in it (a killed restore's files
    go: we hold the lock)."""
    if not empty_folder(stage):
        stage.mkdir()


def _spill_unless_room(root: Path, writes: list[Write], stage: Stage, at: dict[str, str]) -> None:
    """Content staged in memory goes to its staged file (`at`) after all when the work
    tree's file system may not hold it twice over: a full disk then stops the restore
    here, before the work tree changes, as staging on disk always did."""
    held = [(w, data) for w in writes if isinstance(data := stage[w.path], bytes)]
    if not held:
        return
    needed = sum(len(data) + 4096 for _, data in held)  # a block or so per file
    try:
        fs = os.statvfs(root)
        free = fs.f_bavail * fs.f_frsize
    except OSError:
        free = 0
    if free >= 2 * needed + (16 << 20):
        return
    for write, data in held:
        _write_staged(at[write.path], write.mode, [data])
        stage[write.path] = at[write.path]


def _at(stage: Stage, path: str) -> str:
    """The staged file of `path` (one staged on disk)."""
    where = stage[path]
    assert isinstance(where, str)
    return where


def _stage_files(repo: Repo, writes: list[Write], out: Stage) -> None:
    """Regular files, as checkout-index would write them. Raw from `cat-file --batch`
    into the flat staging files when no attribute or setting converts any of them (the
    common case); else checked out with their filters into a tree under the staging
    folder (`cat-file --batch --filters` would do, but git 2.39 gives it the size of the
    unfiltered object)."""
    if not writes:
        return
    listing = b"".join(
        f"{w.mode:o} {w.oid}\t".encode() + os.fsencode(w.path) + b"\0" for w in writes
    )
    with repo.temp_index() as env:
        repo.git("update-index", "-z", "--index-info", stdin=listing, env=env)
        if not _converted(repo, writes, env):
            _stream_raw(repo, writes, out)
            return
        tree = Path(_at(out, writes[0].path)).parent / "tree"
        repo.git("checkout-index", f"--prefix={tree}/", "-f", "-a", env=env)
    for write in writes:
        out[write.path] = os.fspath(tree / write.path)


CONVERTING = ("text", "eol", "crlf", "filter", "ident", "working-tree-encoding")


def _converted(repo: Repo, writes: list[Write], env: dict[str, str]) -> bool:
    """Whether a checkout would change any of these files' bytes: core.autocrlf, or an
    attribute that converts (read as checkout-index reads them, from an index that holds
    only these entries, then the work tree). A rule file among them: assume so."""
    if any(is_attributes(w.path) for w in writes):
        return True
    if repo.autocrlf() not in ("", "false", "input", "no", "off", "0"):
        return True
    stdin = nul_list(w.path for w in writes)
    out = repo.git("check-attr", "-z", "--stdin", *CONVERTING, stdin=stdin, env=env)
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    values = fields[2::3]  # path, attribute, value, ...
    return any(v not in ("unspecified", "unset", "") for v in values)


def _stream_raw(repo: Repo, writes: list[Write], out: Stage) -> None:
    """Each blob into memory while the budget lasts, else straight into its staged file."""
    room = MEMORY_MAX

    def sink(n: int, chunks: Iterator[bytes]) -> None:
        nonlocal room
        path = writes[n].path
        first = next(chunks, b"")  # all of a blob up to 1 MiB (objects._chunks)
        rest = next(chunks, None)
        if rest is None and len(first) <= min(room, MEMORY_BLOB_MAX):
            out[path] = first
            room -= len(first)
            return
        more = [first] if rest is None else [first, rest]
        _write_staged(_at(out, path), writes[n].mode, itertools.chain(more, chunks))

    stream_blobs(repo.root, [w.oid for w in writes], sink)


def _write_staged(path: str, mode: int, chunks: Iterable[bytes]) -> None:
    """A new file, executable as git makes it (0777 less the umask) or not (0666)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o777 if mode == 0o100755 else 0o666)
    with os.fdopen(fd, "wb") as fh:
        for chunk in chunks:
            fh.write(chunk)


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
    of the sorted paths (other folders, mostly): the file system's work (an unlink costs
    0.08 ms here) then runs on both cores, 125 -> 85 ms for 1,000 files.
    """
    root = os.fspath(repo.root)  # str: 1,000s of paths
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
    mode = 0o777 if write.mode == 0o100755 else 0o666
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


def under_rules(path: str, rules: Iterable[str]) -> bool:
    """Whether the `.gitattributes` files `rules` can convert `path` (one of them none)."""
    if is_attributes(path):
        return False
    return any(not f or path.startswith(f"{f}/") for f in (r.rpartition("/")[0] for r in rules))


def changed_since(root: Path, seen: dict[str, list[int] | None]) -> dict[str, str]:
    """The paths of `seen` (quickstate.overlay_stats) changed since, to leave as they are."""
    now = quickstate.overlay_stats(root, seen)
    return {p: "changed during the restore" for p, key in seen.items() if now[p] != key}


def attributes_touched(plan: Plan) -> list[str]:
    """The `.gitattributes` files the plan writes or removes."""
    return [p for p in (*(w.path for w in plan.writes), *plan.removes) if is_attributes(p)]


def restage(repo: Repo, stage: Stage, writes: Iterable[Write], rules: Iterable[str]) -> None:
    """git's checkout removes files, then writes each under the rules in place by then;
    the staging read the rules on disk before the restore. Once the restore has removed
    and written its `.gitattributes` files (`rules`), the files it writes below them are
    checked out again into the staging folder, now under the rules that stay (git's own
    filters, run from the top of the work tree), before any of them is written."""
    again = [w for w in writes if w.mode != SYMLINK and under_rules(w.path, rules)]
    if not again:
        return
    listing = b"".join(
        f"{w.mode:o} {w.oid}\t".encode() + os.fsencode(w.path) + b"\0" for w in again
    )
    tree = repo.git_dir / "checkpoint" / STAGING / "again"
    with repo.temp_index() as env:
        repo.git("update-index", "-z", "--index-info", stdin=listing, env=env)
        repo.git("checkout-index", f"--prefix={tree}/", "-f", "-a", env=env)
    for w in again:
        stage[w.path] = os.fspath(tree / w.path)


def update_index(
    repo: Repo,
    plan: Plan,
    written: Iterable[Write],
    stats: Mapping[str, os.stat_result],
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
    if len(fresh) > REFRESH_PATHS_MAX and repo.sha1():
        known = {w.path: (w.mode, w.oid, stats[w.path]) for w in fresh if w.path in stats}
        done = indexfile.set_stats(os.fspath(repo.git_dir / "index"), known)
        fresh = [w for w in fresh if w.path not in done]
    if len(fresh) > REFRESH_PATHS_MAX:
        # Matching pathspecs costs git paths x entries (1,000 of them in 100,000 entries:
        # 490 ms); a refresh of the whole index stats each entry once (100 ms there).
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
