"""A command that has to wait for another's lock says so as it waits, naming the restore
it waits for, and nothing after that would be stale by the time it is done. A command
that reads while a restore runs says that it is in progress."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import time
from pathlib import Path

from ..conftest import Repo

JOURNAL = ".git/checkpoint/restore-journal.json"


def slow_git(tmp_path: Path) -> dict[str, str]:
    """A `git` first on PATH that holds each `update-ref` (a restore's safety ref,
    made once its journal is written) while the file `hold` exists."""
    folder = tmp_path / "slowgit"
    folder.mkdir()
    script = folder / "git"
    real = shutil.which("git")
    script.write_text(
        "#!/bin/sh\n"
        f'case " $* " in *" update-ref "*)\n'
        f'  while [ -e "{tmp_path}/hold" ]; do sleep 0.05; done;;\n'
        "esac\n"
        f'exec "{real}" "$@"\n'
    )
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    return {**os.environ, "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}


def test_a_command_that_waited_for_a_restore_does_not_call_it_in_progress(
    repo: Repo, tmp_path: Path
) -> None:
    repo.cp("save", "-m", "one")
    repo.write("src/app.py", "print('two')\n")
    repo.cp("save", "-m", "two")
    (tmp_path / "hold").touch()
    first = subprocess.Popen(
        ["git-checkpoint", "restore", "cp_001"], cwd=repo.path, env=slow_git(tmp_path),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while not (repo.path / JOURNAL).exists():
        assert time.monotonic() < deadline and first.poll() is None
        time.sleep(0.05)
    reading = repo.cp("status")
    assert "restore of main/cp_001 in progress" in reading.stdout + reading.stderr
    second = subprocess.Popen(
        ["git", "checkpoint", "restore", "cp_002"], cwd=repo.path,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert second.stderr is not None
    said = second.stderr.readline()  # as it starts to wait for the lock
    assert "note: waiting for the restore of main/cp_001 (pid " in said
    (tmp_path / "hold").unlink()
    assert first.wait(timeout=60) == 0
    out, err = second.communicate(timeout=60)
    err = said + err
    assert second.returncode == 0, err
    assert "in progress" not in out + err
    assert out.splitlines()[-1] == "workspace matches cp_002"
