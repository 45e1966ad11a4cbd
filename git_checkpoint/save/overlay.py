"""The overlay: which untracked files a save captures (design.md §4), which it leaves
out and why, and the tree that holds them.

A file git does not ignore is work, and is captured; so are the includes (ignored or
not). Left out, each named with its reason: what `untracked.exclude` names, dependency
trees and caches recognised as such (a `node_modules/` folder, a virtualenv by its
`pyvenv.cfg`, a folder marked with `CACHEDIR.TAG`, compiled Python in `__pycache__/`),
secret-looking names, names git cannot store, and, past the overlay's limits, the
largest files or fullest folders, unless `limits.on_exceed: refuse` refuses the save.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ..config.model import DEFAULT_EXCLUDE, SECRET_PATTERNS, SECRET_TEMPLATES, Config
from ..core.errors import Refused
from ..core.text import counted, quote_path
from ..fast.quickstate import include_argv
from ..gitcore import indexfile
from ..gitcore.pathrules import git_refuses_path
from ..gitcore.repo import Repo, nul_list
from ..gitcore.scan import exclude_matcher
from . import graft

# The first bytes of a CACHEDIR.TAG (https://bford.info/cachedir/): a folder that holds
# one says it is a cache that can be made again.
CACHEDIR_SIGNATURE = b"Signature: 8a477f597d28d172789f06886806bc55"
COMPILED = (".pyc", ".pyo")


@dataclass(frozen=True)
class LeftOut:
    """What a save did not capture, and why: a file, or a folder (ending in "/") that
    one reason keeps out whole."""

    path: str
    why: str
    files: int = 1
    size: int = 0  # bytes, where they were counted (the limits count them)
    exclude: str = ""  # the `untracked.exclude` line that keeps it out without a word

    def describe(self) -> str:
        count = f"{self.files:,} files, " if self.path.endswith("/") and self.files > 1 else ""
        size = f"{human_size(self.size)}, " if self.size else ""
        quiet = (
            f"; untracked.exclude: [{self.exclude}] leaves it out quietly" if self.exclude else ""
        )
        return f"{quote_path(self.path)} ({count}{size}{self.why}{quiet})"


@dataclass(frozen=True)
class Overlay:
    """The untracked files a save captures, their size, and what it left out."""

    files: tuple[str, ...]
    size: int
    left_out: tuple[LeftOut, ...]

    @property
    def secrets(self) -> tuple[str, ...]:
        return tuple(o.path for o in self.left_out if o.why == SECRET_NAME)

    @property
    def unstorable(self) -> tuple[str, ...]:
        return tuple(o.path for o in self.left_out if o.why in (NESTED_REPO, GIT_REFUSES))


EXCLUDED = "untracked.exclude"
DEFAULT_EXCLUDED = "a dependency tree or cache (a default exclude)"
SECRET_NAME = "its name looks like a secret"
NESTED_REPO = "a repository of its own"
GIT_REFUSES = "a name git cannot store"
OVER_BYTES = "over overlay_max_bytes"
OVER_FILES = "over overlay_max_files"


def _any_of(patterns: Iterable[str], prefix: str = "") -> re.Pattern[str]:
    return re.compile("|".join(prefix + fnmatch.translate(p.lower()) for p in patterns))


# One regex each, over the lowercased name or path: `.ENV` is as secret as `.env`.
_SECRET_NAMES = _any_of(p for p in SECRET_PATTERNS if "/" not in p)
_SECRET_TAILS = _any_of((p for p in SECRET_PATTERNS if "/" in p), prefix="(?:.*/)?")
_TEMPLATES = _any_of(SECRET_TEMPLATES)


def looks_secret(path: str, allow: Iterable[str] = ()) -> bool:
    """Whether the name says it holds secrets (SECRET_PATTERNS, matched exactly as they
    read), unless it is a template (`.env.example`) or `secrets.allow` names it. What a
    file holds is the content scan's to judge (secrets.py)."""
    name = path.rsplit("/", 1)[-1]
    if any(fnmatch.fnmatchcase(path, pat) or fnmatch.fnmatchcase(name, pat) for pat in allow):
        return False
    lowered = name.lower()
    if _TEMPLATES.match(lowered):
        return False
    return bool(_SECRET_NAMES.match(lowered) or _SECRET_TAILS.match(path.lower()))


def exclude_args(cfg: Config) -> list[str]:
    return [f"--exclude={pattern}" for pattern in cfg.exclude]


def choose_overlay(
    repo: Repo, cfg: Config, untracked: Iterable[str] | None, seen: list[str] | None = None
) -> tuple[Overlay, list[str]]:
    """(the overlay, the includes' own listing). `untracked`: a scan's list of untracked,
    non-ignored paths (else ls-files lists them); `seen`: the includes' listing, when the
    caller ran it already. Never refused: what a save refuses for is refusal()'s."""
    candidates, seen, left_out = _candidates(repo, cfg, untracked, seen)
    kept: list[str] = []
    for path in candidates:
        if path.endswith("/"):
            left_out.append(LeftOut(path, NESTED_REPO))  # a nested repository, never entered
        elif git_refuses_path(path):
            left_out.append(LeftOut(path, GIT_REFUSES))
        elif looks_secret(path, cfg.secrets_allow):
            left_out.append(LeftOut(path, SECRET_NAME))
        else:
            kept.append(path)
    files, size, over = _within_limits(repo.root, kept, cfg)
    return Overlay(tuple(files), size, tuple(left_out + over)), seen


def _candidates(
    repo: Repo, cfg: Config, untracked: Iterable[str] | None, seen: list[str] | None
) -> tuple[list[str], list[str], list[LeftOut]]:
    """(what is left to capture, the includes' listing, what the excludes and the
    recognised dependency trees keep out)."""
    excludes = exclude_args(cfg)
    matcher = exclude_matcher(cfg.exclude, repo.ignore_case())
    if untracked is None:
        untracked = repo.git_lines("ls-files", "-z", "-o", "--exclude-standard")
    untracked = list(untracked)
    if matcher is not None:
        paths = [p for p in untracked if not matcher(p)]
    else:  # patterns beyond the simple kind: git says which stay
        paths = repo.git_lines("ls-files", "-z", "-o", "--exclude-standard", *excludes)
    kept = set(paths)
    left_out = _by_folder((p for p in untracked if p not in kept), cfg.exclude)
    if seen is None:
        argv = include_argv(repo.root, excludes, cfg.include)
        seen = repo.git_lines(*argv, env={"GIT_LITERAL_PATHSPECS": "1"}) if argv else []
    recognised = _Recognised(repo.root)
    chosen = []
    included = set(seen)
    for path in sorted(kept | included):
        if path in included:
            chosen.append(path)  # named by an include: captured whatever it lies in
            continue
        why = recognised.why(path)
        if why is None:
            chosen.append(path)
        else:
            recognised.keep_out(path, why)
    return chosen, seen, left_out + recognised.summary()


def _by_folder(paths: Iterable[str], patterns: Iterable[str]) -> list[LeftOut]:
    """Excluded paths, one entry for each folder an exclude pattern names (or each file),
    saying whether the project's excludes or the defaults keep it out."""
    folders = [p.rstrip("/") for p in patterns]
    defaults = {p.rstrip("/") for p in DEFAULT_EXCLUDE}
    found: dict[str, tuple[str, int]] = {}
    for path in paths:
        parts = path.rstrip("/").split("/")
        where, why = path, EXCLUDED
        for depth, name in enumerate(parts[:-1], start=1):
            named = [f for f in folders if fnmatch.fnmatchcase(name, f)]
            if named:
                where = "/".join(parts[:depth]) + "/"
                why = DEFAULT_EXCLUDED if set(named) <= defaults else EXCLUDED
                break
        found[where] = (why, found.get(where, (why, 0))[1] + 1)
    return [LeftOut(where, why, files=n) for where, (why, n) in sorted(found.items())]


class _Recognised:
    """Dependency trees and caches recognised by what they hold, not by their names:
    a virtualenv (`pyvenv.cfg` at its top), a folder marked with `CACHEDIR.TAG`, and
    compiled Python in `__pycache__/`. Each folder is looked at once."""

    def __init__(self, root: Path) -> None:
        self.root = os.fspath(root)
        self.marked: dict[str, str | None] = {"": None}  # folder -> why, None: nothing
        self.found: dict[str, tuple[str, int]] = {}  # the folder left out -> (why, files)

    def why(self, path: str) -> str | None:
        parts = path.split("/")
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth])
            mark = self.marked.get(folder, "?")
            if mark == "?":
                mark = self._look(folder)
                self.marked[folder] = mark
            if mark is not None:
                return mark
        if len(parts) > 1 and parts[-2] == "__pycache__" and parts[-1].endswith(COMPILED):
            return "compiled Python"
        return None

    def _look(self, folder: str) -> str | None:
        base = f"{self.root}/{folder}"
        if os.path.isfile(f"{base}/pyvenv.cfg"):
            return "a virtualenv (pyvenv.cfg)"
        try:
            with open(f"{base}/CACHEDIR.TAG", "rb") as fh:
                if fh.read(len(CACHEDIR_SIGNATURE)) == CACHEDIR_SIGNATURE:
                    return "a cache (CACHEDIR.TAG)"
        except OSError:
            pass
        return None

    def keep_out(self, path: str, why: str) -> None:
        parts = path.split("/")
        top = parts[-1]
        for depth in range(1, len(parts)):
            folder = "/".join(parts[:depth])
            if self.marked.get(folder) is not None:
                top = folder + "/"
                break
        else:
            top = "/".join(parts[:-1]) + "/"  # the __pycache__ folder
        _, files = self.found.get(top, (why, 0))
        self.found[top] = (why, files + 1)

    def summary(self) -> list[LeftOut]:
        return [LeftOut(p, why, files=n) for p, (why, n) in sorted(self.found.items())]


def _within_limits(
    root: Path, files: list[str], cfg: Config
) -> tuple[list[str], int, list[LeftOut]]:
    """(the files within the overlay's limits, their bytes, what the limits leave out:
    the largest files past overlay_max_bytes, the fullest folders past overlay_max_files).
    (refusal() turns them into a refusal under `limits.on_exceed: refuse`)."""
    sizes: dict[str, int] = {}
    for path in files:
        try:
            st = os.lstat(root / path)
        except (FileNotFoundError, NotADirectoryError):  # gone since the scan
            continue
        sizes[path] = st.st_size if stat.S_ISREG(st.st_mode) else 0
    kept = [p for p in files if p in sizes]
    over: list[LeftOut] = []
    if len(kept) > cfg.overlay_max_files:
        groups = Counter(_folder_of(p) for p in kept)
        count = len(kept)
        dropped: set[str] = set()
        for folder, n in groups.most_common():
            if count <= cfg.overlay_max_files:
                break
            if folder == ".":
                continue  # files at the top go one by one, below
            dropped.add(folder)
            count -= n
            size = sum(sizes[p] for p in kept if _folder_of(p) == folder)
            over.append(LeftOut(folder, OVER_FILES, files=n, size=size, exclude=folder))
        kept = [p for p in kept if _folder_of(p) not in dropped]
        while len(kept) > cfg.overlay_max_files:  # still over: the largest files go
            largest = max(kept, key=lambda p: (sizes[p], p))
            kept.remove(largest)
            over.append(LeftOut(largest, OVER_FILES, size=sizes[largest], exclude=largest))
    total = sum(sizes[p] for p in kept)
    if total > cfg.overlay_max_bytes:
        for path in sorted(kept, key=lambda p: (-sizes[p], p)):
            if total <= cfg.overlay_max_bytes:
                break
            total -= sizes[path]
            over.append(LeftOut(path, OVER_BYTES, size=sizes[path], exclude=path))
        gone = {o.path for o in over}
        kept = [p for p in kept if p not in gone]
    return kept, total, over


def _folder_of(path: str) -> str:
    """The folder a path is counted in for overlay_max_files: its first two levels."""
    parts = path.split("/")
    if len(parts) > 2:
        return "/".join(parts[:2]) + "/"
    return parts[0] + "/" if len(parts) > 1 else "."


def refusal(overlay: Overlay, cfg: Config) -> Refused | None:
    """What a save refuses for under its policies, or None: secret-looking names under
    `secrets.on_save: block`, an overlay over its limits under `limits.on_exceed:
    refuse`. A capture itself never refuses: a restore's safety snapshot, `diff` and
    `status` take the workspace as it is."""
    if overlay.secrets and cfg.secrets_on_save == "block":
        return Refused(
            f"secret-looking untracked files: {', '.join(overlay.secrets[:5])}; "
            "move them, or list them under secrets.allow"
        )
    over = [o for o in overlay.left_out if o.why in (OVER_FILES, OVER_BYTES)]
    if not over or cfg.overlay_on_exceed != "refuse":
        return None
    files = len(overlay.files) + sum(o.files for o in over)
    total = overlay.size + sum(o.size for o in over)
    largest = ", ".join(o.describe() for o in over[:3])
    lines = ", ".join(o.exclude for o in over[:3] if o.exclude)
    return Refused(
        f"overlay too large: {counted(files, 'untracked file')}, {human_size(total)} "
        f"(limit {counted(cfg.overlay_max_files, 'file')}, {human_size(cfg.overlay_max_bytes)}; "
        f"limits.on_exceed: refuse): largest: {largest}; "
        f"add `untracked.exclude: [{lines}]` to .checkpoint.yaml"
    )


def human_size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB"):
        if size < 1024:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GiB"


def overlay_tree(
    repo: Repo, files: Iterable[str], known: Mapping[str, tuple[str, str]] | None = None
) -> str | None:
    """U's tree: `files` hashed from the work tree; None for an empty overlay. `known`:
    the entries (mode, id) of files an earlier checkpoint hashed and whose stat data
    vouches that they have not changed since (capture.reusable_entries): taken as they
    are, not read or hashed again."""
    files = list(files)
    if not files:
        return None
    reused = {f: known[f] for f in files if f in known} if known and repo.sha1() else {}
    left = [f for f in files if f not in reused]
    if not left:
        tree = graft.tree_of(repo, reused)
        if tree is not None:
            return tree
    with repo.temp_index() as env:
        if reused:
            indexfile.write_seed(env["GIT_INDEX_FILE"], reused)
        if left:
            # --remove: a file gone since the scan (a build's temporary file) is left
            # out, not a failed save; U holds what was there to hash.
            argv = ("update-index", "--add", "--remove", "-z", "--stdin")
            repo.git(*argv, stdin=nul_list(left), env=env)
        entries = indexfile.read_entries(env["GIT_INDEX_FILE"]) if repo.sha1() else None
        tree = graft.tree_of(repo, entries) if entries else None  # no write-tree process
        return tree or repo.git("write-tree", env=env).decode().strip()
