"""The repository's checkpoint lock (`<common dir>/checkpoint/lock`): one writer of
checkpoints, refs, notes and the work tree at a time, across every worktree.

While it is held, the git children of the repository inherit its descriptor
(Repo.lock_fds): a git process still writing after we were killed keeps the lock until
it is done. Releasing it runs nothing else: git's auto maintenance is the caller's
(gitcore/maintenance.py).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from ..core.errors import CheckpointError, Refused
from ..core.lock import FileLock, holder
from ..gitcore.repo import Repo

NAME = "lock"


def lock_path(repo: Repo) -> str:
    return str(repo.state_dir() / NAME)


@contextlib.contextmanager
def locked(repo: Repo, timeout: float, *, adopt: FileLock | None = None) -> Iterator[None]:
    """Hold the repository's checkpoint lock; wait up to `timeout` seconds, then refuse.
    `adopt`: the lock taken already for this command (the launcher's early scan)."""
    path = lock_path(repo)

    def waiting() -> None:
        for tell in repo.on_lock_wait:
            tell(f"waiting for {_holding(repo, path)} to finish (at most {timeout:g}s)")

    lock = adopt or FileLock.take(path, timeout, waiting)
    if lock is None:
        pid = holder(path)
        who = f" (pid {pid})" if pid else ""
        raise Refused(f"another git-checkpoint is running{who}; waited {timeout:g}s for {path}")
    try:
        lock.mark()
        repo.lock_fds.append(lock.fd)
        try:
            yield
        finally:
            repo.lock_fds.remove(lock.fd)
    finally:
        lock.release()


def _holding(repo: Repo, path: str) -> str:
    """Who holds the lock, as a wait names it: a restore (its journal), or another."""
    pid = holder(path)
    who = f" (pid {pid})" if pid else ""
    from .journal import read_journal  # (only when waiting)

    try:
        journal = read_journal(repo)
    except CheckpointError:
        journal = None
    if journal is not None:
        return f"the restore of {journal.target_name}{who}"
    return f"another git-checkpoint{who}"


def lock_holder(repo: Repo) -> int | None:
    """The pid holding the checkpoint lock right now (-1 when it wrote none), or None
    when it is free (a journal left with a free lock is an interrupted restore, not one
    in progress)."""
    found = holder(lock_path(repo))
    if found is None:
        return None
    return int(found) if found.isdigit() else -1
