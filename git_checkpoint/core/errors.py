"""The domain errors, each bound to the exit code design.md §7 gives it.

Raised anywhere below the command line; mapped to one line on stderr and an exit code
in exactly one place, `entry.console.guarded`.
"""

from __future__ import annotations


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
        super().__init__(f"git {' '.join(argv[:3])} failed: {first}")
