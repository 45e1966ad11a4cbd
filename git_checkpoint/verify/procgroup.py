"""Children in a process group of their own (the run loop's agent, each verifier) and how
they end: the whole group is signalled and waited for until none of it is left, so
nothing they started still writes to the workspace once we go on. The agent runs as a
shell runs a job: given the terminal while it runs, if we have it, so that reading the
terminal, Ctrl-C and Ctrl-Z work as they would without us.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import os
import signal
import subprocess
import sys
import termios
import time
from collections.abc import Iterator

from ..core.interrupts import held

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    from typing import IO, Any

KILL_GRACE = 2.0  # seconds a group has after a polite signal, before the next one
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_PR_SET_CHILD_SUBREAPER = 36


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP, taken as a Ctrl-C is: the children stop, the log says where."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.exit_code = 128 + signum  # 143 for SIGTERM, 129 for SIGHUP; a Ctrl-C is 130


def stop_signal(exc: BaseException) -> int:
    """The signal a KeyboardInterrupt stands for: SIGINT unless it is a `Stopped`."""
    return exc.signum if isinstance(exc, Stopped) else signal.SIGINT


# A SIGTERM or SIGHUP that came while a job was starting (_starting).
_HELD: list[int] = []
_HOLDING = False


def _stop(signum: int, frame: object) -> None:
    if _HOLDING:
        _HELD.append(signum)
        return
    ignore_further_stops()
    raise Stopped(signum)


@contextlib.contextmanager
def _starting() -> Iterator[None]:
    """A Ctrl-C, SIGTERM or SIGHUP that comes while a job starts is raised once its Popen
    is in hand, to stop its group: raised inside Popen, it left the job running unknown
    (a loaded machine: a Ctrl-C typed at the agent's prompt before run had its Popen)."""
    global _HOLDING
    _HELD.clear()
    _HOLDING = True
    try:
        with held():
            yield
    finally:
        _HOLDING = False
    if _HELD:
        ignore_further_stops()
        raise Stopped(_HELD[0])


def _ignore(signum: int, frame: object) -> None:
    pass


def ignore_further_stops() -> None:
    """On the way out: one more Ctrl-C, SIGTERM or SIGHUP must not cut the clean-up short
    (a handler of our own, not SIG_IGN, so that children still start with the default).
    Only inside `interruptible`: a program calling the API keeps its own handlers."""
    if not _OWN_SIGNALS.get():
        return
    for sig in STOP_SIGNALS:
        with contextlib.suppress(ValueError):  # not the main thread
            signal.signal(sig, _ignore)


# Whether the code running owns the process's signals (a command line, not a program
# that calls the Python API): only then does a stop make us ignore the next ones.
_OWN_SIGNALS: contextvars.ContextVar[bool] = contextvars.ContextVar("own_signals", default=False)


@contextlib.contextmanager
def interruptible() -> Iterator[None]:
    """SIGTERM and SIGHUP stop us the way Ctrl-C does, so no verifier or agent outlives us."""
    previous = {sig: signal.signal(sig, _stop) for sig in (signal.SIGTERM, signal.SIGHUP)}
    owned = _OWN_SIGNALS.set(True)
    try:
        yield
    finally:
        _OWN_SIGNALS.reset(owned)
        for sig, handler in previous.items():
            if signal.getsignal(sig) is _stop:  # on the way out, they stay ignored
                signal.signal(sig, handler)


@functools.cache
def adopt_orphans() -> None:
    """Linux: what our children leave behind becomes ours, not init's, so that a group's
    members that have exited are reaped here at once (a zombie still counts as one of its
    group, and init may take seconds to reap it). Not for a process that lives on (the
    MCP server): what it adopted outside a group it stops (a `git gc --auto` that
    detached) would stay a zombie until it exits; its callers pass adopt=False."""
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def stop_group(
    proc: subprocess.Popen[Any], first: int = signal.SIGTERM, grace: float = KILL_GRACE
) -> bool:
    """Stop the process group `proc` leads: `first`, then SIGTERM, then SIGKILL, each once
    the one before had `grace` seconds; return once none of the group is left (or 5 s
    after the SIGKILL: only a process stuck in the kernel can be left then). A SIGINT or
    SIGHUP waits for the leader only: what it started may ignore them, as the background
    jobs of a shell script do. True when any of the group was still there."""
    found = False
    for sig in dict.fromkeys((first, signal.SIGTERM, signal.SIGKILL)):
        if not _signal_group(proc, sig):
            return found
        found = True
        if sig in (signal.SIGINT, signal.SIGHUP):
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=grace)
        elif _gone(proc, 5.0 if sig == signal.SIGKILL else grace):
            return True
    return True


def _signal_group(proc: subprocess.Popen[Any], sig: int) -> bool:
    """`sig` to the whole group (SIGCONT after it: a stopped process acts on it only once
    continued); False when none of the group is left to signal."""
    if proc.poll() is not None:
        _reap(proc.pid)  # exited members that became ours are not there to signal
    try:
        os.killpg(proc.pid, sig)
        if sig != signal.SIGKILL:
            os.killpg(proc.pid, signal.SIGCONT)
    except (ProcessLookupError, PermissionError):  # gone, or not ours to signal (setuid)
        return False
    return True


def _gone(proc: subprocess.Popen[Any], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while True:
        if proc.poll() is not None:
            _reap(proc.pid)
            try:
                os.killpg(proc.pid, 0)
            except (ProcessLookupError, PermissionError):
                return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)


def _reap(pgid: int) -> None:
    """Wait for the members of group `pgid` that are our children now (adopt_orphans)."""
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-pgid, os.WNOHANG)[0]:
            pass


# --- the agent as a job ------------------------------------------------------------------


def run_job(
    argv: list[str],
    *,
    cwd: str,
    env: dict[str, str],
    stdout: IO[Any] | None = None,
    adopt: bool = True,
) -> tuple[int, bool]:
    """Run `argv` in a process group of its own, given the terminal while it runs if we
    are the terminal's foreground. Returns its exit code (Popen's: -N for signal N) and
    whether it left processes running (stopped since, with SIGTERM). A KeyboardInterrupt
    (Ctrl-C, SIGTERM, SIGHUP) passes its signal on to the whole group, then SIGTERM, then
    SIGKILL, and is raised again once none of the group is left; so is a Ctrl-C typed at
    the job that ends it, as a shell running a script takes it. OSError: it cannot start.
    `adopt`: become the reaper of what it leaves (adopt_orphans)."""
    if adopt:
        adopt_orphans()
    terminal = _Terminal()
    proc: subprocess.Popen[Any] | None = None
    killed = True  # by a signal: what it changed on the terminal (raw mode) stays so
    try:
        with _starting():
            proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=stdout, process_group=0)
        terminal.give(proc.pid)
        code = _wait(proc, terminal)
        if code == -signal.SIGINT and terminal.had_it:
            raise KeyboardInterrupt
        killed = code < 0
    except KeyboardInterrupt as exc:
        ignore_further_stops()
        if proc is not None:
            stop_group(proc, first=stop_signal(exc), grace=5.0)  # the terminal still its own
        raise
    finally:
        if proc is not None:  # (OSError: it could not start, the terminal never given)
            terminal.take_back(restore_modes=killed)
        terminal.close()
    return code, stop_group(proc)


def _wait(proc: subprocess.Popen[Any], terminal: _Terminal) -> int:
    while True:
        _, status = os.waitpid(proc.pid, os.WUNTRACED)
        if not os.WIFSTOPPED(status):
            proc.returncode = os.waitstatus_to_exitcode(status)
            return proc.returncode
        sig = os.WSTOPSIG(status)
        if sig in (signal.SIGTSTP, signal.SIGTTIN, signal.SIGTTOU):  # the terminal's stops
            _stop_with(proc.pid, sig, terminal)


def _stop_with(pgid: int, sig: int, terminal: _Terminal) -> None:
    """The job stopped (Ctrl-Z, or it used the terminal from the background): stop our own
    group too, so that the shell sees one stopped job, as it would without us; continued,
    continue the job, with the terminal if we are its foreground again."""
    if sig != signal.SIGTSTP and terminal.foreground() == pgid:
        _signal(pgid, signal.SIGCONT)  # it read before we could give it the terminal
        return
    terminal.take_back()
    if not _stop_ourselves(sig) and sig != signal.SIGTSTP:
        # Our group is orphaned: no shell will continue it. In it the job would have had
        # EIO; the kernel's answer for a stopped job left so is SIGHUP, then SIGCONT.
        _signal(pgid, signal.SIGHUP)
    terminal.give(pgid)
    _signal(pgid, signal.SIGCONT)


def _signal(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # gone meanwhile
        os.killpg(pgid, sig)


def _stop_ourselves(sig: int) -> bool:
    """Stop our process group with `sig`; True once continued, False when the kernel did
    not stop it (an orphaned group: a stop from the terminal is dropped there)."""
    continued: list[int] = []
    previous = signal.signal(signal.SIGCONT, lambda signum, frame: continued.append(signum))
    try:
        os.killpg(os.getpgrp(), sig)  # returns once continued
        _let_handlers_run()
    finally:
        signal.signal(signal.SIGCONT, previous)
    return bool(continued)


def _let_handlers_run() -> None:
    """Python runs signal handlers between bytecodes; a call is such a point."""


@contextlib.contextmanager
def _blocked(sig: int) -> Iterator[None]:
    signal.pthread_sigmask(signal.SIG_BLOCK, {sig})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {sig})


class _Terminal:
    """Our controlling terminal, if we have one: given to the job while we are its
    foreground, taken back (with SIGTTOU blocked, as shells do) when the job is done."""

    def __init__(self) -> None:
        try:
            self.fd = os.open("/dev/tty", os.O_RDWR | os.O_NOCTTY | os.O_CLOEXEC)
        except OSError:
            self.fd = -1
        self.given_to = 0
        self.had_it = False  # the job was given the terminal at some point
        self.modes: list[Any] | None = None

    def foreground(self) -> int:
        try:
            return os.tcgetpgrp(self.fd) if self.fd >= 0 else -1
        except OSError:
            return -1

    def give(self, pgid: int) -> None:
        """The terminal to group `pgid`, if it is ours to give."""
        if self.fd < 0 or self.foreground() != os.getpgrp():
            return
        with contextlib.suppress(termios.error):
            self.modes = termios.tcgetattr(self.fd)
        try:
            os.tcsetpgrp(self.fd, pgid)
        except OSError:  # the job is gone already
            return
        self.given_to, self.had_it = pgid, True

    def take_back(self, restore_modes: bool = False) -> None:
        """Back from the job, if it still has it; `restore_modes`: the terminal's modes as
        they were before (a job killed in raw mode does not put them back)."""
        if not self.given_to or self.foreground() != self.given_to:
            return
        self.given_to = 0
        with _blocked(signal.SIGTTOU), contextlib.suppress(OSError, termios.error):
            os.tcsetpgrp(self.fd, os.getpgrp())
            if restore_modes and self.modes is not None:
                termios.tcsetattr(self.fd, termios.TCSADRAIN, self.modes)

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
