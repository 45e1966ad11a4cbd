"""The command server: one resident process per installation that has imported the
whole tool once and forks a worker for each command a client (entry/relay.py, or the
compiled entry/client.c) hands it. The worker takes the client's arguments,
environment, working directory, umask and standard streams, and runs the command as
the installed `git-checkpoint` or `git-checkpoint-hook` would; the client exits as the
worker exits. Nothing a command does stays in the server: each worker starts from the
state the imports left, and the server itself never reads a repository.

The fork is paid before a client comes: a spare worker, forked ahead, waits in
`accept` on the socket. The one that takes a client hands the connection to the
server (which forks the next spare and, if the worker dies, tells the client how) and
becomes that client's command.

The server lives in /tmp/git-checkpoint-UID (a folder only its user may enter), takes
only its own user (SO_PEERCRED) and its own installation (the identity the client
sends), refuses every request once a file it loaded changed on disk (an upgrade, an
edit of an editable install: that client runs its command itself and starts a new
server), and exits when idle for GIT_CHECKPOINT_SERVER_IDLE seconds (default 600).
"""

from __future__ import annotations

import array
import contextlib
import fcntl
import os
import select
import signal
import socket
import struct
import sys
import time

from ..core import rendezvous
from . import context, relay

IDLE_SECONDS = 600.0
REQUEST_SECONDS = 5.0  # how long a worker waits for the request of the client it took
REFUSALS = 3  # refused in a row, none served between: the server makes way
USAGE_FILE = "GIT_CHECKPOINT_USAGE_FILE"
# Not imported ahead: what only the commands that are not handed over use.
NOT_PRELOADED = ("__main__", "entry.mcp_server", "entry.mcp_calls")
_PACKAGE = __package__.rpartition(".")[0]
_HEADER = len(rendezvous.MAGIC) + 4
_MAX_REQUEST = 4 << 20
_INT = array.array("i").itemsize  # a descriptor, as SCM_RIGHTS carries it


class Request:
    """What a client asked: the command, and the process it would have run in."""

    __slots__ = ("args", "cwd", "env", "fds", "identity", "ignored", "role", "umask")

    def __init__(self, body: bytes, fds: list[int]) -> None:
        fields = body.split(b"\0")
        if len(fields) < 6:
            raise ValueError("a malformed request")
        ident, role, cwd, umask, ignored, count = fields[:6]
        n = int(count)
        self.identity = os.fsdecode(ident)
        self.role = role.decode()
        self.cwd = os.fsdecode(cwd)
        self.umask = int(umask, 8)
        self.ignored = [int(s) for s in ignored.split(b",") if s]
        self.args = [os.fsdecode(a) for a in fields[6 : 6 + n]]
        self.env = [e for e in fields[6 + n :] if b"=" in e[1:]]
        self.fds = fds
        if self.role not in rendezvous.ROLES or len(fds) != 3 or len(self.args) != n:
            raise ValueError("a malformed request")


def main() -> None:
    """`python -I -S -c … IDENTITY`, as entry/relay.py starts it."""
    ident = sys.argv[1] if len(sys.argv) > 1 else ""
    if ident != rendezvous.identity():
        sys.exit(2)  # started for another installation
    # Nothing of the command that started it: not its folder (which may go), not its
    # descriptors (a pipe it was given would never see its end while the server lives).
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))
    os.chdir("/")
    taken = Server(ident).serve()
    if taken is not None:  # in a worker
        work(*taken)


class Server:
    def __init__(self, ident: str) -> None:
        self.identity = ident
        self.workers: dict[int, socket.socket] = {}  # worker pid -> its client
        self.spare = 0  # the pid of the worker waiting in accept, 0 if none
        self.lost = 0  # spares in a row that died before taking a client
        self.gone: set[int] = set()  # children reaped before the server knew them as workers
        self.refused = 0  # requests refused since the last one served
        self.stale = False
        self.stopping = False  # SIGTERM (`git checkpoint server stop`)
        self.idle = _idle_seconds()

    def serve(self) -> tuple[socket.socket, Request] | None:
        """Keep a spare worker in accept until idle or stale. In a worker, return its
        client and request; in the server, None when it is time to exit."""
        if rendezvous.run_dir(create=True) is None:
            return None
        path, lock, log, broken = (
            str(rendezvous.server_file(suffix, self.identity))
            for suffix in (".sock", ".lock", ".log", ".broken")
        )
        self.lock = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(self.lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return None  # another server of this installation is up
        os.ftruncate(self.lock, 0)
        os.write(self.lock, b"%d\n" % os.getpid())  # for `git checkpoint server`
        _log_to(log)
        try:
            preload()
        except Exception:
            # The log says why first, then the mark: clients run their commands
            # themselves and do not start a server again for a minute (entry/relay.py).
            import traceback

            traceback.print_exc()
            sys.stderr.flush()
            with open(broken, "w"):
                pass
            raise SystemExit(1) from None
        with contextlib.suppress(FileNotFoundError):
            os.unlink(broken)
        self.changes = Changes()
        self.wake = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        # Spares tell the server which client they took, with its connection.
        self.control, self.spare_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda *_: setattr(self, "stopping", True))
        signal.set_wakeup_fd(self.wake[1])
        with _listening(path) as listener:
            taken = self.loop(listener)
            if taken is None:
                # No more accept: the spare leaves (or, if it just took a client, serves
                # it), and a client still in the queue hears the end and runs itself.
                with contextlib.suppress(OSError):
                    listener.shutdown(socket.SHUT_RDWR)
        if taken is None:
            self.end()
            with contextlib.suppress(OSError):
                if not os.path.getsize(log):  # (one that says something stays)
                    os.unlink(log)
            with contextlib.suppress(OSError):
                os.unlink(lock)  # while still held: the next server takes a new one
        return taken

    def loop(self, listener: socket.socket) -> tuple[socket.socket, Request] | None:
        last = time.monotonic()
        while not self.stale and not self.stopping:
            if not self.spare:
                taken = self.fork_spare(listener)
                if taken is not None:
                    return taken  # in the worker
            # A client's end is watched for its hang-up alone: the request it sent is
            # the worker's to read.
            watch = select.poll()
            watch.register(self.wake[0], select.POLLIN)
            watch.register(self.control, select.POLLIN)
            for conn in self.workers.values():
                watch.register(conn, select.POLLRDHUP)
            ready = {fd for fd, _ in watch.poll(min(5.0, self.idle) * 1000)}
            if self.wake[0] in ready:
                _drain(self.wake[0])
            # A worker tells the server it took a client before it does anything else:
            # what the socket holds is read before any worker is reaped.
            self.hand_over()
            self.reap()
            for conn in list(self.workers.values()):
                if conn.fileno() in ready:
                    self.client_gone(conn)
            if self.workers:  # (a refused request is no reason to stay)
                last = time.monotonic()
            elif time.monotonic() - last > self.idle:
                break
        return None

    def fork_spare(self, listener: socket.socket) -> tuple[socket.socket, Request] | None:
        pid = os.fork()
        if pid:
            self.spare = pid
            return None
        signal.set_wakeup_fd(-1)
        for signum in (*relay.FORWARDED, signal.SIGCHLD):
            signal.signal(signum, signal.SIG_DFL)
        _die_with_parent()
        _close_all([*self.wake, self.lock])
        for conn in [self.control, *self.workers.values()]:
            conn.close()
        return take(listener, self.spare_end, self.identity, self.changes)

    def hand_over(self) -> None:
        """A spare took a client: keep its connection (to tell the client how the
        worker ended, and to see the client go); the next spare is forked."""
        while True:
            try:
                data, ancillary, _flags, _addr = self.control.recvmsg(
                    16, socket.CMSG_SPACE(_INT), socket.MSG_DONTWAIT
                )
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return
            fds = _fds_of(ancillary)
            kind, pid = data[:1], int.from_bytes(data[1:5], "big")
            if pid == self.spare:
                self.spare, self.lost = 0, 0
            if kind in (b"S", b"N"):
                refused = self.workers.pop(pid, None)
                if refused is not None:
                    refused.close()
                self.gone.add(pid)  # (not a worker of a client: nothing to tell anyone)
                self.refused += 1
                # Stale, or asked again and again by clients it may not serve (another
                # context than the one it started in): make way for a server of theirs.
                if kind == b"S" or self.refused >= REFUSALS:
                    self.stale = True
            if kind == b"T" and fds and pid not in self.gone:
                self.workers[pid] = socket.socket(fileno=fds.pop(0))
            _close_all(fds)

    def reap(self) -> None:
        """Tell the clients of the workers that died how they died (a worker that
        exits tells its client itself, before its process is torn down)."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            self.report(pid, status)

    def report(self, pid: int, status: int) -> None:
        """A child ended: a worker's client hears how (it matters when it died of a
        signal); a spare that died counts towards giving up."""
        if pid == self.spare:
            self.spare = 0
            self.lost += 1
            if self.lost > 3:  # something kills them at once: stop forking
                self.stale = True
        conn = self.workers.pop(pid, None)
        if conn is None:
            # Never taken on as a worker: a later word of it is ignored, and its pid
            # (free for another process now) never signalled.
            self.gone.add(pid)
            if len(self.gone) > 1024:
                self.gone.clear()
            return
        self.refused = 0  # it served its client
        if os.WIFSIGNALED(status):
            _send(conn, b"S" + os.WTERMSIG(status).to_bytes(4, "big"))
        else:
            _send(conn, b"X" + os.waitstatus_to_exitcode(status).to_bytes(4, "big"))
        conn.close()

    def client_gone(self, conn: socket.socket) -> None:
        """A client closed its end before its worker ended: it was killed, so is the
        worker (as the command would have been, run in the client's own process)."""
        for pid, held in list(self.workers.items()):
            if held is conn:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)

    def end(self) -> None:
        """Idle, stale or stopped, the socket gone: no one new is taken (the next client
        starts a new server); the workers still running finish and their clients hear
        how."""
        while True:
            self.hand_over()
            try:
                pid, status = os.waitpid(-1, 0)
            except ChildProcessError:
                return
            self.hand_over()
            self.report(pid, status)


def take(
    listener: socket.socket, server: socket.socket, ident: str, changes: Changes
) -> tuple[socket.socket, Request]:
    """In a spare: wait for a client, hand its connection to the server at once (which
    forks the next spare: a client that stalls holds up no one but this worker), then
    read its request and refuse what this server must not run. Returns the client and
    its request; a refusal ends this process."""
    pid = os.getpid()
    while True:
        try:
            conn, _ = listener.accept()
        except InterruptedError:  # pragma: no cover - PEP 475 retries
            continue
        except OSError:
            os._exit(0)
        break
    fd = array.array("i", [conn.fileno()]).tobytes()
    server.sendmsg([b"T" + pid.to_bytes(4, "big")], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, fd)])
    listener.close()
    _die_with_parent(False)
    os.setpgid(0, 0)  # a group of its own, that the client's signals go to
    request = _request(conn, ident)
    if request is None or changes.seen():
        if request is not None:
            _close_all(request.fds)
        # The server first (it forgets this client), then the client: run it yourself.
        with contextlib.suppress(OSError):
            server.send((b"S" if changes.seen() else b"N") + pid.to_bytes(4, "big"))
        _send(conn, b"R")
        os._exit(0)
    server.close()
    _send(conn, b"P" + pid.to_bytes(4, "big"))
    return conn, request


def _request(conn: socket.socket, ident: str) -> Request | None:
    """The client's request, if this server may run it: from this user, this
    installation, and a process whose context (below) the worker has or takes on."""
    fds: list[int] = []
    try:
        cred = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12)
        peer, uid, _gid = struct.unpack("3i", cred)
        body, fds = _receive(conn, time.monotonic() + REQUEST_SECONDS)
        request = Request(body, fds)
    except (OSError, ValueError):
        _close_all(fds)
        return None
    if uid != os.getuid() or request.identity != ident or not context.adopt(peer):
        _close_all(fds)
        return None
    return request


def work(conn: socket.socket, request: Request) -> None:
    """In the worker: become the client's process, run its command, and tell the client
    how it ended before the process is torn down."""
    for signum in request.ignored:  # as the client has them (nohup, a background job)
        with contextlib.suppress(OSError, ValueError):
            signal.signal(signum, signal.SIG_IGN)
    for target, fd in enumerate(request.fds):
        os.dup2(fd, target)
    _close_all(request.fds)
    os.umask(request.umask)
    os.environ.clear()
    for entry in request.env:
        name, _, value = entry.partition(b"=")
        os.environb[name] = value
    time.tzset()  # the client's TZ: the dates of the commits it writes
    try:
        os.chdir(request.cwd)
    except OSError as exc:
        os.write(2, f"git-checkpoint: cannot enter {request.cwd}: {exc.strerror}\n".encode())
        _report(conn, 4)
        os._exit(4)
    _fresh_streams()
    _started()
    relay.SERVING = True
    relay.REPORT = lambda code: _report(conn, code)
    from . import hook, launch

    sys.argv = [f"git-checkpoint{'-hook' if request.role == 'hook' else ''}", *request.args]
    # A Ctrl-C before the command sets its own handling: as in a launcher of its own
    # (until here, with the client's streams not yet in place, it ends the worker by
    # the signal, and the server tells the client so).
    if request.role == "cli" and signal.SIGINT not in request.ignored:
        signal.signal(signal.SIGINT, launch.interrupted_early)
    try:
        (hook.main if request.role == "hook" else launch.main)()  # exits through relay
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    except KeyboardInterrupt:  # as Python ends a process it escapes, less the traceback
        relay.flush_streams()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)  # the server tells the client
        code = 130
    relay.exit_process(code)


def _report(conn: socket.socket, code: int) -> None:
    """The worker's last act: every file it has closed, as at a process's exit (the
    client's streams, whose reader sees their end now; the checkpoint lock, free when
    the client's caller goes on), then its exit code sent. The command is over: a
    Ctrl-C now changes nothing (in a process of its own, it would find it gone)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    relay.flush_streams()
    os.closerange(0, conn.fileno())
    os.closerange(conn.fileno() + 1, os.sysconf("SC_OPEN_MAX"))
    _usage()
    _send(conn, b"X" + (code & 0xFF).to_bytes(4, "big"))


def _usage() -> None:
    """With GIT_CHECKPOINT_USAGE_FILE set (by a benchmark, say), add to that file what
    the command cost in this worker, where the client cannot see it: the CPU time of
    the worker and of the children it waited for (ms), and the largest resident set of
    either (KiB), as wait4 reports a process of its own."""
    target = os.environ.get(USAGE_FILE)
    if not target:
        return
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu_ms = (own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime) * 1000
    rss_kb = max(own.ru_maxrss, children.ru_maxrss)
    with contextlib.suppress(OSError):
        fd = os.open(target, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, f"{cpu_ms:.3f} {rss_kb}\n".encode())
        finally:
            os.close(fd)


def _started() -> None:
    """What a module took at import as the process's start is the command's start: the
    quick check holds as racy any file touched within a second before it (a server's
    import time would make every file written since look racy, and the quick check
    never trust the state a save recorded)."""
    from ..fast import quickstate

    quickstate.STARTED_NS = time.time_ns()


def _fresh_streams() -> None:
    """stdin, stdout and stderr on the client's descriptors, buffered as Python buffers
    them for a process of its own (stdout by line on a terminal only)."""
    encoding = getattr(sys.__stdout__, "encoding", None) or "utf-8"
    errors = getattr(sys.__stdout__, "errors", None) or "strict"
    by_line = 1 if os.isatty(1) else -1
    streams = (
        open(0, encoding=encoding, errors=errors, closefd=False),  # noqa: SIM115
        open(1, "w", by_line, encoding=encoding, errors=errors, closefd=False),  # noqa: SIM115
        open(2, "w", 1, encoding=encoding, errors="backslashreplace", closefd=False),  # noqa: SIM115
    )
    sys.stdin, sys.stdout, sys.stderr = streams
    for name, stream in zip(("__stdin__", "__stdout__", "__stderr__"), streams, strict=True):
        setattr(sys, name, stream)  # what Python restores them to, as in a process of its own


def preload() -> None:
    """Import the tool (every module that a command handed over may load, lazily or
    not), build the secret scanner (detect-secrets' detectors and their patterns) and
    load pygit2 for the workers' object reads: the worker's start is a fork."""
    import gc
    import pkgutil
    from importlib import import_module

    package = import_module(_PACKAGE)
    skip = {f"{_PACKAGE}.{name}" for name in NOT_PRELOADED}
    for found in pkgutil.walk_packages(package.__path__, f"{_PACKAGE}."):
        if found.name not in skip:
            import_module(found.name)
    try:
        from ..save.secrets import _engine, text_secrets

        _engine().warm()
        text_secrets("password = 'Xk29fQ8rLm3pVt7sZc1nBw4y'")
    except Exception:  # a broken detect-secrets: the command says so, not the server
        pass
    from ..gitcore import inprocess

    inprocess.enable()  # the workers read objects through libgit2, loaded here once
    # What the imports made is kept out of the collector's sight: a collection in a
    # worker would otherwise write to (and so copy) every page of the server's objects.
    gc.collect()
    gc.freeze()


class Changes:
    """Whether a file the server loaded changed since: inotify on the folders of every
    loaded module (one read to ask), else their files' stat."""

    _EVENTS = 0x2 | 0x4 | 0x80 | 0x40 | 0x100 | 0x200 | 0x400 | 0x800 | 0x8
    # IN_MODIFY IN_ATTRIB IN_MOVED_TO IN_MOVED_FROM IN_CREATE IN_DELETE IN_DELETE_SELF
    # IN_MOVE_SELF IN_CLOSE_WRITE

    def __init__(self) -> None:
        self.files = _loaded_files()
        self.stamps = _stamps(self.files)
        self.fd = self._watch({os.path.dirname(f) for f in self.files})
        self.changed = False

    def _watch(self, folders: set[str]) -> int:
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            fd = int(libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC))
            if fd < 0:
                return -1
            for folder in sorted(folders):
                if libc.inotify_add_watch(fd, os.fsencode(folder), self._EVENTS) < 0:
                    os.close(fd)
                    return -1
            return fd
        except (OSError, AttributeError):
            return -1

    def seen(self) -> bool:
        if self.changed:
            return True
        if self.fd >= 0:
            try:
                self.changed = bool(os.read(self.fd, 4096))
            except BlockingIOError:
                return False
            except OSError:
                self.fd = -1
        if self.fd < 0:
            self.changed = _stamps(self.files) != self.stamps
        return self.changed


def _loaded_files() -> list[str]:
    files = []
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if isinstance(path, str) and os.path.isabs(path):
            files.append(path)
    return files


def _stamps(files: list[str]) -> list[tuple[int, int]]:
    stamps = []
    for path in files:
        try:
            st = os.stat(path)
        except OSError:
            stamps.append((-1, -1))
            continue
        stamps.append((st.st_mtime_ns, st.st_size))
    return stamps


def _die_with_parent(on: bool = True) -> None:
    """A spare dies with the server (it would wait in accept for ever); a worker, once
    it has a client, lives on to finish its command whatever happens to the server."""
    try:
        import ctypes

        ctypes.CDLL(None).prctl(1, signal.SIGKILL if on else 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if on and os.getppid() == 1:
        os._exit(0)


class _listening:
    """The socket, bound while the server listens and removed after (by the server,
    not by a worker, and only if it is still this server's)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.owner = os.getpid()

    def __enter__(self) -> socket.socket:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(self.path)  # a server that died left it (we hold the lock)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(self.path)
        listener.listen(64)
        self.inode = os.stat(self.path).st_ino
        return listener

    def __exit__(self, *exc: object) -> None:
        if os.getpid() != self.owner:
            return
        try:
            if os.stat(self.path).st_ino == self.inode:
                os.unlink(self.path)
        except OSError:
            pass


def _receive(conn: socket.socket, deadline: float) -> tuple[bytes, list[int]]:
    """The request's body and the descriptors sent with it, read before `deadline`."""
    received: list[int] = []
    try:
        conn.settimeout(max(0.001, deadline - time.monotonic()))
        data, ancillary, _flags, _addr = conn.recvmsg(65536, socket.CMSG_SPACE(3 * _INT))
        received = _fds_of(ancillary)
        if len(data) < _HEADER or data[: len(rendezvous.MAGIC)] != rendezvous.MAGIC:
            raise ValueError("not a request")
        size = int.from_bytes(data[len(rendezvous.MAGIC) : _HEADER], "big")
        if size > _MAX_REQUEST:
            raise ValueError("a request too large")
        body = bytearray(data[_HEADER:])
        while len(body) < size:
            conn.settimeout(max(0.001, deadline - time.monotonic()))
            chunk = conn.recv(min(65536, size - len(body)))
            if not chunk:
                raise ValueError("a request cut short")
            body += chunk
        conn.settimeout(None)
    except BaseException:
        _close_all(received)
        raise
    return bytes(body), received


def _fds_of(ancillary: list[tuple[int, int, bytes]]) -> list[int]:
    fds = array.array("i")
    for level, kind, payload in ancillary:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(payload[: len(payload) - len(payload) % fds.itemsize])
    return list(fds)


def _send(conn: socket.socket, data: bytes) -> None:
    with contextlib.suppress(OSError):  # the client is gone: nobody to tell
        conn.sendall(data)


def _close_all(fds: list[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)


def _drain(fd: int) -> None:
    try:
        while os.read(fd, 512):
            pass
    except OSError:
        pass


def _log_to(path: str) -> None:
    """The server's stderr (what goes wrong in it before a worker takes over)."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    except OSError:
        return
    os.dup2(fd, 2)
    os.close(fd)


def _idle_seconds() -> float:
    try:
        return float(os.environ.get(rendezvous.IDLE, IDLE_SECONDS))
    except ValueError:
        return IDLE_SECONDS
