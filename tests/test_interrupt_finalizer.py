"""A Ctrl-C that lands while a finalizer runs (Popen.__del__, wherever the last reference
to a finished child goes) was lost: Python cannot raise out of a finalizer, so it printed
`Exception ignored in ... KeyboardInterrupt` and carried on, and the Ctrl-Cs after it
were ignored as the first "on its way out". Seen as a flaky traceback in
test_interrupt_review's Ctrl-C test under load. The handler now delivers it again just
after the finalizer."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = """
import os, signal
from git_checkpoint import early
early.interrupt_once()
class Child:
    def __del__(self):
        os.kill(os.getpid(), signal.SIGINT)  # the handler runs inside the finalizer
        for _ in range(1000):
            pass
try:
    Child()
    for _ in range(10 ** 7):
        pass
    print("carried on")
except KeyboardInterrupt:
    print("interrupted")
"""


WEAKREF = """
import os, signal, weakref
from git_checkpoint import early
early.interrupt_once()
class Thing:
    pass
def callback():
    os.kill(os.getpid(), signal.SIGINT)
    for _ in range(1000):
        pass
try:
    thing = Thing()
    weakref.finalize(thing, callback)
    del thing
    for _ in range(10 ** 7):
        pass
    print("carried on")
except KeyboardInterrupt:
    print("interrupted")
"""


@pytest.mark.parametrize("script", [SCRIPT, WEAKREF], ids=["__del__", "weakref callback"])
def test_a_ctrl_c_inside_a_finalizer_still_interrupts(script: str) -> None:
    root = Path(__file__).resolve().parents[1]
    for _ in range(3):
        proc = subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            timeout=60,
            env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
        )
        assert proc.stdout == "interrupted\n", proc.stdout + proc.stderr
        assert "Exception ignored" not in proc.stderr and "Traceback" not in proc.stderr
