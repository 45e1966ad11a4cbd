"""Ctrl-C, once: the first raises KeyboardInterrupt, the ones after it wait for its way
out (children waited for, scratch folders removed, the lock released), so a second
Ctrl-C leaves nothing half undone and prints no traceback.

`held()` holds a Ctrl-C back while children start, until every one of them is known.
`RestoreInterrupted` is what a Ctrl-C becomes once a restore has begun to change the
work tree: the command line then says how to finish or undo it.
"""

from __future__ import annotations

import _thread
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from types import FrameType

_INTERRUPTED = False  # a Ctrl-C is on its way out
_STARTING = 0  # inside held() (how deep): a Ctrl-C waits until the block ends
_PENDING = False  # a Ctrl-C that came meanwhile
_MAIN_THREAD = 0  # the thread that set the handler (Python's main thread)


class RestoreInterrupted(KeyboardInterrupt):
    """A Ctrl-C (or SIGTERM, SIGHUP) that stopped a restore after its journal was
    written: `target` names what it was restoring; the exit code is the signal's."""

    def __init__(self, target: str, exit_code: int) -> None:
        super().__init__(target)
        self.target = target
        self.exit_code = exit_code


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    global _INTERRUPTED, _PENDING
    if _INTERRUPTED:
        return  # the first is on its way out: what it cleans up must not be cut short
    if _STARTING:
        _PENDING = True  # raised once held() ends, every child on its list
        return
    if _cannot_raise_in(frame):
        _again_soon()
        return
    _INTERRUPTED = True
    raise KeyboardInterrupt


def _cannot_raise_in(frame: FrameType | None) -> bool:
    """Whether a finalizer (Popen.__del__, run wherever the last reference goes) is
    running: a KeyboardInterrupt cannot leave one (Python prints a traceback, carries on,
    and the Ctrl-C is lost, the ones after it ignored as the first on its way out). Or
    the import system: raised there, it can leave the import lock held, and the next
    import, on any thread, waits for it for ever."""
    while frame is not None:
        code = frame.f_code
        if code.co_name in ("__del__", "_unraisable") or code.co_filename.startswith(
            "<frozen importlib"
        ):
            return True
        frame = frame.f_back
    return False


def _again_soon() -> None:
    """The Ctrl-C sent again in a millisecond, from a thread, to the main thread: as a
    signal, it waits while the main thread blocks SIGINT (the quick check, starting
    children). Builtin modules only, loaded with the interpreter: this may run in the
    middle of an import (of `threading`, say)."""
    import time

    if TYPE_CHECKING:
        import signal as _signal
    else:
        import _signal

    def again() -> None:
        time.sleep(0.001)
        _signal.pthread_kill(_MAIN_THREAD, _signal.SIGINT)

    _thread.start_new_thread(again, ())


def _unraisable(unraisable: sys.UnraisableHookArgs) -> None:
    """A Ctrl-C raised in a finalizer that _cannot_raise_in does not know (a weakref
    callback): no traceback, and it comes again."""
    global _INTERRUPTED
    if unraisable.exc_type is KeyboardInterrupt and _INTERRUPTED:
        _INTERRUPTED = False
        _again_soon()
        return
    sys.__unraisablehook__(unraisable)


def interrupt_once() -> None:
    """From here on, a Ctrl-C raises KeyboardInterrupt once (see above). A handler of our
    own, not SIG_IGN, so that git children get the default back when they start. The
    launcher sets it first thing; the error boundary on every path (main thread only)."""
    if TYPE_CHECKING:
        import signal as _signal
    else:
        import _signal  # (the hook path: `signal` loads enum)

    global _MAIN_THREAD
    if _signal.getsignal(_signal.SIGINT) is not _on_sigint:
        try:
            _signal.signal(_signal.SIGINT, _on_sigint)
        except ValueError:  # not the main thread: Python's own handler stays
            return
        _MAIN_THREAD = _thread.get_ident()
        sys.unraisablehook = _unraisable


class held:
    """A Ctrl-C that comes inside the block is raised as the block ends (the outermost,
    when they nest), whatever else the block raised: what it started is in the caller's
    hands by then, to wait for or stop. On the thread that runs the handler; on any
    other (where no Ctrl-C is raised) it does nothing."""

    def __enter__(self) -> None:
        global _STARTING
        self.here = _thread.get_ident() == _MAIN_THREAD
        if self.here:
            _STARTING += 1

    def __exit__(self, *exc_info: object) -> None:
        global _STARTING, _PENDING, _INTERRUPTED
        if not self.here:
            return
        _STARTING -= 1
        if _PENDING and not _STARTING:
            _PENDING, _INTERRUPTED = False, True
            raise KeyboardInterrupt


def through_ctrl_c(step: Callable[[], None]) -> None:
    """Run `step` (a clean-up that must not stop half way); if a Ctrl-C cuts it short,
    run it again to its end (the Ctrl-Cs after the first raise nothing), then raise."""
    try:
        step()
    except KeyboardInterrupt:
        step()
        raise
