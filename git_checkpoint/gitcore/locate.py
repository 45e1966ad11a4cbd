"""Where a work tree's repository is, and what HEAD and a branch name, read from git's
files without starting git: the one locator and ref reader of every path (the hook's
quick check, the launcher's early scan, `Repo.discover`). Whatever would take git to
answer (GIT_* variables that move the repository, a reftable, a symref) answers None,
and the caller asks git. Standard library only.
"""

from __future__ import annotations

import os

from .formats import ZERO_OID, is_oid

TYPE_CHECKING = False  # (typing is a cost on the hook path)
if TYPE_CHECKING:
    from collections.abc import Callable

# Any of these in our environment means git resolves the repository differently from a
# walk up the folders: leave it to git.
DISCOVERY_ENV = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
)

# <git dir>/checkpoint/paths: what `rev-parse` last said of this repository (top, git
# dir, common dir). When the walk up to `.git` finds the same, and neither config file
# changed since, the next command asks git no more.
PATHS_FILE = "paths"


# Linux's: no longer path names a folder one system call can reach.
PATH_MAX = 4096


class Paths:
    """A work tree's locations: its top, its git dir (index, HEAD) and the common dir
    shared by linked worktrees (refs, objects, our state)."""

    __slots__ = ("common_dir", "git_dir", "root")

    def __init__(self, root: str, git_dir: str, common_dir: str) -> None:
        self.root = root
        self.git_dir = git_dir
        self.common_dir = common_dir


def find_repo(cwd: str, *, whatever_env: bool = False) -> Paths | None:
    """The repository of `cwd` by walking up to `.git`, as git would with no GIT_* set;
    None when unsure (the caller then asks git). `whatever_env`: walk up even when
    GIT_* variables are set (for reading the project's own files, not for git)."""
    if not whatever_env and any(name in os.environ for name in DISCOVERY_ENV):
        return None
    top = os.path.realpath(existing_folder(cwd))
    while True:
        dot = os.path.join(top, ".git")
        if os.path.isdir(dot):
            git_dir = os.path.realpath(dot)  # a linked .git: its real path, as git gives
            break
        if os.path.isfile(dot):
            try:
                with open(dot, encoding="utf-8") as fh:
                    line = fh.readline().strip()
            except (OSError, ValueError):
                return None
            if not line.startswith("gitdir: ") or "\0" in line:
                return None  # (a NUL: no path git could have written; ask git)
            git_dir = os.path.realpath(os.path.join(top, line[len("gitdir: ") :]))
            break
        parent = os.path.dirname(top)
        if parent == top:
            return None
        top = parent
    common = git_dir
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as fh:
            common = os.path.realpath(os.path.join(git_dir, fh.read().strip()))
    except FileNotFoundError:
        pass
    except (OSError, ValueError):
        return None
    return Paths(top, git_dir, common)


def existing_folder(path: str) -> str:
    """The deepest existing folder on the way to `path` (itself when it is one). Past
    PATH_MAX nothing is looked up: a path from a payload may be any length, and each
    step up would cost its whole length again."""
    path = os.path.normpath(path)
    if len(path) > PATH_MAX:
        path = os.path.dirname(path[: PATH_MAX + 1])
    while not os.path.isdir(path):
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return path


def confirmed(cwd: str) -> tuple[str, str, str] | None:
    """The repository of `cwd` as git last described it (`confirm`), when that still
    holds: the walk up finds the same, no config file changed since, and it is ours."""
    if len(cwd) > PATH_MAX or not os.path.isdir(cwd):
        return None  # no folder git could start in: let git say so
    found = find_repo(cwd)
    if found is None:
        return None
    here = os.path.realpath(cwd)
    for inside in (found.git_dir, found.common_dir):  # no work tree there: git says so
        if here == inside or here.startswith(inside.rstrip("/") + "/"):
            return None
    try:
        with open(os.path.join(found.git_dir, "checkpoint", PATHS_FILE), encoding="utf-8") as fh:
            said = fh.read().split("\n")
            written = os.fstat(fh.fileno()).st_mtime_ns
        if len(said) != 4 or said[3] or os.path.realpath(said[0]) != found.root:
            return None
        if [os.path.realpath(p) for p in said[1:3]] != [found.git_dir, found.common_dir]:
            return None
        uid = os.geteuid()  # else git refuses it (dubious ownership), and should say so
        if os.stat(found.root).st_uid != uid or os.stat(found.git_dir).st_uid != uid:
            return None
        for config in (os.path.join(said[2], "config"), os.path.join(said[1], "config.worktree")):
            try:  # core.worktree, core.bare...
                if os.stat(config).st_mtime_ns >= written:
                    return None
            except FileNotFoundError:
                pass
    except (OSError, ValueError):
        return None
    return said[0], said[1], said[2]


def confirm(lines: list[str]) -> None:
    """Keep what rev-parse said of a repository (top, git dir, common dir): a cache,
    and a failure to write it changes nothing."""
    folder = os.path.join(lines[1], "checkpoint")
    tmp = os.path.join(folder, f".{PATHS_FILE}.{os.getpid()}.tmp")
    try:
        os.makedirs(folder, exist_ok=True)
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write("".join(f"{line}\n" for line in lines))
        os.replace(tmp, os.path.join(folder, PATHS_FILE))
    except (OSError, ValueError):
        try:
            os.unlink(tmp)
        except OSError:
            pass


def object_id_or_none(text: str) -> str | None:
    """`text` if it names an object (a full id, not the zero id), else None."""
    return text if is_oid(text) and text != ZERO_OID else None


def read_head(git_dir: str | os.PathLike[str]) -> str:
    """HEAD's text as stored ("ref: refs/heads/main\\n", or a commit id); "" unreadable."""
    try:
        with open(os.path.join(git_dir, "HEAD"), "rb") as fh:
            return fh.read().decode("utf-8", "surrogateescape")
    except OSError:
        return ""


def read_ref(common_dir: str | os.PathLike[str], ref: str) -> str | None:
    """The id the ref `ref` (refs/heads/main) names, from its loose file or packed-refs;
    None when files do not say (unborn, reftable, a symref, a NUL: ask git)."""
    if "\0" in ref:
        return None
    try:
        with open(os.path.join(common_dir, ref), "rb") as fh:
            return loose_ref_id(fh.read())
    except OSError:
        pass
    try:
        with open(os.path.join(common_dir, "packed-refs"), "rb") as fh:
            packed = fh.read()
    except OSError:
        return None
    at = packed.find(b" " + ref.encode("utf-8", "surrogateescape") + b"\n")
    if at < 0:
        return None
    return object_id_or_none(packed[packed.rfind(b"\n", 0, at) + 1 : at].decode("ascii", "replace"))


def loose_ref_id(data: bytes) -> str | None:
    """The id a loose ref's file names, as git parses it: the id first, then the file's
    end or whitespace (git ignores the rest); None for anything else: a symref, or what
    git calls a broken ref (whitespace before the id, say), for git to judge."""
    text = data[:41].decode("ascii", "replace")
    if len(text) > 40 and text[40] not in " \t\n\r":
        return None
    return object_id_or_none(text[:40])


def head_commit(common_dir: str | os.PathLike[str], head_text: str) -> str | None:
    """HEAD's commit from files alone, given HEAD's text; None when that would take git."""
    text = head_text.strip()
    if text.startswith("ref: refs/heads/"):
        return read_ref(common_dir, text[5:])
    return object_id_or_none(text)


def refs_in_folder(
    common_dir: str | os.PathLike[str], folder: str, leaf_ok: Callable[[str], bool]
) -> dict[str, str] | None:
    """The refs directly in `folder` (refs/checkpoints/main/), loose or packed, as
    `git for-each-ref` lists them: full name -> id, a loose ref over its packed one.
    Entries of folders below are not listed. None when the files do not say as git
    would: a reftable, a name `leaf_ok` refuses (git may list it, the caller would
    not expect it), a symref, or content git reads its own way."""
    listing = RefFolder.listed(common_dir, folder, leaf_ok)
    if listing is None:
        return None
    found: dict[str, str] = {}
    for name in listing.names:
        oid = listing.id_of(name)
        if oid is None:
            return None
        if oid:
            found[name] = oid
    return found


class RefFolder:
    """The refs directly in a folder, listed by name (the folder read, and packed-refs),
    each loose one's file read only when its id is asked for: what a caller that needs
    the newest few of many refs pays for, and no more."""

    def __init__(
        self, common: str, folder: str, leaf_ok: Callable[[str], bool], names: dict[str, str]
    ) -> None:
        self.common = common
        self.folder = folder
        self.leaf_ok = leaf_ok
        self.names = names  # full name -> its packed id, "" for a loose ref (read on demand)

    @classmethod
    def listed(
        cls, common_dir: str | os.PathLike[str], folder: str, leaf_ok: Callable[[str], bool]
    ) -> RefFolder | None:
        """The folder's refs by name; None when the files do not say as git would (as
        refs_in_folder)."""
        common = os.fspath(common_dir)
        if os.path.exists(os.path.join(common, "reftable")):
            return None
        names: dict[str, str] = {}
        try:
            entries = list(os.scandir(os.path.join(common, folder)))
        except (FileNotFoundError, NotADirectoryError):
            entries = []
        except OSError:
            return None
        for entry in entries:  # loose first: a ref packed meanwhile is in packed-refs after
            if entry.name.endswith(".lock"):
                continue  # (git's own write in progress: the ref is still what it was)
            try:
                if entry.is_dir(follow_symlinks=False):
                    continue  # (other tasks' refs)
                if not entry.is_file(follow_symlinks=False) or not leaf_ok(entry.name):
                    return None
            except OSError:
                return None
            names[folder + entry.name] = ""
        packed = _packed_in_folder(common, folder, leaf_ok)
        if packed is None:
            return None
        for name, oid in packed.items():
            names.setdefault(name, oid)
        return cls(common, folder, leaf_ok, names)

    def id_of(self, name: str) -> str | None:
        """The id `name` (one of `names`) names now: its loose file's, else its packed
        one's; "" when it is gone since the listing; None when the files no longer say
        as git would (the caller asks git)."""
        if self.names.get(name):
            return self.names[name]
        try:
            with open(os.path.join(self.common, name), "rb") as fh:
                return loose_ref_id(fh.read())
        except FileNotFoundError:
            pass  # packed since the listing (pack-refs writes packed-refs first), or deleted
        except OSError:
            return None
        packed = _packed_in_folder(self.common, self.folder, self.leaf_ok)
        return None if packed is None else packed.get(name, "")


def _packed_in_folder(
    common: str, folder: str, leaf_ok: Callable[[str], bool]
) -> dict[str, str] | None:
    """packed-refs' refs directly in `folder`: name -> id; None when git would read them
    otherwise (a name `leaf_ok` refuses, a name packed twice: git takes one line or the
    other)."""
    try:
        with open(os.path.join(common, "packed-refs"), "rb") as fh:
            packed = fh.read().decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        return {}
    except OSError:
        return None
    found: dict[str, str] = {}
    for line in packed.split("\n"):
        if not line or line[0] in "#^":
            continue
        oid, _, name = line.partition(" ")
        if not name.startswith(folder) or "/" in name[len(folder) :]:
            continue
        if not is_oid(oid) or not leaf_ok(name[len(folder) :]) or name in found:
            return None
        found[name] = oid
    return found
