"""A restore's files staged before the work tree changes: raw blobs in memory (up to a
budget), the rest in one flat staging folder in the git dir, checked out with git's
smudge filters where an attribute or setting converts them. A missing blob, a failing
filter or a full disk stops the restore here, before anything is written.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path

from ..core.errors import GitFailed, Refused
from ..gitcore.catfile import Blob
from ..gitcore.formats import EXECUTABLE_MODE, FILE_MODE, SYMLINK_MODE
from ..gitcore.repo import Repo, nul_list
from ..gitcore.spawn import empty_folder
from ..save.graft import is_attributes
from .plan import Write, under_rules

STAGING = "staging"  # under <git dir>/checkpoint/: kept from one restore to the next


# Raw blobs up to this many bytes in all are staged in memory, and blobs above
# MEMORY_BLOB_MAX never are: a new file in the staging folder and its rename over the
# old one cost more than creating the file in its own place (ext4 is slow to make files
# again in a folder whose files were just freed, and its auto_da_alloc writes a renamed
# file's data out).
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
    where each new file costs a fresh inode (many times a file in a folder in use), and
    a checkout into a mirror of the work tree makes one folder per folder.
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
        files = [w for w in writes if w.mode != SYMLINK_MODE]
        at = {write.path: os.fspath(stage / str(n)) for n, write in enumerate(writes)}
        out.update(at)
        rules = list(rules)
        later = [w for w in files if under_rules(w.path, rules)]
        _stage_files(repo, [w for w in files if not under_rules(w.path, rules)], out)
        if later:
            _stream_raw(repo, later, out)
        _spill_unless_room(repo.root, files, out, at)
        links = [w for w in writes if w.mode == SYMLINK_MODE]
        as_files = bool(links) and not _symlinks_on(repo)
        for write in links:
            target = _link_target(repo, write)
            staged_at = _at(out, write.path)
            if as_files:  # core.symlinks false: git writes the link text as a file
                _write_staged(staged_at, FILE_MODE, [target])
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
    with repo.temp_index() as env:
        if not _converted(repo, writes, env):
            _stream_raw(repo, writes, out)
            return
        listing = b"".join(
            f"{w.mode:o} {w.oid}\t".encode() + os.fsencode(w.path) + b"\0" for w in writes
        )
        repo.git("update-index", "-z", "--index-info", stdin=listing, env=env)
        tree = Path(_at(out, writes[0].path)).parent / "tree"
        repo.git("checkout-index", f"--prefix={tree}/", "-f", "-a", env=env)
    for write in writes:
        out[write.path] = os.fspath(tree / write.path)


CONVERTING = ("text", "eol", "crlf", "filter", "ident", "working-tree-encoding")


def _converted(repo: Repo, writes: list[Write], env: dict[str, str]) -> bool:
    """Whether a checkout would change any of these files' bytes: core.autocrlf, or an
    attribute that converts (read as checkout-index reads them, from an index that holds
    only these entries, then the work tree). A rule file among them: assume so; else
    such an index holds no rules, and `env`'s empty one reads the same."""
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

    repo.objects.stream([w.oid for w in writes], sink)


def _write_staged(path: str, mode: int, chunks: Iterable[bytes]) -> None:
    """A new file, executable as git makes it (0777 less the umask) or not (0666)."""
    fd = os.open(
        path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o777 if mode == EXECUTABLE_MODE else 0o666
    )
    with os.fdopen(fd, "wb") as fh:
        for chunk in chunks:
            fh.write(chunk)


def restage(repo: Repo, stage: Stage, writes: Iterable[Write], rules: Iterable[str]) -> None:
    """git's checkout removes files, then writes each under the rules in place by then;
    the staging read the rules on disk before the restore. Once the restore has removed
    and written its `.gitattributes` files (`rules`), the files it writes below them are
    checked out again into the staging folder, now under the rules that stay (git's own
    filters, run from the top of the work tree), before any of them is written; and the
    rule files themselves, which the new rules may convert too (written again if so)."""
    rules = list(rules)
    again = [
        w
        for w in writes
        if w.mode != SYMLINK_MODE
        and (under_rules(w.path, rules) or (rules and is_attributes(w.path)))
    ]
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
