"""What the last save saw, read back so that the next auto-save can tell "unchanged"
with one work-tree scan (the save writes it: save/keep.py).

Per work tree, under `<git dir>/checkpoint/quick/`: the temporary index that save built
(its stat data and mtime kept), and `state.json` tying it to everything else the
checkpoint depended on: HEAD, the real index's checksum trailer, `.checkpoint.yaml`, our
git config, the task's refs, the untracked list, the overlay files' stat data. Anything
that differs, or that cannot be read, means "ask the full save". Standard library only.
"""

from __future__ import annotations

import os
import stat
import time

from ..core import cjson
from ..gitcore.locate import read_head

TYPE_CHECKING = False
if TYPE_CHECKING:  # the hook path imports this module: no typing, pathlib, dataclasses
    from collections.abc import Iterable, Sequence
    from typing import Any, Protocol

    class RepoPaths(Protocol):
        """A gitcore Repo, or the paths the locator found without git."""

        @property
        def root(self) -> str | os.PathLike[str]: ...
        @property
        def git_dir(self) -> str | os.PathLike[str]: ...
        @property
        def common_dir(self) -> str | os.PathLike[str]: ...


VERSION = 3  # 2: the kept index is the real index as scanned, W is grafted on it;
# 3: the task's refs by folder listing (refs_seen)
STARTED_NS = time.time_ns()  # before this process read any configuration
RACY_NS = 1_000_000_000  # a file touched this close to a scan may change unseen by stat
TAIL = 32  # the index's checksum trailer (20 bytes for SHA-1, 32 for SHA-256), and more
CONFIG_FILE = ".checkpoint.yaml"


def folder(repo: RepoPaths) -> str:
    return os.path.join(repo.git_dir, "checkpoint", "quick")


def index_tail(index: str | os.PathLike[str]) -> str | None:
    """The size and checksum trailer of an index file, or None when there is none."""
    try:
        with open(index, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            fh.seek(max(0, size - TAIL))
            return f"{size}:{fh.read().hex()}"
    except FileNotFoundError:
        return None


def file_digest(path: str, recording: bool) -> str | None:
    """A small file's bytes (as text), its kind if it is no regular file, None if absent.
    `recording`: "racy" if it changed after this process may have read it."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return f"mode {st.st_mode:o}"
    if recording and max(st.st_mtime_ns, st.st_ctime_ns) >= STARTED_NS - RACY_NS:
        return "racy"  # written around when we read it: no promise about which version
    with open(path, "rb") as fh:
        return fh.read().decode("latin-1")  # it is small: keep it whole


def file_stat(path: str) -> list[int] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_mode]


def overlay_stats(
    root: str | os.PathLike[str], files: Iterable[str]
) -> dict[str, list[int] | None]:
    return {f: file_stat(os.path.join(root, f)) for f in files}


SYSTEM_ATTRIBUTES = "/etc/gitattributes"  # git's system file where git is installed in /usr
# The files of attributes that rule every path, by the names rule_files keeps them under.
WHOLE_TREE_RULES = ("@info", "@user", "@system")
_FALSE = ("", "0", "false", "no", "off")  # GIT_ATTR_NOSYSTEM unset, as git reads it


def rule_files(
    repo: RepoPaths, files: Iterable[str], config: Iterable[Sequence[str]]
) -> dict[str, list[int] | None] | None:
    """Stat data of every file of attributes that applies to `files` as git hashes them:
    the `.gitattributes` of each folder on the way to each file, ignored or not (by its
    path in the work tree), and under WHOLE_TREE_RULES the repository's info/attributes,
    the user's (core.attributesFile, else git's default place for it) and the system's
    (None where git reads none). A symlink's data is followed as well as its own.
    `config`: our git config pairs, as read. None: git reads a file of attributes from a
    place this cannot tell (core.attributesFile under `%(prefix)`)."""
    named = [value for key, value in config if key == "core.attributesfile"]
    home = os.environ.get("HOME") or None
    xdg = os.environ.get("XDG_CONFIG_HOME") or None
    user: str | None
    if named:
        user = named[-1]
        if user.startswith("%("):
            return None
        if user == "~" or user.startswith("~/"):
            user = None if home is None else home + user[1:]
        elif user.startswith("~"):
            user = os.path.expanduser(user)
    elif xdg is not None:
        user = os.path.join(xdg, "git", "attributes")
    else:
        user = None if home is None else os.path.join(home, ".config", "git", "attributes")
    nosystem = os.environ.get("GIT_ATTR_NOSYSTEM", "").lower() not in (
        "",
        "0",
        "false",
        "no",
        "off",
    )
    found = {  # (git reads a relative path from the work tree's top, where it runs)
        "@info": rule_stat(os.path.join(repo.common_dir, "info", "attributes")),
        "@user": None if user is None else rule_stat(os.path.join(str(repo.root), user)),
        "@system": None if nosystem else rule_stat(SYSTEM_ATTRIBUTES),
    }
    folders = {""}
    for path in files:
        folder = path.rpartition("/")[0]
        while folder not in folders:
            folders.add(folder)
            folder = folder.rpartition("/")[0]
    for folder in folders:
        rel = f"{folder}/.gitattributes" if folder else ".gitattributes"
        found[rel] = rule_stat(os.path.join(repo.root, rel))
    return found


def rule_stat(path: str) -> list[int] | None:
    """file_stat, and a symlink's target's too."""
    own = file_stat(path)
    if own is None or not stat.S_ISLNK(own[4]):
        return own
    try:
        st = os.stat(path)
    except OSError:
        return [*own, -1, -1, -1, -1, -1]
    return [*own, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_mode]


def rules_trusted(rules: list[int] | None, stamp_ns: int) -> bool:
    """Stat data of a file of attributes vouches for its content (stats_trusted's rule,
    for a symlink's target too)."""
    limit = stamp_ns - RACY_NS
    return rules is None or all(rules[i] < limit for i in (1, 2, 6, 7) if i < len(rules))


def stats_trusted(
    stats: dict[str, list[int] | None], stamp_ns: int, absent_ok: bool = False
) -> bool:
    """Stat data taken before hashing vouches for the content only when the file was not
    touched within RACY_NS of the scan (timestamps are coarse) and it exists (or, with
    `absent_ok`, is known to be gone)."""
    limit = stamp_ns - RACY_NS
    return all(
        (s[1] < limit and s[2] < limit) if s is not None else absent_ok for s in stats.values()
    )


def refs_seen(repo: RepoPaths, task: str, latest: str) -> dict[str, Any] | None:
    """What tells whether the task's refs changed since: each entry of its ref folder by
    name and inode (git writes a ref to a lock file and renames it into place, so a
    ref written again is a new inode; read from the folder listing, no file opened),
    the content of `latest` (the ref of its latest checkpoint) and of any ref numbered
    above it (one that names no checkpoint, until it does: a ref deleted and made again
    may get its inode back), and packed-refs' stat data. None when refs are not plain
    files (reftable). Its cost does not grow with the task's checkpoints."""
    if os.path.exists(os.path.join(repo.common_dir, "reftable")):
        return None
    entries: dict[str, int] = {}
    folder, _, leaf = latest.rpartition("/")
    base = os.path.join(repo.common_dir, "refs", "checkpoints", task)
    try:
        listed = list(os.scandir(base))
    except (FileNotFoundError, NotADirectoryError):
        listed = []
    number = _number(leaf)
    contents: dict[str, str | None] = {leaf: None}
    for entry in listed:
        entries[entry.name + ("/" if entry.is_dir(follow_symlinks=False) else "")] = entry.inode()
        above = _number(entry.name)
        if number is not None and above is not None and above > number:
            contents[entry.name] = None
    for name in contents:
        try:
            with open(os.path.join(repo.common_dir, folder, name), "rb") as fh:
                contents[name] = fh.read().decode("ascii", "replace").strip()
        except OSError:
            pass  # (packed, or gone: the listing says which)
    return {
        "entries": entries,
        "contents": contents,
        "packed": file_stat(os.path.join(repo.common_dir, "packed-refs")),
    }


def _number(name: str) -> int | None:
    """A checkpoint id's number (cp_012: 12); None for another name."""
    digits = name[3:]
    return int(digits) if name[:3] == "cp_" and digits.isascii() and digits.isdigit() else None


def include_argv(
    root: str | os.PathLike[str], exclude_args: Sequence[str], includes: Sequence[str]
) -> list[str] | None:
    """`ls-files -o` of the includes that exist: without --exclude-standard, ignored files
    under them are listed too; the configured excludes still win over an include. (Run
    it with GIT_LITERAL_PATHSPECS=1.)"""
    present = [p for p in includes if os.path.lexists(os.path.join(root, p))]
    return ["ls-files", "-z", "-o", *exclude_args, "--", *present] if present else None


class Before:
    """Read before a scan: a change after this point shows as a difference later."""

    __slots__ = ("config_file", "head_text", "index", "journal", "stamp_ns")

    def __init__(
        self, head_text: str, index: str | None, config_file: str | None, journal: bool,
        stamp_ns: int,
    ) -> None:  # fmt: skip
        self.head_text = head_text
        self.index = index
        self.config_file = config_file
        self.journal = journal  # a restore is pending
        self.stamp_ns = stamp_ns


def journal_pending(repo: RepoPaths) -> bool:
    """A restore journal in this worktree (storage/journal.py): a restore is running or
    was interrupted."""
    return os.path.exists(os.path.join(repo.git_dir, "checkpoint", "restore-journal.json"))


IN_PLACE = "verify-in-place.json"  # an older checkpoint is in place for its verifiers


def in_place_pending(repo: RepoPaths) -> bool:
    """A verify in place (verify/in_place.py) is running in this worktree, or ended
    without putting the workspace back."""
    return os.path.exists(os.path.join(repo.git_dir, "checkpoint", IN_PLACE))


def before_scan(repo: RepoPaths, recording: bool) -> Before:
    return Before(
        head_text=read_head(repo.git_dir),
        index=index_tail(os.path.join(repo.git_dir, "index")),
        config_file=file_digest(os.path.join(repo.root, CONFIG_FILE), recording),
        journal=journal_pending(repo),
        stamp_ns=time.time_ns(),
    )


def load(repo: RepoPaths) -> dict[str, Any] | None:
    try:
        with open(os.path.join(folder(repo), "state.json"), encoding="utf-8") as fh:
            data = cjson.loads(fh.read())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("version") != VERSION:
        return None
    return data
