"""File locks (flock) on files of ours: taken whole or not at all, released by closing
the descriptor, so a killed process never leaves one held.

One kind of lock for every use: the repository's checkpoint lock (taken early by the
launcher, or by the command itself), a worktree's run lock, and doctor's look at who
holds one. The holder's pid is written into the file for the messages that name it.
"""

from __future__ import annotations

import fcntl
import os
import time

TYPE_CHECKING = False  # (typing is not loaded on the hook path)
if TYPE_CHECKING:
    from collections.abc import Callable


class FileLock:
    """An flock held on `path` through the open descriptor `fd`."""

    __slots__ = ("fd", "path")

    def __init__(self, path: str, fd: int) -> None:
        self.path = path
        self.fd = fd

    @classmethod
    def try_take(cls, path: str) -> FileLock | None:
        """The lock if it is free now, else None (never waits)."""
        return cls.take(path, 0.0)

    @classmethod
    def take(
        cls, path: str, timeout: float, on_wait: Callable[[], None] | None = None
    ) -> FileLock | None:
        """The lock, waiting up to `timeout` seconds for its holder; None past that.
        `on_wait`: called once, when the lock is held and there is time to wait."""
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return cls(path, fd)
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    return None
                if on_wait is not None:
                    tell, on_wait = on_wait, None
                    tell()
                time.sleep(0.05)
            except BaseException:
                os.close(fd)
                raise

    def mark(self) -> None:
        """Write our pid into the file, for the messages that name the holder."""
        os.ftruncate(self.fd, 0)
        os.pwrite(self.fd, f"{os.getpid()}\n".encode(), 0)

    def release(self) -> None:
        """Close the descriptor: the flock goes with it (once no child holds it too)."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


def holder(path: str) -> str | None:
    """Who holds the lock on `path` right now: the pid it wrote ("" when it wrote
    none), or None when the lock is free or the file is not there."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    finally:
        os.close(fd)  # a shared lock of ours goes with it
    return None
