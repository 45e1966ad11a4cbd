"""A Ctrl-C once a restore has begun to change the work tree ends with one
line, "interrupted, the restore of X half done: ..." and the signal's exit code, now
carried by core/interrupts.RestoreInterrupted: on the click-free path (`restore CP`,
`undo`), on click's (`restore --continue`, `restore -- CP`), and under --json (one JSON
object on stdout as well). The wrapper git delivers the signal to the whole process
group, as a terminal's Ctrl-C does, at a fixed call."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ..conftest import BIN, Repo

LAUNCHER = os.path.join(BIN, "git-checkpoint")
REAL_GIT = os.path.realpath(shutil.which("git") or "/usr/bin/git")
JOURNAL = ".git/checkpoint/restore-journal.json"
HALF_DONE = "interrupted, the restore of"


def signalling_env(tmp_path: Path, when: str, sig: str = "INT") -> dict[str, str]:
    """A git that sends SIG to the group when its arguments match the shell `case`
    pattern `when` (once: a marker file), then runs the real git."""
    folder = tmp_path / "sigwrap"
    folder.mkdir(exist_ok=True)
    marker = tmp_path / "signalled"
    marker.unlink(missing_ok=True)
    (folder / "git").write_text(
        "#!/bin/sh\n"
        f'case " $* " in {when}) if [ ! -e "{marker}" ]; then touch "{marker}"; '
        f"kill -{sig} 0; fi;; esac\n"
        f'exec "{REAL_GIT}" "$@"\n'
    )
    (folder / "git").chmod(0o755)
    return {**os.environ, "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}


def run(repo: Repo, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [LAUNCHER, *args], cwd=repo.path, env=env, capture_output=True, text=True,
        check=False, timeout=60, start_new_session=True,
    )  # fmt: skip


def saved_twice(repo: Repo) -> None:
    repo.write("src/app.py", "print('saved')\n")
    repo.git("add", "src/app.py")
    repo.write("extra.txt", "saved extra\n")
    repo.cp("save", "-m", "one")
    repo.write("src/app.py", "print('attempt')\n")
    repo.write("extra.txt", "attempt extra\n")
    repo.write("residue.txt", "attempt residue\n")


AFTER_WRITES = '*" --refresh "*'  # update_index: after the work tree changed
SAFETY_REF = '*" update-ref "*"checkpoint: save "*'  # the journal is written: the ref next


def one_line(proc: subprocess.CompletedProcess[str]) -> str:
    """The one line the interruption ends with (a warning about the restore that was
    pending when the command began may come first)."""
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert lines and "Traceback" not in proc.stderr, proc.stderr
    assert all(ln.startswith(("warning: ", "note: ")) for ln in lines[:-1]), proc.stderr
    return lines[-1]


@pytest.mark.parametrize(
    "args", [["restore", "cp_001"], ["restore", "cp_001", "--"]], ids=["fastcli", "click"]
)
def test_a_restore_interrupted_after_its_writes(
    repo: Repo, tmp_path: Path, args: list[str]
) -> None:
    saved_twice(repo)
    proc = run(repo, signalling_env(tmp_path, AFTER_WRITES), *args)
    assert proc.returncode == 130, proc.stderr
    line = one_line(proc)
    assert f"{HALF_DONE} main/cp_001 half done" in line and "--continue" in line, line
    repo.cp("restore", "--continue")
    assert (repo.path / "src/app.py").read_text() == "print('saved')\n"


def test_under_json_the_half_done_restore_is_one_object(repo: Repo, tmp_path: Path) -> None:
    saved_twice(repo)
    proc = run(repo, signalling_env(tmp_path, AFTER_WRITES), "restore", "cp_001", "--json")
    assert proc.returncode == 130, proc.stderr
    obj = json.loads(proc.stdout)
    assert obj["exit_code"] == 130 and "half done" in obj["error"], obj
    one_line(proc)


def _interrupted_restore(repo: Repo, tmp_path: Path) -> None:
    saved_twice(repo)
    first = run(repo, signalling_env(tmp_path, AFTER_WRITES), "restore", "cp_001")
    assert first.returncode == 130 and (repo.path / JOURNAL).exists(), first.stderr
    repo.write("made-after.txt", "after the interruption\n")


def test_restore_continue_interrupted_after_its_writes(repo: Repo, tmp_path: Path) -> None:
    _interrupted_restore(repo, tmp_path)
    proc = run(repo, signalling_env(tmp_path, SAFETY_REF), "restore", "--continue")
    assert proc.returncode == 130, proc.stderr
    assert f"{HALF_DONE} main/cp_001 half done" in one_line(proc)
    repo.cp("restore", "--continue")
    assert (repo.path / "src/app.py").read_text() == "print('saved')\n"


def test_restore_continue_interrupted_before_its_safety_checkpoint(
    repo: Repo, tmp_path: Path
) -> None:
    _interrupted_restore(repo, tmp_path)
    proc = run(
        repo, signalling_env(tmp_path, '*" status "*|*" write-tree "*'), "restore", "--continue"
    )
    assert proc.returncode == 130, proc.stderr
    assert (repo.path / JOURNAL).exists()
    assert f"{HALF_DONE} main/cp_001 half done" in one_line(proc)


def test_undo_interrupted_after_its_writes(repo: Repo, tmp_path: Path) -> None:
    saved_twice(repo)
    repo.cp("restore", "cp_001")
    proc = run(repo, signalling_env(tmp_path, SAFETY_REF), "undo")
    assert proc.returncode == 130, proc.stderr
    line = one_line(proc)
    assert HALF_DONE in line and "half done" in line, line
    repo.cp("restore", "--continue")
    assert (repo.path / "src/app.py").read_text() == "print('attempt')\n"
    assert (repo.path / "residue.txt").read_text() == "attempt residue\n"


def test_a_ctrl_c_before_the_restore_begins_is_plain_and_changes_nothing(
    repo: Repo, tmp_path: Path
) -> None:
    saved_twice(repo)
    before = (repo.path / "src/app.py").read_text()
    proc = run(repo, signalling_env(tmp_path, '*" status "*'), "restore", "cp_001")
    assert proc.returncode == 130, proc.stderr
    assert one_line(proc) == "git checkpoint: interrupted"
    assert not (repo.path / JOURNAL).exists()
    assert (repo.path / "src/app.py").read_text() == before
