"""Deterministic fault injection, shared by the sweeps: `git checkpoint ARGS` run with
`tests/fault_git/git` first on PATH, which SIGKILLs the git-checkpoint process at its N-th
git call ("before" that call runs, or "after" it ran), or, in a child of the fork server
(`tests/fault_git/server.py`), at its N-th own file system call ("fs")."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

REAL_GIT = os.path.realpath(shutil.which("git") or "/usr/bin/git")


FAULT_DIR = Path(__file__).parent / "fault_git"


NOW = "2026-02-01T12:00:00Z"  # fixed, so a rerun makes the same commits


# --- running and looking --------------------------------------------------------------


def git(path: Path, *args: str, check: bool = True) -> str:
    proc = subprocess.run(
        [REAL_GIT, *args], cwd=path, capture_output=True, check=False, stdin=subprocess.DEVNULL
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"git {args} failed: {proc.stderr.decode()}")
    return proc.stdout.decode("utf-8", "surrogateescape")


@dataclass(frozen=True)
class Run:
    code: int  # -9 when killed
    out: str
    err: str
    calls: list[str]  # the arguments of each git call made (up to the kill)
    fs: list[str] = field(default_factory=list)  # our own file system calls (server only)

    def line(self) -> str:
        text = (self.err.strip() or self.out.strip()).splitlines()
        return f"exit {self.code}" + (f": {text[-1][:160]}" if text else "")


class Runner:
    """Runs `git checkpoint ARGS` with the fault-injecting git first on PATH.

    By default in a child forked from tests/fault_git/server.py, which has imported
    git_checkpoint once; FI_EXEC=1 execs the installed `git-checkpoint` each time.
    """

    def __init__(self, scratch: Path) -> None:
        self.scratch = scratch
        self.server: subprocess.Popen[str] | None = None
        self.cpu = self.server_cpu = 0.0  # CPU seconds of the runs and their git calls
        if os.environ.get("FI_EXEC") != "1":
            self.server = subprocess.Popen(
                [sys.executable, str(FAULT_DIR / "server.py")],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )

    def close(self) -> None:
        if self.server is not None:
            assert self.server.stdin is not None
            self.server.stdin.close()
            self.server.wait(timeout=30)

    def __call__(
        self, path: Path, *args: str, kill_at: int | None = 0, mode: str = "before"
    ) -> Run:
        """kill_at=0 counts the calls and kills nothing; None runs without the wrapper.
        mode "fs": kill_at counts git-checkpoint's own file system calls instead."""
        counter = self.scratch / "calls"
        counter.unlink(missing_ok=True)
        log = Path(f"{counter}.log")
        log.unlink(missing_ok=True)
        env = {**os.environ, "GIT_CHECKPOINT_NOW": NOW}
        fs_log = self.scratch / "fs.log"
        fs_log.unlink(missing_ok=True)
        if kill_at is not None:
            env["PATH"] = f"{FAULT_DIR}{os.pathsep}{os.environ['PATH']}"
            env.update(FI_REAL_GIT=REAL_GIT, FI_COUNTER=str(counter), FI_MODE=mode)
            env["FI_KILL_AT"] = str(kill_at) if mode != "fs" else "0"
            env["FI_FS_KILL_AT"] = str(kill_at) if mode == "fs" else "0"
            env["FI_FS_LOG"] = str(fs_log)
        if self.server is None:
            used = resource.getrusage(resource.RUSAGE_CHILDREN)
            proc = subprocess.run(
                [shutil.which("git-checkpoint") or "git-checkpoint", *args],
                cwd=path,
                env=env,
                capture_output=True,
                text=True,
                stdin=subprocess.DEVNULL,
                check=False,
                timeout=120,
            )
            code, out, err = proc.returncode, proc.stdout, proc.stderr
            now = resource.getrusage(resource.RUSAGE_CHILDREN)
            self.cpu += now.ru_utime + now.ru_stime - used.ru_utime - used.ru_stime
        else:
            assert self.server.stdin is not None and self.server.stdout is not None
            out_file, err_file = self.scratch / "out", self.scratch / "err"
            request = {"argv": list(args), "cwd": str(path), "env": env}
            request.update(out=str(out_file), err=str(err_file))
            self.server.stdin.write(json.dumps(request) + "\n")
            self.server.stdin.flush()
            reply = self.server.stdout.readline()
            assert reply, "the fault-injection server died"
            code, used = int(reply.split()[0]), float(reply.split()[1])
            self.cpu, self.server_cpu = self.cpu + used - self.server_cpu, used
            out, err = out_file.read_text(errors="replace"), err_file.read_text(errors="replace")
        if code == -9:
            wait_for_orphans(path)
        calls = log.read_text().splitlines() if log.exists() else []
        fs = fs_log.read_text().splitlines() if fs_log.exists() else []
        return Run(code, out, err, calls, fs)


def wait_for_orphans(path: Path, limit: float = 10.0) -> None:
    """A killed git-checkpoint's git children live on (the early scan's write-tree, say):
    they only write objects and their own scratch copies, but the next look at the repo
    (and removing it) waits for them, found by their working folder."""
    deadline = time.monotonic() + limit
    where = str(path)
    while time.monotonic() < deadline:
        busy = False
        for entry in os.scandir("/proc"):
            if entry.name.isdigit():
                with contextlib.suppress(OSError):
                    cwd = os.readlink(f"/proc/{entry.name}/cwd")
                    busy = busy or cwd == where or cwd.startswith(where + "/")
        if not busy:
            return
        time.sleep(0.01)


@pytest.fixture
def checkpoint(tmp_path: Path) -> Iterator[Runner]:
    scratch = tmp_path / "runner"
    scratch.mkdir()
    runner = Runner(scratch)
    yield runner
    runner.close()
