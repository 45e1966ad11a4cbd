"""Modules imported on a thread of their own while the main thread waits on git: a
command that will need them (the hook's save path, the secret scanner) then goes on
without waiting for the import after git is done. `_thread`, not `threading`: the hook
path does not load threading otherwise."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_LOADING: list[Any] = []  # the locks of the threads still importing


def start(*modules: str) -> None:
    """Import `modules` (full dotted names) on a thread of their own. A failure is left
    to the caller's own import, which says what failed."""
    import _thread

    done = _thread.allocate_lock()
    done.acquire()

    def load() -> None:
        try:
            for name in modules:
                __import__(name)
        except BaseException:
            pass
        finally:
            done.release()

    _LOADING.append(done)
    _thread.start_new_thread(load, ())


def wait() -> None:
    """Wait for the imports `start` began, so that no two threads import at once."""
    while _LOADING:
        lock = _LOADING.pop()
        lock.acquire()
        lock.release()
