"""The domain errors, each bound to the exit code design.md §7 gives it.

Raised anywhere below the command line; mapped to one line on stderr and an exit code
in exactly one place, `entry.console.guarded`.
"""

from __future__ import annotations

import re

# git's words when a lock file of its own is in the way (index.lock, a ref's .lock).
_LOCKED = re.compile(r"Unable to create '([^']+\.lock)': File exists")


class CheckpointError(Exception):
    """Base of every error the tool reports to the user."""

    exit_code = 4


class UsageError(CheckpointError):
    """Bad usage or bad input: unknown checkpoint, bad config (exit 2)."""

    exit_code = 2


class Refused(CheckpointError):
    """Refused for safety: overlay over its limit, unsafe path, lock held (exit 3)."""

    exit_code = 3


class GitFailed(CheckpointError):
    """git itself failed underneath us (exit 4); carries argv, return code and stderr."""

    exit_code = 4

    def __init__(self, argv: list[str], returncode: int, stderr: str) -> None:
        self.argv = argv
        self.returncode = returncode
        self.stderr = stderr
        first = stderr.strip().splitlines()[0] if stderr.strip() else f"exit {returncode}"
        locked = _LOCKED.search(stderr)
        if locked:  # held, or left by a git that was killed: say how to tell and what to do
            self.exit_code = Refused.exit_code
            super().__init__(
                f"git {' '.join(argv[:3])} found {locked[1]} in the way: another git command "
                "is running in this repository, or one was killed and left it. If none is "
                f"running, remove it (rm '{locked[1]}') and run this again"
            )
            return
        super().__init__(f"git {' '.join(argv[:3])} failed: {first}")
