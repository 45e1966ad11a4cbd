"""`git checkpoint server [status|stop]`: this installation's command server
(core/rendezvous.py, entry/server.py): whether it runs, where, and stopping it."""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import time
from dataclasses import dataclass

from ..core import rendezvous


@dataclass(frozen=True)
class ServerState:
    """The command server of this installation, as its files show it."""

    enabled: bool  # not turned off by GIT_CHECKPOINT_SERVER=off
    running: bool
    pid: int | None
    socket: str | None  # None: no folder of this user's alone to put it in
    log: str | None
    stopped: bool = False  # `stop` ended it
    stopping: bool = False  # `stop` asked; it ends when the commands it runs have ended
    broken: bool = False  # it could not start here lately (its log says why)

    def lines(self) -> list[str]:
        if self.stopping:
            return [
                f"command server stopping (pid {self.pid}): it takes no new command and "
                "ends when those it runs have ended"
            ]
        if self.stopped:
            return [f"command server stopped (pid {self.pid})"]
        if not self.enabled:
            head = "command server: off (GIT_CHECKPOINT_SERVER=off)"
        elif self.running:
            head = f"command server: running (pid {self.pid or 'unknown'})"
        elif self.broken:
            head = "command server: could not start a minute ago or less (its log says why)"
        else:
            head = "command server: not running (the next save, restore or hook starts it)"
        out = [head]
        if self.socket is None:
            out.append(f"  no folder of this user's alone at /tmp/git-checkpoint-{os.getuid()}")
        else:
            out.append(f"  socket: {self.socket}")
        if self.log is not None and os.path.getsize(self.log):
            out.append(f"  log: {self.log}")
        return out


def state() -> ServerState:
    path, lock, log, broken_mark = (
        rendezvous.server_file(suffix) for suffix in (".sock", ".lock", ".log", ".broken")
    )
    pid = _holder(lock) if lock is not None else None
    try:
        mark = os.stat(broken_mark) if broken_mark is not None else None
    except OSError:
        mark = None
    broken = mark is not None and time.time() - mark.st_mtime < 60
    return ServerState(
        enabled=os.environ.get(rendezvous.OFF) != "off",
        running=pid is not None,
        pid=pid,
        socket=path,
        log=log if log is not None and os.path.exists(log) else None,
        broken=broken and pid is None,
    )


def stop() -> ServerState:
    """End the server (SIGTERM; its spare worker goes with it, commands it is running
    finish), and wait until it is gone."""
    now = state()
    if not now.pid or not _is_server(now.pid):  # not running, or not known for sure
        return now
    with contextlib.suppress(ProcessLookupError):
        os.kill(now.pid, signal.SIGTERM)
    deadline = time.monotonic() + 5
    lock = rendezvous.server_file(".lock")
    while lock is not None and _holder(lock) is not None and time.monotonic() < deadline:
        time.sleep(0.02)
    ended = lock is None or _holder(lock) is None
    return ServerState(
        enabled=now.enabled,
        running=not ended,
        pid=now.pid,
        socket=now.socket,
        log=now.log,
        stopped=ended,
        stopping=not ended,
    )


def _is_server(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return b"git_checkpoint.entry.server" in fh.read()
    except FileNotFoundError:
        return False
    except OSError:  # no /proc here: the lock's holder wrote its pid
        return True


def _holder(lock: str) -> int | None:
    """The pid of the server holding `lock`, None when no process holds it."""
    try:
        fd = os.open(lock, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            return int(text) if text.isdigit() and int(text) > 1 else 0  # 0: pid unknown
        return None
    finally:
        os.close(fd)
