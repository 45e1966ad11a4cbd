"""The hook's auto-save imports the save path on a thread of its own while the quick
check's git children scan (core/preload.py); the save waits for that thread before it
imports anything itself, and an unchanged workspace leaves at once."""

from __future__ import annotations

import os
import subprocess
import sys

from .conftest import Repo
from .test_quicksave import saved  # noqa: F401 - the fixture

PROBE = """
import sys
from git_checkpoint.core import preload
from git_checkpoint.entry.hook import SAVE_MODULES
from git_checkpoint.fast import quickcheck
found = quickcheck.check('.', while_scanning=lambda: preload.start(*SAVE_MODULES))
preload.wait()
print(found is not None and found.unchanged)
print(all(m in sys.modules for m in SAVE_MODULES))
"""


def probe(repo: Repo) -> list[str]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=repo.path, capture_output=True, text=True,
        env=dict(os.environ), check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def test_the_save_path_is_imported_while_git_scans(saved: Repo) -> None:  # noqa: F811
    assert probe(saved) == ["True", "True"]  # unchanged: imported all the same, unused
    saved.write("src/app.py", "print('again')\n")
    assert probe(saved) == ["False", "True"]


def test_a_changed_workspace_saves_after_the_imports(saved: Repo) -> None:  # noqa: F811
    from .test_quicksave import auto

    saved.write("src/app.py", "print('again')\n")
    name = auto(saved)
    assert name is not None and name.endswith("cp_002")
    assert auto(saved) is None
