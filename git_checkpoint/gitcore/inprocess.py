"""Objects read in this process through libgit2 (pygit2), where the command server has it
loaded: a save's handful of trees and blobs then costs no `cat-file` child to start.

Only what libgit2 reads exactly as git would is read here, and anything else is left
to git (catfile.py asks it for the rest, as before):
- a repository whose objects git would look up otherwise: GIT_OBJECT_DIRECTORY or
  GIT_ALTERNATE_OBJECT_DIRECTORIES set, or replacement objects (`refs/replace/`, which
  `cat-file` honours and libgit2 does not);
- an object libgit2 does not have (a partial clone's, which git fetches on demand), or a
  repository it cannot open (an extension it does not know: SHA-256, reftable);
- a blob above STREAM_MIN bytes, which git streams rather than hands over whole.

`<tree>:<path>` is followed here through the raw trees with catfile's strict parser, not
libgit2's. A command run without the server never loads pygit2 for this: ENABLED stays
off, and every object comes from git.
"""

from __future__ import annotations

from pathlib import Path

from .formats import EMPTY_TREE, TREE_MODE, canonical_mode, is_oid, raw_entries
from .locate import find_repo

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    import pygit2

ENABLED = False  # set by the command server once pygit2 is loaded (entry/server.py)
OFF = "GIT_CHECKPOINT_IN_PROCESS"  # "off" in a command's environment: git reads it all
STREAM_MIN = 4 << 20  # a blob this big is streamed by git, never held whole here
KINDS = {1: "commit", 2: "tree", 3: "blob", 4: "tag"}
# What points git at other objects than the repository's own.
_ELSEWHERE = ("GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_REPLACE_REF_BASE")

Answer = tuple[str, bytes] | None  # (kind, bytes), or None: git has no such object


class Unknown(Exception):
    """This process cannot answer for the object: git must."""


def open_odb(root: Path, env: dict[str, str]) -> pygit2.Odb | None:
    """The object database of the repository at `root`, when this process may read it
    instead of git (see the module's text); else None."""
    if not ENABLED or any(name in env for name in _ELSEWHERE) or env.get(OFF) == "off":
        return None
    import pygit2

    paths = find_repo(str(root), whatever_env=True)  # (git's children run from `root`)
    if paths is None or _replaces(Path(paths.common_dir)):
        return None
    try:
        return pygit2.Repository(str(root)).odb
    except (pygit2.GitError, OSError, ValueError):
        return None


def _replaces(common: Path) -> bool:
    """Whether the repository has replacement objects (loose or packed refs)."""
    if (common / "refs" / "replace").is_dir():
        return True
    try:
        with open(common / "packed-refs", "rb") as f:
            return b" refs/replace/" in f.read()
    except FileNotFoundError:
        return False


# A tree's entries by name, as a lookup finds them; the trees one request has looked
# through, by id (None: a tree only git reads).
Lookup = dict[bytes, tuple[bytes, str]]
Folders = dict[str, Lookup | None]


def read(
    odb: pygit2.Odb, spec: str, limit: int | None = None, folders: Folders | None = None
) -> Answer:
    """The object `spec` names (an id, or `<tree>:<path>`): (kind, bytes), or None when
    git would answer "missing". Unknown: git must answer (not here, too big for
    `limit`, or a path through something other than a well-formed tree). `folders`:
    the trees already looked through by earlier specs of the same request, each read
    and parsed once (a graft names every folder on the way to each changed file)."""
    oid, colon, path = spec.partition(":")
    if not is_oid(oid):
        raise Unknown(spec)
    if not colon:
        return _object(odb, oid, limit)
    if not path:
        raise Unknown(spec)  # `<id>:` is the tree of a commit or tag to git: git peels it
    if folders is None:
        folders = {}
    folder = True  # the first name is looked up in the tree the spec names
    for name in path.encode("utf-8", "surrogateescape").split(b"/"):
        if not name or name in (b".", b"..") or b"\r" in name or b"\0" in name:
            raise Unknown(spec)  # git reads these otherwise (a relative path, one line)
        if not folder:
            return None  # git goes down only through an entry whose mode is a folder's
        if oid not in folders:
            found = _object(odb, oid, None)
            if found is None or found[0] != "tree":
                raise Unknown(spec)
            folders[oid] = _lookup(found[1])
        entries = folders[oid]
        if entries is None:
            raise Unknown(spec)
        entry = entries.get(name)
        if entry is None:
            return None
        mode, oid = entry
        folder = _is_folder(mode)
    return _object(odb, oid, limit)


def _is_folder(mode: bytes) -> bool:
    return canonical_mode(int(mode, 8)) == TREE_MODE


def _lookup(raw: bytes) -> Lookup | None:
    """A tree's entries by name ((mode, id)), as git's lookup finds them; None for a
    tree that is not in git's order or names an entry twice, where git's lookup (which
    stops at the first name that sorts after the one it wants) and a plain search part."""
    try:
        entries = raw_entries(raw)
    except ValueError:
        return None  # git's own parser has the last word
    last = b""
    found: Lookup = {}
    for entry, mode, oid in entries:
        try:
            key = entry + b"/" if _is_folder(mode) else entry
        except ValueError:  # a mode that is no octal number
            return None
        if key <= last or entry in found:  # (a file and a folder of one name: in order)
            return None
        last = key
        found[entry] = mode, oid
    return found


def _object(odb: pygit2.Odb, oid: str, limit: int | None) -> Answer:
    import pygit2

    try:
        if limit is not None and odb.read_header(oid)[1] > limit:
            raise Unknown(oid)
        kind, data = odb.read(oid)[:2]
    except (pygit2.GitError, KeyError, ValueError):
        raise Unknown(oid) from None  # not found here need not mean not found by git
    name = KINDS.get(int(kind))
    if name is None:
        raise Unknown(oid)
    return name, bytes(data)


Entry = tuple[int, str]  # (canonical mode, id)
# The modes git writes, and 100664 (early git's, read as 100644); git reads the rest.
_GIT_MODES = frozenset({b"100644", b"100755", b"120000", b"40000", b"160000", b"100664"})
Change = tuple[Entry | None, Entry | None]  # a path's entry in two trees (None: no file)


def tree_changes(odb: pygit2.Odb, old: str, new: str) -> dict[str, Change]:
    """The paths `git diff-tree -r --raw` names between two trees, with their entry on
    each side: equal subtrees skipped, a folder on one side and a file on the other
    given as the file and every file below the folder. Unknown for a tree that is not
    in git's order, names an entry twice or cannot be read here: git answers."""
    changes: dict[str, Change] = {}
    _walk(odb, old, new, "", changes)
    return changes


def _walk(
    odb: pygit2.Odb, old: str | None, new: str | None, prefix: str, out: dict[str, Change]
) -> None:
    before, after = _sorted_entries(odb, old), _sorted_entries(odb, new)
    for name in before.keys() | after.keys():
        was, now = before.get(name), after.get(name)
        if was == now:
            continue
        path = prefix + name.decode("utf-8", "surrogateescape")
        was_folder = was is not None and was[0] == TREE_MODE
        now_folder = now is not None and now[0] == TREE_MODE
        if was_folder or now_folder:
            _walk(
                odb,
                was[1] if was and was_folder else None,
                now[1] if now and now_folder else None,
                f"{path}/",
                out,
            )
        file_was = None if was_folder else was
        file_now = None if now_folder else now
        if file_was != file_now:
            out[path] = (file_was, file_now)


def _sorted_entries(odb: pygit2.Odb, tree: str | None) -> dict[bytes, Entry]:
    """A tree's entries by name, canonical modes; Unknown unless in git's strict order,
    each name once, each mode one git writes."""
    if tree is None or tree == EMPTY_TREE:  # (git knows the empty tree unstored)
        return {}
    found = _object(odb, tree, None)
    if found is None or found[0] != "tree":
        raise Unknown(tree)
    try:
        raw = raw_entries(found[1])
    except ValueError:
        raise Unknown(tree) from None
    entries: dict[bytes, Entry] = {}
    last = b""
    for name, mode, oid in raw:
        if mode not in _GIT_MODES or name in entries:
            raise Unknown(tree)  # (git reads an unknown mode as a submodule)
        canonical = canonical_mode(int(mode, 8))
        key = name + b"/" if canonical == TREE_MODE else name
        if key <= last:
            raise Unknown(tree)
        last = key
        entries[name] = (canonical, oid)
    return entries


def enable() -> bool:
    """Load pygit2 and read objects through it from now on (the command server, before
    it forks its workers); False when it cannot be loaded."""
    global ENABLED
    try:
        import pygit2  # noqa: F401
    except ImportError:
        return False
    ENABLED = True
    return True
