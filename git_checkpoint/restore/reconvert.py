"""Files a restore's `.gitattributes` change converts differently: their content is the
same in the workspace and the checkpoint, but git's checkout under the checkpoint's rules
writes other bytes than those on disk (a `* text eol=crlf` removed: the files it made
CRLF must come back LF), so the plan writes them too.

Which files: those below a rule file that differs whose converting attributes differ,
read by `git check-attr --cached` from a scratch index holding each state's rule files
(never the work tree, which a killed restore may have left half changed). Whether each
one's bytes are already git's is decided on disk, by content, once they are staged.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Mapping

from ..gitcore.formats import EXECUTABLE_MODE
from ..gitcore.repo import Repo, nul_list
from ..save.graft import is_attributes
from .checks import Entry

# The attributes that change the bytes git's checkout writes for a blob.
CONVERTING = ("text", "eol", "crlf", "filter", "ident", "working-tree-encoding")


def files_below(
    repo: Repo, worktree: str, overlay: Mapping[str, Entry], folders: list[str]
) -> dict[str, Entry]:
    """The files of a managed set (its tracked tree, its overlay's path -> entry) in
    `folders` and below."""
    top = "" in folders
    argv = ["ls-tree", "-r", "-z", "--full-tree", worktree]
    if not top:
        argv += ["--", *folders]
    out = repo.git(*argv, env={"GIT_LITERAL_PATHSPECS": "1"})
    found: dict[str, Entry] = {}
    for row in out.decode("utf-8", "surrogateescape").split("\0"):
        meta, _, path = row.partition("\t")
        if path:
            mode, _, oid = meta.split(" ")
            found[path] = (int(mode, 8), oid)
    inside = tuple(f"{f}/" for f in folders)
    found.update((p, e) for p, e in overlay.items() if top or p.startswith(inside))
    return found


def converted_differently(
    repo: Repo,
    paths: list[str],
    target: tuple[str, Mapping[str, Entry]],
    before: Iterable[tuple[str, Mapping[str, Entry]]],
) -> set[str]:
    """Of `paths`, those whose converting attributes under `target`'s rule files differ
    from those under the rule files of any of the states `before`. A state is its
    tracked tree and its overlay (path -> entry), whose `.gitattributes` count."""
    if not paths:
        return set()
    wanted = _attributes(repo, paths, *target)
    out: set[str] = set()
    for worktree, overlay in before:
        had = _attributes(repo, paths, worktree, overlay)
        out |= {p for p in paths if had.get(p) != wanted.get(p)}
    return out


def _attributes(
    repo: Repo, paths: list[str], worktree: str, overlay: Mapping[str, Entry]
) -> dict[str, list[tuple[str, str]]]:
    """Each path's converting attributes as the rule files of one state give them."""
    with repo.temp_index() as env:
        repo.git("read-tree", worktree, env=env)
        rules = {p: e for p, e in overlay.items() if is_attributes(p)}
        if rules:
            rows = b"".join(
                f"{mode:o} {oid}\t".encode() + os.fsencode(p) + b"\0"
                for p, (mode, oid) in rules.items()
            )
            repo.git("update-index", "-z", "--index-info", stdin=rows, env=env)
        argv = ("check-attr", "--cached", "-z", "--stdin", *CONVERTING)
        out = repo.git(*argv, stdin=nul_list(paths), env=env)
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    found: dict[str, list[tuple[str, str]]] = {}
    for path, name, value in zip(fields[0::3], fields[1::3], fields[2::3], strict=False):
        found.setdefault(path, []).append((name, value))
    return found


def as_staged(root: str, path: str, staged: str | bytes, mode: int) -> os.stat_result | None:
    """The stat data of the file at `path` when it holds what is staged for it (the
    bytes git's checkout writes) with the same exec bit: then it is left as it is, and
    the index takes that stat data, as if it had been written. None: it does not."""
    full = f"{root}/{path}"
    try:
        st = os.lstat(full)
    except OSError:
        return None
    if not stat.S_ISREG(st.st_mode) or bool(st.st_mode & 0o100) != (mode == EXECUTABLE_MODE):
        return None
    if isinstance(staged, bytes):
        if st.st_size != len(staged):
            return None
        with open(full, "rb") as fh:
            return st if fh.read() == staged else None
    try:
        there = os.lstat(staged)
    except OSError:
        return None
    if not stat.S_ISREG(there.st_mode) or there.st_size != st.st_size:
        return None
    with open(full, "rb") as mine, open(staged, "rb") as theirs:
        while True:
            a, b = mine.read(1 << 20), theirs.read(1 << 20)
            if a != b:
                return None
            if not a:
                return st
