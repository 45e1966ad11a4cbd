"""The command server's client half: hand this process's command to a resident server
of the same installation, which forks a worker with the whole tool already imported,
and exit as that worker exits. Python's start and the tool's imports (most of a save's
time on a small project) are then paid once per server, not once per command.

The worker runs the command as this process would: with its arguments, environment,
working directory, umask, and its stdin, stdout and stderr themselves (passed over the
socket). A signal this process gets (Ctrl-C, SIGTERM, SIGHUP) goes on to the worker and
its children; if this process dies, the server kills the worker. The exit is the
worker's: its code, or the signal that ended it.

When there is no server (or it answers that its code changed under it, or the folder
it lives in is not this user's alone), `forward` starts one for the next command and
returns None: the command runs here, as it always did. `GIT_CHECKPOINT_SERVER=off`
turns the server off. core/rendezvous.py has the wire format; entry/server.py is the
other half; entry/client.c the same client in C, which install.sh builds so that a
command does not even start Python.

Standard library only, and only its C parts (`_socket`, not `socket`): this runs on
every agent tool call.
"""

from __future__ import annotations

import os
import sys
import time

from ..core.rendezvous import MISSED, OFF, identity, request, run_dir, server_file, socket_path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from _socket import socket as _Socket
    from collections.abc import Callable
    from typing import NoReturn

FORWARDED = (2, 15, 1, 3)  # SIGINT, SIGTERM, SIGHUP, SIGQUIT
SERVING = False  # set in a worker: its command runs here, never forwarded again
# In a worker: tells its client the exit code (entry/server.py sets it).
REPORT: Callable[[int], None] | None = None


def forward(role: str, args: list[str]) -> int | None:
    """Run `args` in the server's worker and return how to exit (an exit code, or
    -signal); None when it must run here (a server is started for the next command)."""
    if SERVING or os.environ.get(OFF) == "off" or sys.platform != "linux":
        return None
    if not all(_open(fd) for fd in (0, 1, 2)):
        return None  # a closed stdin, stdout or stderr: run here, as it would
    ident = identity()
    missed = os.environ.pop(MISSED, None)  # the compiled client tried: "1" none, "refused"
    if missed == "refused":
        return None
    conn = None if missed else _connect(ident)
    if conn is None:
        start_server(ident)
        return None
    try:
        return _converse(conn, role, args, ident)
    finally:
        conn.close()


GONE = (
    "git-checkpoint: killed with the command server before it finished; "
    "`git checkpoint status` says where the workspace stands\n"
)


def _connect(ident: str) -> _Socket | None:
    import _socket

    path = socket_path(ident)
    if path is None:
        return None
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM | _socket.SOCK_CLOEXEC)
    try:
        conn.connect(path)
    except OSError:
        conn.close()
        return None
    return conn


def _converse(conn: _Socket, role: str, args: list[str], ident: str) -> int | None:
    import _socket
    import array

    relayed = _Signals()
    try:
        try:
            data = request(role, args, ident, relayed.ignored)
            fds = array.array("i", (0, 1, 2)).tobytes()
            sent = conn.sendmsg([data], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, fds)])
            if sent < len(data):
                conn.sendall(data[sent:])
            answer = _read(conn, 5)
        except OSError:
            answer = None
        if answer is None or answer[:1] != b"P":
            relayed.restore()  # (a signal that came meanwhile is this process's again)
            return None  # refused (its code changed, another installation): run it here
        relayed.worker = int.from_bytes(answer[1:], "big")
        relayed.send_pending()
        status = _read(conn, 5)
    finally:
        relayed.restore()
    if status is None:  # the worker ended with no word: killed with its server
        sys.stderr.write(GONE)
        return -9  # as the same command would end, killed in its own process
    number = int.from_bytes(status[1:], "big")
    return -number if status[:1] == b"S" else number


def _open(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return False
    return True


def _read(conn: _Socket, size: int) -> bytes | None:
    data = b""
    while len(data) < size:
        try:
            chunk = conn.recv(size - len(data))
        except InterruptedError:  # pragma: no cover - PEP 475 retries
            continue
        if not chunk:
            return None
        data += chunk
    return data


class _Signals:
    """While a worker runs the command: the signals this process gets go on to the
    worker's process group (its git children too, as a Ctrl-C, or a kill of a group as
    `timeout` sends, reaches the children of a command run here); Ctrl-Z stops the
    worker with this process, and `fg` continues both. A signal this process ignores is
    left ignored (the worker ignores it too). One that comes before the worker is known
    waits for it."""

    def __init__(self) -> None:
        import signal

        self.worker = 0
        self.pending: list[int] = []
        self.previous: dict[int, object] = {}
        self.ignored = [
            int(s) for s in (*FORWARDED, signal.SIGTSTP) if signal.getsignal(s) == signal.SIG_IGN
        ]
        for signum in FORWARDED:
            if signum not in self.ignored:
                self.previous[signum] = signal.signal(signum, self.forward)
        if signal.SIGTSTP not in self.ignored:
            self.previous[signal.SIGTSTP] = signal.signal(signal.SIGTSTP, self.stop)

    def forward(self, signum: int, frame: object = None) -> None:
        if not self.worker:
            self.pending.append(signum)
            return
        try:
            os.kill(-self.worker, signum)
        except OSError:
            try:
                os.kill(self.worker, signum)
            except OSError:
                pass

    def send_pending(self) -> None:
        import signal

        pending, self.pending = self.pending, []
        for signum in pending:
            if signum == signal.SIGTSTP:
                self.stop(signum, None)
            else:
                self.forward(signum)

    def stop(self, signum: int, frame: object) -> None:
        import signal

        if not self.worker:  # stopped with the worker, once it is known
            self.pending.append(signal.SIGTSTP)
            return
        self.forward(signal.SIGTSTP)
        signal.signal(signal.SIGTSTP, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTSTP)  # stopped here until `fg` (SIGCONT)
        signal.signal(signal.SIGTSTP, self.stop)
        self.forward(signal.SIGCONT)

    def restore(self) -> None:
        import signal

        for signum, handler in self.previous.items():
            signal.signal(signum, handler)  # type: ignore[arg-type]
        self.previous.clear()
        if self.pending and not self.worker:  # came before any worker: this process's
            pending, self.pending = self.pending, []
            for signum in pending:
                os.kill(os.getpid(), signum)


def flush_streams() -> None:
    """Flush stdout and stderr, whatever became of them (closed, gone, full)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass


def exit_like(how: int) -> NoReturn:
    """Exit as the worker did: with its code, or by the signal that killed it."""
    flush_streams()
    if how < 0:
        import signal

        try:
            signal.signal(-how, signal.SIG_DFL)
        except (OSError, ValueError):  # SIGKILL, SIGSTOP: theirs already
            pass
        os.kill(os.getpid(), -how)
        how = 128 - how
    os._exit(how)


def start_server(ident: str) -> None:
    """Start this installation's server in the background, in a session of its own, for
    the commands after this one (it exits by itself when it has been idle)."""
    where = run_dir(create=True)
    if where is None:
        return
    mark, log = server_file(".broken", ident), server_file(".log", ident)
    if mark is None or log is None:
        return
    try:  # a server that could not start here lately: its log says why; not again yet
        if time.time() - os.stat(mark).st_mtime < 60:
            return
    except OSError:
        pass
    # An import that fails before the server can say so itself is logged and marked here.
    code = (
        "import sys; sys.path[:] = " + repr(sys.path) + "\n"
        "try:\n from git_checkpoint.entry.server import main\n"
        "except BaseException:\n import traceback\n"
        " with open(" + repr(log) + ", 'a') as f: traceback.print_exc(file=f)\n"
        " open(" + repr(mark) + ", 'w').close(); raise SystemExit(1)\n"
        "main()"
    )
    # Python's site step only where this process had it: an editable install finds the
    # package through an import hook that a .pth file of site-packages installs.
    flags = ["-I", "-S"] if sys.flags.no_site else ["-I"]
    try:
        null = os.open(os.devnull, os.O_RDWR)
    except OSError:
        return
    try:
        os.posix_spawn(
            sys.executable,
            [sys.executable, *flags, "-c", code, ident],
            {k: v for k, v in os.environ.items() if k != MISSED},
            file_actions=[(os.POSIX_SPAWN_DUP2, null, fd) for fd in (0, 1, 2)],
            setsid=True,
        )
    except OSError:
        pass
    finally:
        os.close(null)


def exit_process(code: int) -> NoReturn:
    """Leave at once, the output flushed and every file closed by now (no interpreter
    teardown); in a server's worker, first tell the client how."""
    if REPORT is not None:
        REPORT(code)
    os._exit(code)
