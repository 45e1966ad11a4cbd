"""git's formats as the rest of the tool reads them: the argv of the scans every path
shares, what `git status --porcelain=v2` and `git config -z` print, object ids and
modes. Standard library only: the hook path and the launcher's early scan use it.
"""

from __future__ import annotations

try:  # CPython's own SHA-1: hashlib would start OpenSSL on the hook path
    from _sha1 import sha1 as sha1  # type: ignore[import-not-found,unused-ignore]
except ImportError:  # pragma: no cover - another Python
    from hashlib import sha1 as sha1

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

ZERO_OID = "0" * 40
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
EMPTY_BLOB = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"  # git add -N puts it in the index

# Modes as git writes them in trees and status output ("000000": gone) ...
DELETED = "000000"
REGULAR = ("100644", "100755")
SYMLINK = "120000"
GITLINK = "160000"
TREE = "40000"
# ... and as numbers, as tree entries are read.
FILE_MODE = 0o100644
EXECUTABLE_MODE = 0o100755
TREE_MODE = 0o040000
SYMLINK_MODE = 0o120000
GITLINK_MODE = 0o160000

# One scan of the work tree against an index. --ignore-submodules=dirty: a submodule
# counts by its commit, as `add -u` records it.
STATUS_ARGV = (
    "status",
    "--porcelain=v2",
    "-z",
    "--untracked-files=all",
    "--no-renames",
    "--ignore-submodules=dirty",
)
# The index's marks (assume-unchanged, skip-worktree).
FLAGGED_ARGV = ("ls-files", "-v", "-z")
# The git config a save reads, compared as read by the hook's quick check; gc.* and
# maintenance.auto say when git's auto maintenance would act; core.quotePath, core.pager
# and pager.checkpoint say how the commands print, as git would.
CONFIG_PATTERN = (
    r"^(checkpoint\.|remote\.origin\.url$|core\.ignorecase$|core\.autocrlf$"
    r"|core\.sharedrepository$|extensions\.objectformat$"
    r"|(user|author|committer)\.(name|email)$|user\.useconfigonly$|commit\.gpgsign$"
    r"|i18n\.commitencoding$|core\.(loose)?compression$"
    r"|gc\.auto$|gc\.autopacklimit$|maintenance\.auto$"
    r"|core\.quotepath$|core\.pager$|pager\.checkpoint$"
    r"|core\.attributesfile$|core\.eol$|core\.filemode$|core\.symlinks$|filter\.)"
)
CONFIG_ARGV = ("config", "-z", "--get-regexp", CONFIG_PATTERN)


# OpenSSL's SHA-1 (hashlib) hashes several times faster than CPython's own, but loading
# it costs what hashing about a megabyte the slow way does: a process takes it up once
# it has hashed that much (a wide restore hashes every file it overwrites).
_OPENSSL_AFTER = 1 << 20
_hashed = 0
_openssl: Callable[[bytes], Any] | None = None


def object_id(kind: bytes, body: bytes) -> str:
    """The SHA-1 id git gives an object of `kind` (b"blob", b"tree", b"commit")."""
    global _hashed, _openssl
    data = b"%s %d\0" % (kind, len(body)) + body
    if _openssl is None:
        _hashed += len(data)
        if _hashed < _OPENSSL_AFTER:
            return str(sha1(data).hexdigest())
        import functools
        import hashlib

        _openssl = functools.partial(hashlib.sha1, usedforsecurity=False)
    return str(_openssl(data).hexdigest())


def is_oid(text: str) -> bool:
    """Whether `text` is an object id: 40 or 64 lowercase hex digits."""
    return len(text) in (40, 64) and not text.strip("0123456789abcdef")


def canonical_mode(mode: int) -> int:
    """The mode git reads an entry as (canon_mode): `40755` is a folder, `100775` an
    executable file, `120777` a symlink; an unknown kind stays as it is (and is refused
    where it is used)."""
    kind = mode & 0o170000
    if kind == 0o100000:
        return 0o100755 if mode & 0o100 else 0o100644
    if kind in (TREE_MODE, SYMLINK_MODE, GITLINK_MODE):
        return kind
    return mode


def nul_split(out: bytes) -> list[str]:
    """The paths of a `-z` listing."""
    return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]


def config_bool(value: str) -> bool | None:
    """A config value read as git reads a boolean (git_parse_maybe_bool): None when it
    is none (a pager.<cmd> that names a command, a typo)."""
    word = value.strip().lower()
    if word in ("true", "yes", "on"):
        return True
    if word in ("false", "no", "off", ""):
        return False
    try:
        return int(word, 0) != 0
    except ValueError:
        return None


def parse_config(out: bytes) -> list[tuple[str, str]]:
    """`git config -z --get-regexp`'s output: (key, value) in file order; a key given
    bare reads "true", as git reads it."""
    pairs = []
    for item in out.decode("utf-8", "replace").split("\0"):
        if item:
            key, given, value = item.partition("\n")
            pairs.append((key, value if given else "true"))
    return pairs


class Scan:
    """What one `git status --porcelain=v2 -z` run said of the work tree against an
    index. (A plain class: the hook path does not import dataclasses.)"""

    __slots__ = ("changed", "deleted", "errors", "modes", "unmerged", "untracked")

    def __init__(
        self,
        changed: tuple[str, ...],  # tracked paths whose work-tree state differs from the index
        deleted: tuple[str, ...],  # the subset of `changed` gone from the work tree
        untracked: tuple[str, ...],  # untracked, not ignored; nested repositories end in "/"
        unmerged: bool,  # the index has conflicted entries
        modes: dict[str, str],  # changed path -> its work-tree mode (DELETED: gone)
        *,
        errors: bytes = b"",  # status's stderr: a path it could not look at, and why
    ) -> None:
        self.changed = changed
        self.deleted = deleted
        self.untracked = untracked
        self.unmerged = unmerged
        self.modes = modes
        self.errors = errors

    def with_errors(self, errors: bytes) -> Scan:
        return Scan(
            self.changed, self.deleted, self.untracked, self.unmerged, self.modes, errors=errors
        )

    def with_gone(self, gone: list[str]) -> Scan:
        """This scan with `gone` (tracked paths status could not see) counted as deleted."""
        modes = {**self.modes, **dict.fromkeys(gone, DELETED)}
        return Scan(
            (*self.changed, *gone),
            (*self.deleted, *gone),
            self.untracked,
            self.unmerged,
            modes,
            errors=self.errors,
        )

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Scan) and all(
            getattr(self, name) == getattr(other, name) for name in Scan.__slots__
        )

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in Scan.__slots__)
        return f"Scan({fields})"


def parse_status(out: bytes) -> Scan:
    """The records of `status --porcelain=v2 -z`."""
    records = out.decode("utf-8", "surrogateescape").split("\0")
    modes: dict[str, str] = {}
    changed: list[str] = []
    deleted: list[str] = []
    untracked: list[str] = []
    unmerged = False
    i = 0
    while i < len(records):
        rec = records[i]
        i += 1
        kind = rec[:1]
        if kind == "1":  # 1 XY sub mH mI mW hH hI path
            fields = rec.split(" ", 8)
            if fields[1][1] != ".":
                changed.append(fields[8])
                modes[fields[8]] = fields[5]
                if fields[1][1] == "D":
                    deleted.append(fields[8])
        elif kind == "2":  # renames are off, but parse them anyway: path, then origPath
            fields = rec.split(" ", 9)
            i += 1
            if fields[1][1] != ".":
                changed.append(fields[9])
        elif kind == "u":
            unmerged = True
            changed.append(rec.split(" ", 10)[10])
        elif kind == "?":
            untracked.append(rec[2:])
    return Scan(tuple(changed), tuple(deleted), tuple(untracked), unmerged, modes)


_tree_entry: Any = None  # the pattern of one tree entry, compiled on first use (no `re`
# on the hook path): mode digits, a space, a name (no slash, not empty), a NUL, the id.


def raw_entries(raw: bytes) -> list[tuple[bytes, bytes, str]]:
    """A tree's entries as stored: (name, mode as written, hex id). Strict: an empty
    name, a slash in one, a mode that is not digits or a truncated record is a
    ValueError, as libgit2 refused them."""
    global _tree_entry
    if _tree_entry is None:
        import re

        _tree_entry = re.compile(rb"([0-9]+) ([^\0/]+)\0(.{20})", re.DOTALL)
    entries = []
    pos = 0
    for found in _tree_entry.finditer(raw):  # the common case, at C speed
        if found.start() != pos:
            break
        entries.append((found[2], found[1], found[3].hex()))
        pos = found.end()
    return entries if pos == len(raw) else entries + strict_entries(raw, pos)


def strict_entries(raw: bytes, pos: int = 0) -> list[tuple[bytes, bytes, str]]:
    """raw_entries from `pos` on, one entry at a time, naming what is wrong."""
    entries = []
    while pos < len(raw):
        space = raw.index(b" ", pos)
        nul = raw.index(b"\0", space)
        if nul + 21 > len(raw):
            raise ValueError("truncated tree entry")
        mode, name = raw[pos:space], raw[space + 1 : nul]
        if not name or b"/" in name or not mode.isdigit():
            raise ValueError(f"malformed tree entry {name!r}")
        entries.append((name, mode, raw[nul + 1 : nul + 21].hex()))
        pos = nul + 21
    return entries
