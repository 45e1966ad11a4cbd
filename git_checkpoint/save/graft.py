"""The work-tree tree (W) as the index tree with the scan's changes grafted in.

`add -u` and `write-tree` on a copy of the index read and write the whole index to
change a handful of entries, a cost that grows with the repository. The scan already names
every tracked path whose work-tree state differs from the index (`status
--porcelain=v2`), so W needs only: the trees on their way to the root read (`cat-file
--batch`), those files added to a small index seeded with their own entries (so git
applies every rule `git add` would), and the trees rewritten (as loose objects,
Repo.store_trees; `mktree --batch` where git would write them otherwise). Cost grows
with the change, not with the repository.

`graft` answers None for what it leaves to `add -u` (the caller's fallback): a path
that a line-based git command cannot carry, a repository that does not use SHA-1.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ..gitcore import indexfile
from ..gitcore.formats import DELETED, GITLINK, REGULAR, SYMLINK, TREE, object_id, raw_entries
from ..gitcore.repo import Repo, concurrently, nul_list

_TYPES = {"100644": "blob", "100755": "blob", SYMLINK: "blob", GITLINK: "commit", TREE: "tree"}
# Above this many files, hashing is split over two `update-index` processes (two cores),
# and their loose objects are stored without compression (core.looseCompression=0,
# unless the user chose a level): compressing is most of the work of hashing many
# small files. They take their full size until `git gc` packs them; a small save keeps
# git's level 1.
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
    present = [p for p, m in changes.items() if m != DELETED]
    modules = [p for p, m in changes.items() if m == GITLINK]
    # A deleted `.gitattributes` leaves the index in its turn, as under `add -u`: the
    # files sorting before it still see its rules (git reads them from the index).
    gone_rules = [p for p, m in changes.items() if m == DELETED and is_attributes(p)]
    try:
        trees = _read_trees(repo, index_tree, folders)
        for path in modules:  # a repository where a file was: add -u makes it a gitlink,
            entry = trees[_parent(path)].get(_name(path))  # update-index drops the file
            if entry is None or entry[0] != GITLINK:
                raise _NotGraftable()
        if len(present) > SPLIT_HASHING:  # two cores: hash in two halves side by side
            half = len(present) // 2
            chosen = any(
                k in ("core.compression", "core.loosecompression") for k, _ in repo.config_pairs()
            )
            fast = () if chosen else ("-c", "core.looseCompression=0")
            first, second = concurrently(
                lambda: _added(repo, trees, present[:half], gone_rules, fast),
                lambda: _added(repo, trees, present[half:], gone_rules, fast),
            )
            new = {**first, **second}
        else:  # one after the other: git calls in a fixed order (the fault tests count them)
            new = _added(repo, trees, present, gone_rules)
        new.update({p: None for p, m in changes.items() if m == DELETED})
        return _write_trees(repo, trees, folders, new)
    except _NotGraftable:
        return None


def tree_of(repo: Repo, entries: Mapping[str, tuple[str, str]]) -> str | None:
    """The tree of a whole index's `entries` (path -> (mode, id)), written as write-tree
    would; None when there is no entry."""
    folders = sorted(_with_ancestors(_parent(p) for p in entries), key=_depth, reverse=True)
    try:
        return _write_trees(repo, {folder: {} for folder in folders}, folders, entries)
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
    specs = [f"{root}:{f}" if f else root for f in folders]
    trees: dict[str, dict[bytes, tuple[str, str]]] = {}
    for folder, answer in zip(folders, repo.objects.read_specs(specs), strict=True):
        if answer is None:  # a folder the index tree lacks (only `add -N` entries)
            trees[folder] = {}
        elif answer[0] == "tree":
            trees[folder] = _parse_tree(answer[1])
        else:  # a blob or a link where a folder goes: add -u knows how
            raise _NotGraftable()
    return trees


class _NotGraftable(Exception):
    pass


def _parse_tree(raw: bytes) -> dict[bytes, tuple[str, str]]:
    entries: dict[bytes, tuple[str, str]] = {}
    for name, mode, oid in raw_entries(raw):
        if mode.decode("ascii") not in _TYPES:  # an old, non-canonical mode: mktree
            raise _NotGraftable()  # would write another tree than the one we compute
        entries[name] = (mode.decode("ascii"), oid)
    return entries


def _name(path: str) -> bytes:
    return path.rpartition("/")[2].encode("utf-8", "surrogateescape")


def is_attributes(path: str) -> bool:
    return path.rpartition("/")[2] == ".gitattributes"


def _added(
    repo: Repo,
    trees: Mapping[str, Mapping[bytes, tuple[str, str]]],
    paths: list[str],
    gone_rules: list[str],
    options: tuple[str, ...] = (),
) -> dict[str, tuple[str, str] | None]:
    """The entries `git add -u` makes of `paths` (mode, blob or commit id; None when
    git finds the path gone after all).

    `git add` reads the index as well as the file: a file whose indexed blob has CRLF
    keeps it under autocrlf or text=auto, and a `.gitattributes` gone from disk is still
    read from the index. So the files are added to a small index that holds just their
    index entries and the `.gitattributes` on their way to the root: git then applies
    every rule it would apply in the real index, symlinks and submodules included.
    """
    if not paths:
        return {}
    seed: dict[str, tuple[str, str]] = {}
    for path in [*paths, *gone_rules]:
        entry = trees[_parent(path)].get(_name(path))
        if entry is not None and entry[0] != TREE:
            seed[path] = entry
    for folder in _with_ancestors(_parent(p) for p in paths):
        entry = trees[folder].get(b".gitattributes")
        if entry is not None and entry[0] in REGULAR:
            seed[f"{folder}/.gitattributes" if folder else ".gitattributes"] = entry
    with repo.temp_index() as env:
        index = env["GIT_INDEX_FILE"]
        indexfile.write_seed(index, seed)
        order = sorted([*paths, *gone_rules], key=lambda p: p.encode("utf-8", "surrogateescape"))
        argv = [*options, "update-index", "--add", "--remove", "-z", "--stdin"]  # index order
        repo.git(*argv, stdin=nul_list(order), env=env)
        entries = indexfile.read_entries(index)
        if entries is None:  # not an index we read (a split one): git lists it
            entries = _listed(repo.git("ls-files", "-s", "-z", env=env))
    return {p: entries.get(p) for p in paths}  # absent: git removed it, as add -u would


def _listed(out: bytes) -> dict[str, tuple[str, str]]:
    """`ls-files -s -z`'s entries: path -> (mode, id)."""
    entries: dict[str, tuple[str, str]] = {}
    for record in out.decode("utf-8", "surrogateescape").split("\0"):
        if record:
            meta, _, path = record.partition("\t")
            mode, oid, _ = meta.split(" ")
            entries[path] = (mode, oid)
    return entries


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
    expected: dict[str, bytes] = {}  # new tree id -> its body
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
        oid = object_id(b"tree", body)
        written[folder] = oid
        if trees[folder] == entries:
            continue  # unchanged (an edit that the scan saw but hashes the same)
        batch += [
            f"{mode} {_TYPES[mode]} {oid_}\t".encode() + name + b"\0"
            for name, (mode, oid_) in ordered
        ]
        batch.append(b"\0")
        expected[oid] = body
    root = written[""]
    if root is None:
        raise _NotGraftable()  # every tracked file is gone: write-tree writes the empty tree
    if not expected:
        return root
    if repo.store_trees(expected, root):  # as mktree would write them, one process less
        return root
    out = repo.git("mktree", "-z", "--batch", stdin=b"".join(batch))
    if out.decode().split() != list(expected):
        raise _NotGraftable()  # never expected; add -u will say what git thinks
    return root
