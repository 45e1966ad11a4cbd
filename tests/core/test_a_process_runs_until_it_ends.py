"""core.procs.running: a pid recorded by a restore's journal, a push or an index lock
names a running process while it runs, not once it has ended, and not while it is a
zombie waiting for its parent (it holds nothing more)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

from git_checkpoint.core.procs import running


def test_a_process_runs_then_is_a_zombie_then_is_gone() -> None:
    child = subprocess.Popen(["sleep", "30"])
    try:
        assert running(child.pid)
        child.kill()
        deadline = time.monotonic() + 10
        while running(child.pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert not running(child.pid)  # a zombie: not reaped yet
        assert os.path.exists(f"/proc/{child.pid}")
    finally:
        child.wait()
    assert not running(child.pid)


def test_this_process_and_another_users_run() -> None:
    assert running(os.getpid())
    assert running(1)  # (init: another user's under a non-root test run)


LEADER_EXITS = (
    "import ctypes, threading, time\n"
    "threading.Thread(target=time.sleep, args=(30,)).start()\n"
    "ctypes.CDLL(None).pthread_exit(None)\n"
)


def test_a_process_whose_first_thread_ended_runs_while_another_does() -> None:
    """/proc shows such a process as a zombie (its first thread is one), yet it runs
    and holds what it held."""
    child = subprocess.Popen([sys.executable, "-c", LEADER_EXITS])
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with open(f"/proc/{child.pid}/stat", "rb") as fh:
                if fh.read().rsplit(b")", 1)[1].split()[0] == b"Z":
                    break
            time.sleep(0.01)
        else:
            raise AssertionError("the first thread never ended")
        assert running(child.pid)
    finally:
        child.kill()
        child.wait()
