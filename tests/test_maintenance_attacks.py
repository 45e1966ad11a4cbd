"""Attacks on git's auto maintenance after a command (maintenance.py): git's own reading
of its settings, a hook that must never block the agent, a Ctrl-C that lands while git
decides, and the detached gc of a long `git checkpoint run`."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from git_checkpoint.gitcore import maintenance

from .conftest import Repo
from .test_maintenance import fake_objects, with_packs


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("00", False),  # git_parse_maybe_bool falls back to an integer: zero is false
        ("0x0", False),
        ("0k", False),
        ("-0", False),
        ("maybe", False),  # git dies on it (`bad boolean`) before it would maintain
        ("99999999999", False),  # past an int: refused as well
        ("", False),
        ("2", True),
        ("ON", True),
        ("Yes", True),
        ("true", True),
    ],
)
def test_maintenance_auto_is_read_as_git_reads_a_boolean(
    tmp_path: Path, value: str, expected: bool
) -> None:
    fake_objects(tmp_path, loose=28)
    assert maintenance.due(tmp_path, [("maintenance.auto", value)]) is expected


@pytest.mark.parametrize(
    ("value", "loose", "expected"),
    [
        ("0x10", 2, True),  # 16: threshold 1 (strtoimax, base 0)
        ("010", 2, True),  # octal 8: threshold 1
        ("-0x1", 99, False),  # negative: never
        ("08", 27, False),  # git refuses it: git's default, threshold 27
        ("08", 28, True),
        (" 300", 3, True),  # strtoimax skips leading blanks
    ],
)
def test_gc_auto_is_read_as_git_reads_a_number(
    tmp_path: Path, value: str, loose: int, expected: bool
) -> None:
    fake_objects(tmp_path, loose=loose)
    assert maintenance.due(tmp_path, [("gc.auto", value)]) is expected


def pre_auto_gc(repo: Repo, body: str) -> Path:
    """A pre-auto-gc hook running `body`, logging each time it is asked."""
    log = repo.path.parent / "auto-gc.log"
    hook = repo.path / ".git/hooks/pre-auto-gc"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(f"#!/bin/sh\necho asked >> '{log}'\n{body}\n")
    hook.chmod(0o755)
    return log


def test_maintenance_auto_zero_spelled_00_turns_it_off(repo: Repo) -> None:
    """`git maintenance run --auto` does not read maintenance.auto itself (git's commit
    checks it before asking): a 00 read as true ran gc against the user's setting."""
    with_packs(repo, 3)
    repo.git("config", "gc.autoPackLimit", "2")
    repo.git("config", "maintenance.auto", "00")
    log = pre_auto_gc(repo, "exit 1")
    repo.write("app.py", "edited\n")
    repo.cp("save", "-m", "x")
    assert not log.exists()


def agent_hook(repo: Repo, timeout: float = 60) -> tuple[subprocess.CompletedProcess[str], float]:
    payload = {
        "session_id": "s",
        "cwd": str(repo.path),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "git reset --hard"},
    }
    started = time.monotonic()
    proc = subprocess.run(
        ["git-checkpoint-hook", "claude-code", "PreToolUse"],
        input=json.dumps(payload),
        cwd=repo.path,
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
    )
    return proc, time.monotonic() - started


def test_an_agent_hook_never_waits_for_a_slow_pre_auto_gc_hook(repo: Repo) -> None:
    with_packs(repo, 3)
    repo.git("config", "gc.autoPackLimit", "2")
    log = pre_auto_gc(repo, "sleep 15\nexit 1")
    repo.write("app.py", "edited\n")
    proc, took = agent_hook(repo)
    assert proc.returncode == 0 and "checkpoint saved" in proc.stderr, proc.stderr
    assert proc.stdout == ""
    assert took < 8, f"the hook took {took:.1f} s"
    assert not log.exists()  # the next command of ours, or git's own commit, asks


def test_a_ctrl_c_during_maintenance_still_reports_the_save(repo: Repo) -> None:
    with_packs(repo, 3)
    repo.git("config", "gc.autoPackLimit", "2")
    started = repo.path.parent / "hook-started"
    pre_auto_gc(repo, f"touch '{started}'\nsleep 20\nexit 1")
    repo.write("app.py", "edited\n")
    proc = subprocess.Popen(
        ["git", "checkpoint", "save", "-m", "x", "--json"],
        cwd=repo.path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own group: the Ctrl-C goes to all of it, as a tty's
    )
    deadline = time.monotonic() + 30
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started.exists()
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    saved = repo.git("for-each-ref", "--format=%(refname)", "refs/checkpoints/")
    assert "cp_001" in saved  # the save went through before maintenance was asked
    answer = json.loads(out)
    assert answer.get("checkpoint_id") == "cp_001", (answer, err)


def seventeens(tag: str) -> dict[str, bytes]:
    """Three files whose blobs land in objects/17 (the folder git counts for gc.auto)."""
    found: dict[str, bytes] = {}
    k = 0
    while len(found) < 3:
        body = f"{tag} {k}\n".encode()
        if hashlib.sha1(b"blob %d\0" % len(body) + body).hexdigest().startswith("17"):
            found[f"s{len(found)}.txt"] = body
        k += 1
    return found


AGENT = """
import hashlib, os, subprocess, sys, time
tag = "attempt " + os.environ["CHECKPOINT_ATTEMPT"]
k = n = 0
while n < 3:
    body = f"{tag} {k}\\n".encode()
    if hashlib.sha1(b"blob %d\\0" % len(body) + body).hexdigest().startswith("17"):
        open(f"s{n}.txt", "wb").write(body)
        n += 1
    k += 1
time.sleep(3)  # the gc the last save or restore started has finished by now
stats = subprocess.run(["ps", "--ppid", str(os.getppid()), "-o", "stat="],
                       capture_output=True, text=True).stdout.split()
with open(sys.argv[1], "a") as log:
    log.write(f"{sum(s.startswith('Z') for s in stats)}\\n")
"""


def test_run_leaves_no_zombie_gc_behind(repo: Repo, tmp_path: Path) -> None:
    repo.git("config", "gc.auto", "256")  # more than 1 loose object in objects/17: due
    repo.write(
        ".checkpoint.yaml",
        'verifiers:\n  - name: v\n    command: "exit 1"\n    required: true\n    timeout: 60\n',
    )
    repo.git("add", "-A")
    repo.git("-c", "maintenance.auto=false", "commit", "-q", "-m", "verifier")
    for name, body in seventeens("before").items():
        repo.write(name, body)
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    log = tmp_path / "zombies.log"
    repo.cp("run", "--attempts", "3", "--", sys.executable, str(agent), str(log), expect=1)
    zombies = [int(n) for n in log.read_text().split()]
    assert len(zombies) == 3
    assert zombies == [0, 0, 0]
