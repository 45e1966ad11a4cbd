"""The work-tree tree (W) as the index tree with the scan's changes grafted in.

`add -u` and `write-tree` on a copy of the index read and write the whole index (10 MB
at 100,000 files: about 100 ms) to change a handful of entries. The scan already names
every tracked path whose work-tree state differs from the index, with its work-tree
mode (`status --porcelain=v2`), so W needs only: those files hashed (`hash-object -w
--stdin-paths`: filters and attributes by path, as `git add` applies them), the trees on
their way to the root read (`cat-file --batch`) and rewritten (`mktree --batch`). Cost
grows with the change, not with the repository.

`graft` answers None for what it leaves to `add -u` (the caller's fallback): a path
that a line-based git command cannot carry, a repository that does not use SHA-1.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterable, Mapping

from .errors import GitFailed
from .gitio import Repo, concurrently

DELETED = "000000"
REGULAR = ("100644", "100755")
SYMLINK = "120000"
GITLINK = "160000"
TREE = "40000"
_TYPES = {"100644": "blob", "100755": "blob", SYMLINK: "blob", GITLINK: "commit", TREE: "tree"}
# Above this many files, hashing is split over two `hash-object` processes (two cores).
SPLIT_HASHING = 200


def graft(repo: Repo, index_tree: str, changes: Mapping[str, str]) -> str | None:
    """W's tree id: `index_tree` with each changed path (path -> its work-tree mode as
    the scan reported it, DELETED when gone) set to its work-tree content. None: leave
    this one to `add -u`."""
    if not changes:
        return index_tree
    if len(index_tree) != 40 or any(_unsafe_line(p) for p in changes):
        return None
    if any(mode not in (*REGULAR, SYMLINK, GITLINK, DELETED) for mode in changes.values()):
        return None
    folders = sorted(_with_ancestors(_parent(p) for p in changes), key=_depth, reverse=True)
    files = [p for p, m in changes.items() if m in REGULAR]
    try:
        if len(files) > SPLIT_HASHING:  # two cores: hash in two halves beside the reading
            half = len(files) // 2
            trees, first, second = concurrently(
                lambda: _read_trees(repo, index_tree, folders),
                lambda: _hash_files(repo, files[:half]),
                lambda: _hash_files(repo, files[half:]),
            )
            ids = first + second
        else:  # one after the other: git calls in a fixed order (the fault tests count them)
            trees = _read_trees(repo, index_tree, folders)
            ids = _hash_files(repo, files)
        new: dict[str, tuple[str, str] | None] = {
            p: (changes[p], oid) for p, oid in zip(files, ids, strict=True)
        }
        new.update(_hash_links(repo, [p for p, m in changes.items() if m == SYMLINK]))
        new.update(
            {p: (GITLINK, _submodule_head(repo, p)) for p, m in changes.items() if m == GITLINK}
        )
        new.update({p: None for p, m in changes.items() if m == DELETED})
        return _write_trees(repo, trees, folders, new)
    except _NotGraftable:
        return None


def _unsafe_line(path: str) -> bool:
    """A path `--stdin-paths` or `--batch` would read differently (they are line-based
    and unquote C-style quoting)."""
    return "\n" in path or "\r" in path or path.startswith('"')


def _parent(path: str) -> str:
    return path.rpartition("/")[0]


def _depth(folder: str) -> int:
    return folder.count("/") + 1 if folder else 0


def _with_ancestors(folders: Iterable[str]) -> set[str]:
    out = {""}
    for folder in folders:
        while folder and folder not in out:
            out.add(folder)
            folder = _parent(folder)
    return out


def _read_trees(
    repo: Repo, root: str, folders: list[str]
) -> dict[str, dict[bytes, tuple[str, str]]]:
    """Each folder's entries in `root` (name -> (mode, id)); a folder it lacks is empty."""
    specs = "".join(f"{root}:{f}\n" if f else f"{root}\n" for f in folders)
    out = repo.git("cat-file", "--batch", stdin=specs.encode("utf-8", "surrogateescape"))
    trees: dict[str, dict[bytes, tuple[str, str]]] = {}
    pos = 0
    for folder in folders:
        end = out.index(b"\n", pos)
        header = out[pos:end].split()
        pos = end + 1
        if len(header) == 3 and header[1] == b"tree":
            size = int(header[2])
            trees[folder] = _parse_tree(out[pos : pos + size])
            pos += size + 1
        elif len(header) == 3:  # a blob or a link where a folder goes: add -u knows how
            raise _NotGraftable()
        else:  # "<spec> missing": a folder the index tree lacks (only `add -N` entries)
            trees[folder] = {}
    return trees


class _NotGraftable(Exception):
    pass


def _parse_tree(raw: bytes) -> dict[bytes, tuple[str, str]]:
    entries: dict[bytes, tuple[str, str]] = {}
    pos = 0
    while pos < len(raw):
        space = raw.index(b" ", pos)
        nul = raw.index(b"\0", space)
        mode = raw[pos:space].decode("ascii")
        if mode not in _TYPES:  # an old, non-canonical mode: mktree would change it
            raise _NotGraftable()
        entries[raw[space + 1 : nul]] = (mode, raw[nul + 1 : nul + 21].hex())
        pos = nul + 21
    return entries


def _hash_files(repo: Repo, paths: list[str]) -> list[str]:
    """Blob ids of work-tree files, through the filters `git add` would apply. (Their
    modes are the scan's: git took them from the file, or from the index when
    core.fileMode is false.)"""
    if not paths:
        return []
    stdin = "".join(p + "\n" for p in paths).encode("utf-8", "surrogateescape")
    return repo.git("hash-object", "-w", "--stdin-paths", stdin=stdin).decode().split()


def _hash_links(repo: Repo, paths: list[str]) -> dict[str, tuple[str, str] | None]:
    """Symlinks: their target text, unfiltered, as git stores them."""
    if not paths:
        return {}
    with tempfile.TemporaryDirectory(prefix="checkpoint-links-", dir=repo.git_dir) as tmp:
        files = []
        for n, path in enumerate(paths):
            try:  # core.symlinks false keeps a link as a file: add -u knows that case
                target = os.readlink(os.path.join(repo.root, path))
            except OSError:
                raise _NotGraftable() from None
            file = os.path.join(tmp, str(n))
            with open(file, "wb") as fh:
                fh.write(os.fsencode(target))
            files.append(file)
        stdin = "".join(f + "\n" for f in files).encode()
        ids = repo.git("hash-object", "-w", "--no-filters", "--stdin-paths", stdin=stdin)
    return {p: (SYMLINK, oid) for p, oid in zip(paths, ids.decode().split(), strict=True)}


def _submodule_head(repo: Repo, path: str) -> str:
    """The commit a submodule's work tree is at, as `add -u` records it."""
    where = os.path.join(repo.root, path)
    if not os.path.exists(os.path.join(where, ".git")):
        raise _NotGraftable()  # never let rev-parse walk up into our own repository
    try:
        out = repo.git("-C", path, "rev-parse", "--show-toplevel", "--verify", "HEAD^{commit}")
    except GitFailed:
        raise _NotGraftable() from None
    top, _, head = out.decode("utf-8", "surrogateescape").strip().partition("\n")
    if os.path.realpath(top) != os.path.realpath(where):
        raise _NotGraftable()
    return head.strip()


def _sort_key(item: tuple[bytes, tuple[str, str]]) -> bytes:
    """git's tree order: a folder sorts as if its name ended in a slash."""
    name, (mode, _) = item
    return name + b"/" if mode == TREE else name


def _write_trees(
    repo: Repo,
    trees: dict[str, dict[bytes, tuple[str, str]]],
    folders: list[str],
    new: Mapping[str, tuple[str, str] | None],
) -> str:
    """Rewrite `folders` (deepest first) with the new entries; one `mktree --batch`
    writes them all, and each id it answers is checked against the one computed here."""
    by_folder: dict[str, list[tuple[str, tuple[str, str] | None]]] = {}
    for path, entry in new.items():
        by_folder.setdefault(_parent(path), []).append((path.rpartition("/")[2], entry))
    for folder in folders:
        if folder:
            by_folder.setdefault(_parent(folder), []).append((folder.rpartition("/")[2], None))
    written: dict[str, str | None] = {}  # folder -> its new id, None when it is now empty
    batch: list[bytes] = []
    expected: list[str] = []
    for folder in folders:  # deepest first: each child is written before its parent
        entries = dict(trees[folder])
        for name, entry in by_folder.get(folder, []):
            child = f"{folder}/{name}" if folder else name
            if child in written:  # a subfolder: its new tree
                child_id = written[child]
                entry = None if child_id is None else (TREE, child_id)
            key = name.encode("utf-8", "surrogateescape")
            if entry is None:
                entries.pop(key, None)
            else:
                entries[key] = entry
        if not entries:
            written[folder] = None
            continue
        ordered = sorted(entries.items(), key=_sort_key)
        body = b"".join(
            mode.encode() + b" " + name + b"\0" + bytes.fromhex(oid)
            for name, (mode, oid) in ordered
        )
        oid = hashlib.sha1(b"tree %d\0" % len(body) + body).hexdigest()
        written[folder] = oid
        if trees[folder] == entries:
            continue  # unchanged (an edit that the scan saw but hashes the same)
        batch += [
            f"{mode} {_TYPES[mode]} {oid_}\t".encode() + name + b"\0"
            for name, (mode, oid_) in ordered
        ]
        batch.append(b"\0")
        expected.append(oid)
    root = written[""]
    if root is None:
        raise _NotGraftable()  # every tracked file is gone: write-tree writes the empty tree
    if expected:
        out = repo.git("mktree", "-z", "--batch", stdin=b"".join(batch))
        if out.decode().split() != expected:
            raise _NotGraftable()  # never expected; add -u will say what git thinks
    return root
