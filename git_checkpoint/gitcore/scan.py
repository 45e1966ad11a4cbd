"""One pass over the work tree: `git status --porcelain=v2` against an index.

With `GIT_INDEX_FILE` pointing at a copy of an index (mtime kept), one status run lists
every tracked path whose work-tree state differs from that index and every untracked,
non-ignored path: what `add -u` and `ls-files -o` found in two scans. It stats what the
index stats and hashes only racily-clean entries, and uses core.fsmonitor when it is on.

The save path's scan; the hook's quick check runs the same command through spawn.py.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from .formats import STATUS_ARGV, Scan, parse_status
from .repo import Repo


def status_env(index: Path, *, read_only: bool) -> dict[str, str]:
    env = {"GIT_INDEX_FILE": str(index)}
    if read_only:  # never write the refreshed index back (a saved state stays as saved)
        env["GIT_OPTIONAL_LOCKS"] = "0"
    return env


def scan(repo: Repo, index: Path, *, read_only: bool = False) -> Scan:
    """One status run against `index` (a scratch copy: status may refresh it in place)."""
    env = status_env(index, read_only=read_only)
    proc = repo.run(list(STATUS_ARGV), env=env)
    return parse_status(proc.stdout).with_errors(proc.stderr)


def stage(repo: Repo, env: Mapping[str, str], paths: Sequence[str]) -> None:
    """`add -u` restricted to `paths` (tracked ones): hash what changed, drop what is gone,
    exactly as a whole `add -u` would treat them, without stat-ing the rest again.
    """
    if not paths:
        return
    data = b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in paths)
    proc = repo.run(
        ["add", "-u", "--pathspec-from-file=-", "--pathspec-file-nul"],
        stdin=data,
        env={**env, "GIT_LITERAL_PATHSPECS": "1"},
        check=False,
    )
    if proc.returncode != 0:
        # A pathspec git refuses before it touches the index ("beyond a symbolic link":
        # a tracked folder became a link): the whole `add -u` takes every case.
        repo.run(["add", "-u"], env=env)


# --- untracked.exclude without a second scan -------------------------------------------------

# Patterns git and fnmatch agree on when matched against one path component: no slash but
# a trailing one, no negation, no escapes, no brackets, no `**`.
_SIMPLE = r"^[A-Za-z0-9._?*-]+/?$"


def exclude_matcher(patterns: Sequence[str], ignore_case: bool) -> Callable[[str], bool] | None:
    """A test equal to git's for `ls-files -o --exclude=P…` over untracked paths, or None
    when a pattern is beyond the simple kind (then ask git).

    Command-line excludes come first in git's precedence, and a pattern without a slash
    matches a name at any depth; a directory that matches takes everything under it.
    """
    import fnmatch  # here: the hook path never matches excludes
    import re

    if ignore_case or any(not re.match(_SIMPLE, p) or "**" in p for p in patterns):
        return None
    dir_only = [p[:-1] for p in patterns if p.endswith("/")]
    anything = [p for p in patterns if not p.endswith("/")]
    folder_pats = dir_only + anything

    def excluded(path: str) -> bool:
        is_dir = path.endswith("/")
        parts = path.rstrip("/").split("/")
        folders = parts if is_dir else parts[:-1]
        for name in folders:
            if any(fnmatch.fnmatchcase(name, p) for p in folder_pats):
                return True
        return not is_dir and any(fnmatch.fnmatchcase(parts[-1], p) for p in anything)

    return excluded
