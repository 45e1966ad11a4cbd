"""The checkpoint lock goes to git children through Repo.lock_fds (storage/lock.py): a
git process still running after our process was killed keeps the lock until it is done,
so no other git-checkpoint starts in the middle of its write.

A `git` wrapper first on PATH notes, for every call, whether the lock is held when the
call starts (`flock -n` on the lock file from the wrapper). Then, for each call made
while the lock was held, a fresh copy of the repository is run again: at that call the
wrapper SIGKILLs its parent (our process), waits until it is dead, and looks again. The
child (the wrapper, then git) must still hold the lock. Run on the hook path (a risky
Bash call after an edit: quick check, then the save), `save --auto` and the guard.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from ..conftest import BIN, make_repo

REAL_GIT = os.path.realpath(shutil.which("git") or "/usr/bin/git")
LAUNCHER = os.path.join(BIN, "git-checkpoint")
HOOK = os.path.join(BIN, "git-checkpoint-hook")

WRAPPER = r"""#!/bin/bash
exec 200>>"$KL_COUNTER.lock"
flock 200
n=0
[ -f "$KL_COUNTER" ] && read -r n < "$KL_COUNTER"
n=$((n + 1))
echo "$n" > "$KL_COUNTER"
if [ "$n" = "$KL_AT" ]; then
    parent=$PPID
    kill -KILL "$parent"
    i=0
    while [ $i -lt 500 ]; do
        st=$(sed 's/.*) //' /proc/$parent/stat 2>/dev/null | cut -d' ' -f1)
        if [ -z "$st" ] || [ "$st" = Z ]; then break; fi
        sleep 0.01
        i=$((i + 1))
    done
fi
if [ -e "$KL_LOCK" ] && ! flock -n "$KL_LOCK" true; then held=HELD; else held=FREE; fi
printf '%s %s %s\n' "$n" "$held" "$*" >> "$KL_COUNTER.log"
flock -u 200
exec 200>&-
exec "$KL_REAL" "$@"
"""

READ_ONLY = (
    "cat-file",
    "status",
    "ls-files",
    "rev-parse",
    "for-each-ref",
    "ls-tree",
    "diff-files",
    "diff-tree",
    "check-attr",
    "config",
    "show-ref",
    "var",
    "-C",
)


def _template(tmp: Path, prior: bool) -> Path:
    repo = make_repo(tmp / "template")
    repo.write("README.md", "# project\n")
    repo.write("src/app.py", "print('hello')\n")
    repo.write(".gitignore", "*.log\n")
    repo.commit_all("initial")
    if prior:
        repo.write("src/app.py", "print('saved')\n")
        repo.cp("save", "-m", "prior")
        time.sleep(1.1)
    repo.write("src/app.py", "print('edited after the save')\n")
    repo.write("new.txt", "new work\n")
    (repo.path / ".git/checkpoint").mkdir(exist_ok=True)
    (repo.path / ".git/checkpoint/lock").touch()
    return repo.path


def _run(work: Path, scenario: str, tmp: Path, at: int) -> list[tuple[int, str, str]]:
    bindir = tmp / "klbin"
    bindir.mkdir(exist_ok=True)
    (bindir / "git").write_text(WRAPPER)
    (bindir / "git").chmod(0o755)
    counter = tmp / f"calls-{at}"
    for p in (counter, Path(f"{counter}.log"), Path(f"{counter}.lock")):
        p.unlink(missing_ok=True)
    env = {
        **os.environ,
        "PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}",
        "KL_REAL": REAL_GIT,
        "KL_COUNTER": str(counter),
        "KL_AT": str(at),
        "KL_LOCK": str(work / ".git/checkpoint/lock"),
    }
    if scenario == "hook":
        payload = {"tool_name": "Bash", "tool_input": {"command": "rm -rf build"}, "cwd": str(work)}
        argv, stdin = [HOOK, "claude-code", "PreToolUse"], json.dumps(payload)
    elif scenario == "save --auto":
        argv, stdin = [LAUNCHER, "save", "--auto"], ""
    else:
        argv, stdin = [LAUNCHER, "guard", "--", "rm", "-rf", "no-such-folder"], ""
    subprocess.run(
        argv,
        cwd=work,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    time.sleep(0.2)
    log = Path(f"{counter}.log")
    rows = []
    for line in log.read_text().splitlines() if log.exists() else []:
        n, held, args = line.split(" ", 2)
        rows.append((int(n), held, re.sub(r"[0-9a-f]{40}", "<oid>", args)))
    return rows


@pytest.mark.parametrize("prior", [True, False], ids=["after-a-save", "first-save"])
@pytest.mark.parametrize("scenario", ["hook", "save --auto", "guard"])
def test_git_children_keep_the_lock_after_a_kill(
    tmp_path: Path, scenario: str, prior: bool
) -> None:
    template = _template(tmp_path, prior)
    work = tmp_path / "work-0"
    shutil.copytree(template, work, symlinks=True)
    calls = _run(work, scenario, tmp_path, 0)
    under_lock = {args for _, held, args in calls if held == "HELD"}
    writers = {a for a in under_lock if (a.split() or [""])[0] not in READ_ONLY}
    assert writers, calls  # the save ran git that writes under its lock
    lost = []
    checked = []
    for n in range(1, len(calls) + 1):
        work = tmp_path / f"work-{n}"
        shutil.copytree(template, work, symlinks=True)
        rows = _run(work, scenario, tmp_path, n)
        shutil.rmtree(work, ignore_errors=True)
        at = [r for r in rows if r[0] == n]
        if not at or at[0][2] not in writers:
            continue  # (concurrent calls may come in another order)
        checked.append(at[0][2])
        if at[0][1] != "HELD":
            lost.append((n, at[0][2]))
    assert checked, writers
    print(scenario, checked)
    assert lost == [], lost
