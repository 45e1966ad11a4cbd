"""Many changed files hashed here, where git would store their bytes unchanged.

`update-index --add` stores each file as a loose object: a new file in the object
store for each, and git's collision-detecting SHA-1 (1,000 files of 1-20 KB: 85 ms on
both cores here). Read here, hashed by OpenSSL's SHA-1 and kept for one pack
(Repo.store_trees writes it with the new trees), the same files cost about 20 ms.

Only what git would store as it is comes here: a regular file (at most
MEMORY_BLOB_MAX bytes) where the index has a regular file, with core.fileMode on, no
filter or working-tree-encoding attribute, and no CR in its bytes when an attribute or
core.autocrlf could convert line endings (nor `$Id` under `ident`). Everything else,
and anything that changes under us, is left to git, which applies every rule.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Mapping

from .gitio import Repo, nul_list

MEMORY_BLOB_MAX = 1 << 20  # a bigger file goes to git (which streams it)
MEMORY_MAX = 64 << 20  # all files read here, together
_ATTRIBUTES = ("text", "eol", "crlf", "filter", "ident", "working-tree-encoding")
_UNSET = ("unspecified", "unset")
_OFF = ("", "false", "no", "off", "0")


def hash_files(
    repo: Repo, seed: Mapping[str, tuple[str, str]], paths: list[str]
) -> tuple[dict[str, tuple[str, str]], dict[str, bytes]]:
    """(path -> (mode, blob id) of the files hashed here, new blob id -> bytes to store);
    the paths left out are for git."""
    if not _plain_repository(repo) or any(_is_rules(p) for p in paths):
        return {}, {}
    rules = _rules(repo, paths)
    line_ends = repo.autocrlf() not in _OFF
    entries: dict[str, tuple[str, str]] = {}
    blobs: dict[str, bytes] = {}
    room = MEMORY_MAX
    base = os.fspath(repo.root)
    for path in paths:
        had = seed.get(path)
        attributes = rules.get(path)
        if had is None or had[0] not in ("100644", "100755") or attributes is None:
            continue
        data, st = _read(f"{base}/{path}")
        if data is None or st is None or len(data) > room:
            continue
        if "filter" in attributes or "working-tree-encoding" in attributes:
            continue
        if (line_ends or attributes & {"text", "eol", "crlf"}) and b"\r" in data:
            continue
        if "ident" in attributes and b"$Id" in data:
            continue
        digest = hashlib.sha1(b"blob %d\0" % len(data))
        digest.update(data)
        oid = digest.hexdigest()
        entries[path] = ("100755" if st.st_mode & stat.S_IXUSR else "100644", oid)
        if oid != had[1]:
            blobs[oid] = data
            room -= len(data)
    return entries, blobs


def _plain_repository(repo: Repo) -> bool:
    """Whether git stores files here as we would: SHA-1 names, the exec bit from the
    file system, objects written where we write them."""
    from . import loose

    config = repo.config_pairs()
    filemode = [v.strip().lower() for k, v in config if k == "core.filemode"]
    return repo.sha1() and loose.usable(config) and not (filemode and filemode[-1] in _OFF[1:])


def _is_rules(path: str) -> bool:
    return path.rpartition("/")[2] == ".gitattributes"


def _rules(repo: Repo, paths: list[str]) -> dict[str, set[str]]:
    """path -> the converting attributes set on it, as `git add` reads them (the work
    tree's .gitattributes, then the index's; info/attributes; core.attributesFile)."""
    out = repo.git("check-attr", "-z", "--stdin", *_ATTRIBUTES, stdin=nul_list(paths))
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    rules: dict[str, set[str]] = {}
    for path, name, value in zip(fields[0::3], fields[1::3], fields[2::3], strict=False):
        found = rules.setdefault(path, set())
        if value not in _UNSET:
            found.add(name)
    return rules


def _read(full: str) -> tuple[bytes | None, os.stat_result | None]:
    """A regular file's bytes and stat data (None, None for anything else, never
    followed if a symlink, or one past MEMORY_BLOB_MAX)."""
    try:
        fd = os.open(full, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None, None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MEMORY_BLOB_MAX:
            return None, None
        data = os.read(fd, st.st_size + 1)
        if len(data) != st.st_size:
            return None, None  # changing as we read: git reads it again
        return data, st
    except OSError:
        return None, None
    finally:
        os.close(fd)
