"""What `git config --get-regexp` answered (Repo's read of formats.CONFIG_PATTERN), kept
for the next command while every input to git's answer is the same.

Every command reads git's configuration first, one `git config` process on the way of
all it does. Git's answer depends on the files it reads and on the environment: the
system file (where the git on PATH looks for it), the global ones, the repository's
`config` and `config.worktree`, `-c` options and GIT_CONFIG_* variables. The key is
the bytes of all those files (they are small) and those variables, so a change by any
means, in the same second or not, is a new key. A file that includes another (`[include]`,
`[includeIf]`) is never kept: what it includes is not in the key. Kept in
<common dir>/checkpoint/config-answer, one answer, written when git is asked and read
the same before and after.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from ..core.records import write_atomic
from .formats import sha1

FILE = "config-answer"
# What git's answer depends on besides the files (spawn.REPO_ENV's GIT_CONFIG is never
# passed to git).
_ENV = ("GIT_CONFIG_PARAMETERS", "GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_GLOBAL")
_ENV_PREFIXES = ("GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_")


def key(git_dir: Path, common_dir: Path) -> str | None:
    """What git's answer depends on, as one digest; None when a file includes another
    or cannot be read (git is asked every time)."""
    parts: list[bytes] = []
    for path in _files(git_dir, common_dir):
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except (FileNotFoundError, NotADirectoryError):
            data = b"\0absent"
        except OSError:
            return None
        if b"include" in data.lower():  # (a comment naming it too: asked every time)
            return None
        parts += [os.fsencode(path), data]
    for name, value in sorted(os.environ.items()):
        if name in _ENV or name.startswith(_ENV_PREFIXES):
            parts += [os.fsencode(name), os.fsencode(value)]
    digest = sha1()
    for part in parts:
        digest.update(b"%d:" % len(part) + part)
    return str(digest.hexdigest())


def _files(git_dir: Path, common_dir: Path) -> list[str]:
    """Every file git may read its configuration from, for this repository."""
    home = os.environ.get("HOME", "")
    xdg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    files = [
        os.environ.get("GIT_CONFIG_SYSTEM", "/etc/gitconfig"),
        os.environ.get("GIT_CONFIG_GLOBAL", os.path.join(home, ".gitconfig")),
        os.path.join(xdg, "git", "config"),
        os.path.join(common_dir, "config"),
        os.path.join(git_dir, "config.worktree"),
        os.path.join(common_dir, "config.worktree"),
    ]
    for folder in os.environ.get("PATH", "").split(os.pathsep):  # the git that runs:
        git = os.path.join(folder, "git")  # its system file under its prefix
        if folder and os.path.isfile(git) and os.access(git, os.X_OK):
            prefix = os.path.dirname(os.path.dirname(os.path.realpath(git)))
            files.append(os.path.join(prefix, "etc", "gitconfig"))
            break
    return files


def lookup(common_dir: Path, digest: str) -> list[tuple[str, str]] | None:
    """The answer kept under `digest`; None when another (or none) is kept."""
    try:
        with open(os.path.join(common_dir, "checkpoint", FILE), "rb") as fh:
            kept = json.loads(fh.read())
        if kept.get("key") == digest:
            return [(str(k), str(v)) for k, v in kept["pairs"]]
    except (OSError, ValueError, TypeError, KeyError, AttributeError):
        pass
    return None


def keep(common_dir: Path, digest: str, pairs: list[tuple[str, str]]) -> None:
    """Keep git's answer under `digest` (nothing said if it cannot be written)."""
    folder = os.path.join(common_dir, "checkpoint")
    try:
        if not os.path.isdir(folder):
            return  # (made by the first command that writes state: not here)
        data = json.dumps({"key": digest, "pairs": [list(p) for p in pairs]})
        write_atomic(Path(folder, FILE), data.encode(), durable=False)
    except (OSError, ValueError):
        pass
