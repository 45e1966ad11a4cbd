"""kill -9 of an auto-save at each of its git calls (tests/fault_git/git, before the call
and after it): on the hook path (a risky Bash call after an edit: the quick check and a
save built on it), `save --auto` and the guard. Whatever the kill left (a checkpoint
without its quick state, a quick state without its checkpoint, a kept index half
adopted), the workspace and the index are as they were, and the next auto-save leaves
the task's latest checkpoint equal to the workspace: a stale quick state must never make
it say "unchanged" over a change it did not save."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from ..conftest import BIN, make_repo
from ..helpers import fingerprint

REAL_GIT = os.path.realpath(shutil.which("git") or "/usr/bin/git")
FAULT_DIR = Path(__file__).parents[1] / "fault_git"
LAUNCHER = os.path.join(BIN, "git-checkpoint")
HOOK = os.path.join(BIN, "git-checkpoint-hook")


def _git(path: Path, *args: str) -> str:
    return subprocess.run(
        [REAL_GIT, *args], cwd=path, capture_output=True, text=True, check=True
    ).stdout


def _template(tmp: Path) -> Path:
    repo = make_repo(tmp / "template")
    repo.write("README.md", "# project\n")
    repo.write("src/app.py", "print('hello')\n")
    repo.write(".gitignore", "*.log\n")
    repo.commit_all("initial")
    repo.write("src/app.py", "print('saved')\n")
    repo.write("notes.txt", "saved notes\n")
    repo.cp("save", "-m", "prior")
    time.sleep(1.1)  # the quick state is trusted from here
    repo.write("src/app.py", "print('edited after the save')\n")
    repo.write("new.txt", "new work\n")
    repo.git("add", "new.txt")
    time.sleep(1.1)
    return repo.path


def _argv(scenario: str, work: Path) -> tuple[list[str], str]:
    if scenario == "hook":
        payload = {"tool_name": "Bash", "tool_input": {"command": "rm -rf build"}, "cwd": str(work)}
        return [HOOK, "claude-code", "PreToolUse"], json.dumps(payload)
    if scenario == "save --auto":
        return [LAUNCHER, "save", "--auto"], ""
    return [LAUNCHER, "guard", "--", "rm", "-rf", "no-such-folder"], ""


def _run(work: Path, scenario: str, tmp: Path, at: int, mode: str) -> int:
    counter = tmp / f"fi-{scenario.replace(' ', '')}-{at}-{mode}"
    for p in (counter, Path(f"{counter}.log"), Path(f"{counter}.lock")):
        p.unlink(missing_ok=True)
    env = {
        **os.environ,
        "PATH": f"{FAULT_DIR}{os.pathsep}{os.environ['PATH']}",
        "FI_REAL_GIT": REAL_GIT,
        "FI_COUNTER": str(counter),
        "FI_KILL_AT": str(at),
        "FI_MODE": mode,
    }
    argv, stdin = _argv(scenario, work)
    subprocess.run(argv, cwd=work, env=env, input=stdin, capture_output=True, text=True,
                   check=False, timeout=120)  # fmt: skip
    log = Path(f"{counter}.log")
    return len(log.read_text().splitlines()) if log.exists() else 0


def _wait_free(work: Path) -> None:
    import fcntl

    lock = work / ".git/checkpoint/lock"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with open(lock, "a") as fh:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                time.sleep(0.05)
    raise AssertionError("the lock stayed held")


@pytest.mark.parametrize("scenario", ["hook", "save --auto", "guard"])
def test_every_kill_point(tmp_path: Path, scenario: str) -> None:
    template = _template(tmp_path)
    files = fingerprint(template)
    index = _git(template, "ls-files", "-s")
    probe = tmp_path / "count"
    shutil.copytree(template, probe, symlinks=True)
    calls = _run(probe, scenario, tmp_path, 0, "before")
    assert calls > 3, calls
    bad = []
    for mode in ("before", "after"):
        for n in range(1, calls + 1):
            work = tmp_path / f"w-{mode}-{n}"
            shutil.copytree(template, work, symlinks=True)
            _run(work, scenario, tmp_path, n, mode)
            _wait_free(work)
            if fingerprint(work) != files or _git(work, "ls-files", "-s") != index:
                bad.append((mode, n, "the workspace or the index changed"))
                continue
            argv, stdin = _argv(scenario, work)
            again = subprocess.run(argv, cwd=work, input=stdin, capture_output=True, text=True,
                                   check=False, timeout=120)  # fmt: skip
            drift = subprocess.run(
                [LAUNCHER, "diff", "--name-only"], cwd=work, capture_output=True, text=True,
                check=False, timeout=120,
            )  # fmt: skip
            if drift.returncode != 0 or "no differences between" not in drift.stdout:
                bad.append(
                    (mode, n, again.stderr.strip(), drift.stdout.strip(), drift.stderr.strip())
                )
            shutil.rmtree(work, ignore_errors=True)
    assert bad == [], bad
