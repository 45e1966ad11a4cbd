"""The overlay: which untracked files a save captures (design.md §4), which it leaves
out and why, and the tree that holds them.

Untracked files git does not ignore are captured, plus the includes (ignored or not);
the excludes and secret-looking names are left out, and so are the names git cannot
store (nested repositories, `GIT~1`). The limits say how much an overlay may hold.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from ..config.model import SECRET_PATTERNS, Config
from ..core.errors import Refused
from ..fast.quickstate import include_argv
from ..gitcore import indexfile
from ..gitcore.pathrules import git_refuses_path
from ..gitcore.repo import Repo, nul_list
from ..gitcore.scan import exclude_matcher
from . import graft


def _any_of(patterns: Iterable[str], prefix: str = "") -> re.Pattern[str]:
    return re.compile("|".join(prefix + fnmatch.translate(p.lower()) for p in patterns))


# One regex each, over the lowercased name or path: `.ENV` is as secret as `.env`.
_SECRET_NAMES = _any_of(p for p in SECRET_PATTERNS if "/" not in p)
_SECRET_TAILS = _any_of((p for p in SECRET_PATTERNS if "/" in p), prefix="(?:.*/)?")


def looks_secret(path: str, allow: Iterable[str] = ()) -> bool:
    name = path.rsplit("/", 1)[-1]
    if any(fnmatch.fnmatchcase(path, pat) or fnmatch.fnmatchcase(name, pat) for pat in allow):
        return False
    return bool(_SECRET_NAMES.match(name.lower()) or _SECRET_TAILS.match(path.lower()))


def exclude_args(cfg: Config) -> list[str]:
    return [f"--exclude={pattern}" for pattern in cfg.exclude]


def list_overlay_candidates(repo: Repo, cfg: Config) -> list[str]:
    """Untracked paths that save would consider: non-ignored ones, plus the includes."""
    return overlay_candidates(repo, cfg, None)[0]


def overlay_candidates(
    repo: Repo, cfg: Config, untracked: Iterable[str] | None, seen: list[str] | None = None
) -> tuple[list[str], list[str]]:
    """(the overlay candidates, the includes' own listing). `untracked`: a scan's list of
    untracked, non-ignored paths, so that only the excludes are left to apply; `seen`:
    the includes' listing, when the caller ran it already."""
    excludes = exclude_args(cfg)
    matcher = None if untracked is None else exclude_matcher(cfg.exclude, repo.ignore_case())
    if untracked is not None and matcher is not None:
        paths = [p for p in untracked if not matcher(p)]
    else:
        paths = repo.git_lines("ls-files", "-z", "-o", "--exclude-standard", *excludes)
    if seen is None:
        argv = include_argv(repo.root, excludes, cfg.include)
        seen = repo.git_lines(*argv, env={"GIT_LITERAL_PATHSPECS": "1"}) if argv else []
    return sorted(set(paths + seen)), seen


def split_overlay(paths: list[str], cfg: Config) -> tuple[list[str], list[str], list[str]]:
    """(captured, secret-named left out, left out because git does not store them:
    nested repositories, and names git refuses such as `GIT~1` or `.git.`).
    """
    captured: list[str] = []
    secrets: list[str] = []
    nested: list[str] = []
    for path in paths:
        if path.endswith("/") or git_refuses_path(path):
            nested.append(path)  # a nested repository is never entered
        elif looks_secret(path, cfg.secrets_allow):
            secrets.append(path)
        else:
            captured.append(path)
    return captured, secrets, nested


def check_overlay_limits(root: Path, files: list[str], cfg: Config) -> int:
    """The overlay's size in bytes; Refused, naming its largest folders, over a limit."""
    total = 0
    sizes: Counter[str] = Counter()
    counts: Counter[str] = Counter()
    for path in files:
        try:
            st = os.lstat(root / path)
        except (FileNotFoundError, NotADirectoryError):  # gone since the scan
            continue
        size = st.st_size if stat.S_ISREG(st.st_mode) else 0
        total += size
        parts = path.split("/")
        folder = (
            "/".join(parts[:2]) + "/"
            if len(parts) > 2
            else (parts[0] + "/" if len(parts) > 1 else ".")
        )
        sizes[folder] += size
        counts[folder] += 1
    if total <= cfg.overlay_max_bytes and len(files) <= cfg.overlay_max_files:
        return total
    by_files = len(files) > cfg.overlay_max_files
    ranked = (counts if by_files else sizes).most_common(3)
    largest = ", ".join(
        f"{folder} ({counts[folder]} files, {human_size(sizes[folder])})" for folder, _ in ranked
    )
    top = next((f for f, _ in ranked if f != "."), None)
    hint = f"; add `untracked.exclude: [{top}]` to .checkpoint.yaml" if top else ""
    raise Refused(
        f"overlay too large: {len(files)} untracked files, {human_size(total)} "
        f"(limit {cfg.overlay_max_files} files, {human_size(cfg.overlay_max_bytes)}); "
        f"largest: {largest}{hint}"
    )


def human_size(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB"):
        if size < 1024:
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GiB"


def overlay_tree(repo: Repo, files: list[str]) -> str | None:
    """U's tree: `files` hashed from the work tree; None for an empty overlay."""
    if not files:
        return None
    with repo.temp_index() as env:
        # --remove: a file gone since the scan (a build's temporary file) is left out,
        # not a failed save; U holds what was there to hash.
        argv = ("update-index", "--add", "--remove", "-z", "--stdin")
        repo.git(*argv, stdin=nul_list(files), env=env)
        entries = indexfile.read_entries(env["GIT_INDEX_FILE"]) if repo.sha1() else None
        tree = graft.tree_of(repo, entries) if entries else None  # no write-tree process
        return tree or repo.git("write-tree", env=env).decode().strip()
