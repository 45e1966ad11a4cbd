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

from .conftest import Repo
from .test_direct_attacks import wrapper_env
from .test_interrupt_review import run_in_session

SCRIPT = """
import os, signal
from git_checkpoint.core.interrupts import interrupt_once
interrupt_once()
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
from git_checkpoint.core.interrupts import interrupt_once
interrupt_once()
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


def test_a_ctrl_c_in_the_middle_of_a_restore_says_how_to_go_on(repo: Repo, tmp_path: Path) -> None:
    """helper-20: a Ctrl-C after the first file was replaced printed only `interrupted`;
    the way on (`--continue`, `undo`) showed at the next command. It is said at once."""
    repo.write("src/app.py", "print('saved')\n")
    repo.git("add", "src/app.py")  # staged: the written file's stat data is refreshed
    repo.cp("save", "-m", "one")
    repo.write("src/app.py", "print('attempt')\n")
    script = 'case " $* " in *" --refresh "*) kill -INT 0;; esac'  # after the writes
    proc = run_in_session(repo, wrapper_env(tmp_path, script), "restore", "cp_001")
    assert proc.returncode == 130
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert "interrupted, the restore of main/cp_001 half done" in proc.stderr
    assert "restore --continue" in proc.stderr and "undo" in proc.stderr
    repo.cp("restore", "--continue")
    assert (repo.path / "src" / "app.py").read_text() == "print('saved')\n"
