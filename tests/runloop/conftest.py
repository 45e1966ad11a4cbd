"""`git checkpoint run` started in a session of its own and signalled once its agent's
work is done."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

from ..conftest import Repo
from ..helpers import state


def start(repo: Repo, *argv: str) -> subprocess.Popen[str]:
    """`argv` in a session of its own: a signal sent to it reaches it alone."""
    return subprocess.Popen(
        argv,
        cwd=repo.path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def wait_for(path: Path, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)


def interrupted_run(
    repo: Repo, tmp_path: Path, work: str, *args: str, sig: int = signal.SIGTERM
) -> subprocess.CompletedProcess[str]:
    """`run ARGS -- sh -c WORK`, signalled once WORK is done (to run's pid alone)."""
    started = tmp_path / "started"
    script = f"{work}\ntouch {started}; sleep 30 & wait"
    proc = start(repo, "git-checkpoint", "run", *args, "--", "sh", "-c", script)
    wait_for(started)
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=60)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


def stays_unchanged(repo: Repo, seconds: float = 2.5) -> None:
    before = state(repo)
    time.sleep(seconds)
    assert state(repo) == before, "the workspace changed after run had exited"
    assert not (repo.path / "late.txt").exists()
