"""Verifiers are processes of their own (verify/procgroup): a hanging one is killed
with its children, one printing 50 MB stays bounded, and a signal to `verify` stops
the verifier too."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ..conftest import Repo
from ..helpers import configure, note_events, verifier

PY = sys.executable


def test_hanging_verifier_is_killed_with_its_children(repo: Repo) -> None:
    pidfile = repo.path.parent / "child.pid"
    command = f"sleep 300 & echo $! > {pidfile}; sleep 300"
    configure(repo, verifier("hang", command, timeout=1))
    started = time.monotonic()
    proc = repo.cp("verify", expect=1)
    assert time.monotonic() - started < 15
    assert "error (timeout)" in proc.stdout
    child = int(pidfile.read_text())
    time.sleep(0.2)
    status = Path(f"/proc/{child}/status")
    assert not status.exists() or "zombie" in status.read_text()
    event = note_events(repo, "refs/checkpoints/main/cp_001")[0]
    assert event["status"] == "error" and event["error"] == "timeout"


def test_verifier_printing_50_mb_stays_bounded(repo: Repo) -> None:
    configure(repo, verifier("loud", "head -c 100000000 /dev/zero | tr '\\0' x; exit 1"))
    # Measured in a fresh process of its own: RUSAGE_CHILDREN of the test worker would
    # hold the peak of every earlier test's children too.
    probe = (
        "import resource, subprocess, sys\n"
        "subprocess.run(['git-checkpoint', 'verify'], capture_output=True, check=False)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], cwd=repo.path, capture_output=True, text=True, check=True
    ).stdout
    peak_kib = int(out.strip())
    assert peak_kib < 100_000, f"peak RSS {peak_kib} KiB"
    note = repo.git("notes", "--ref=checkpoints", "show", "refs/checkpoints/main/cp_001")
    assert len(note) < 20_000
    assert "bytes cut" in note


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_signals_stop_verify_and_its_verifier(repo: Repo, sig: signal.Signals) -> None:
    pidfile = repo.path.parent / "verifier.pid"
    configure(repo, verifier("slow", f"echo $$ > {pidfile}; exec sleep 60"))
    proc = subprocess.Popen(
        ["git-checkpoint", "verify"],
        cwd=repo.path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 30
    while not pidfile.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)
    proc.send_signal(sig)
    proc.communicate(timeout=30)
    pid = int(pidfile.read_text())
    time.sleep(0.3)
    status = Path(f"/proc/{pid}/status")
    assert not status.exists() or "zombie" in status.read_text()
