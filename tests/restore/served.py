"""`git checkpoint` run as installed with the command server on: a client (the compiled
one install.sh builds, or the Python launcher) hands each command to a server of an
installation of its own, whose worker runs it. A `git` first on PATH (served_git/git)
kills, at the worker's N-th git call, the worker, the client, or the whole server.

Besides the state the kill leaves (judged by the sweep that uses this runner), every
run is checked for what serving adds: no traceback on any output, each command after
the server is up is served, and at the end the server answers, serves the next
command, and has left no worker and no zombie behind."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from git_checkpoint.core import rendezvous

from ..conftest import make_repo
from ..fault_injection import NOW, REAL_GIT, Run, Runner, wait_for_orphans

SERVED_GIT = Path(__file__).parent / "served_git"
PATHS = [p for p in sys.path if p]
CLIENT_C = Path(rendezvous.__file__).parents[1] / "entry" / "client.c"


def _c(text: str) -> str:
    return (
        '"'
        + "".join(
            chr(b) if b < 128 and (chr(b).isalnum() or chr(b) in "/._-") else f"\\{b:03o}"
            for b in os.fsencode(text)
        )
        + '"'
    )


class ServedRunner(Runner):
    """Runs `git checkpoint ARGS` through a client of a fresh installation, served."""

    def __init__(self, scratch: Path, target: str = "worker", client: str = "c") -> None:
        self.scratch = scratch
        self.server = None
        self.cpu = self.server_cpu = 0.0
        self.target = target
        root = scratch / "install"
        (root / "identity").mkdir(parents=True)
        self.paths = [str(root / "identity"), *PATHS]
        self.identity = "\n".join([sys.executable, *self.paths])
        folder = root / "bin"
        folder.mkdir()
        launcher = folder / "git-checkpoint-py"
        launcher.write_text(
            f"#!{sys.executable} -IS\nimport sys\nsys.path[:] = {self.paths!r}\n"
            "from git_checkpoint.entry.launch import main\nmain()\n"
        )
        launcher.chmod(0o755)
        self.program = str(launcher)
        if client == "c":
            config = root / "client_config.h"
            config.write_text(
                f"#define IDENTITY {_c(self.identity)}\n"
                f"#define SOCKET_KEY {_c(rendezvous.key(self.identity))}\n"
                f"#define LAUNCHER {_c(str(launcher))}\n#define HOOK_LAUNCHER {_c(str(launcher))}\n"
            )
            out = folder / "git-checkpoint"
            subprocess.run(
                ["cc", "-O2", "-o", str(out), f'-DCONFIG="{config}"', str(CLIENT_C)], check=True
            )
            self.program = str(out)
        self.lock = rendezvous.server_file(".lock", self.identity) or ""
        self.problems: list[str] = []
        self.counts: Counter[str] = Counter()
        self.server_killed = False  # since the last served command

    def env(self) -> dict[str, str]:
        env = {**os.environ, "GIT_CHECKPOINT_NOW": NOW}
        env.pop("GIT_CHECKPOINT_SERVER", None)
        return env

    def server_pid(self) -> int | None:
        try:
            text = Path(self.lock).read_text().strip()
        except OSError:
            return None
        return int(text) if text.isdigit() else None

    def up(self, cwd: Path) -> int:
        """Start the server, wait until it serves a command; its pid."""
        deadline = time.monotonic() + 60
        usage = self.scratch / "usage-up"
        env = {**self.env(), "GIT_CHECKPOINT_USAGE_FILE": str(usage)}
        while time.monotonic() < deadline:
            usage.unlink(missing_ok=True)
            subprocess.run(
                [self.program, "status"], cwd=cwd, env=env, capture_output=True, timeout=60
            )
            pid = self.server_pid()
            if usage.exists() and pid:
                return pid
            time.sleep(0.1)
        raise AssertionError("no command server came up")

    def __call__(
        self, path: Path, *args: str, kill_at: int | None = 0, mode: str = "before"
    ) -> Run:
        counter = self.scratch / "calls"
        log, who, client = (Path(f"{counter}.{s}") for s in ("log", "who", "client"))
        usage = self.scratch / "usage"
        for f in (counter, log, who, client):
            f.unlink(missing_ok=True)
        used = len(usage.read_text().splitlines()) if usage.exists() else 0
        if kill_at is not None and self.target.startswith("server") and self.server_killed:
            self.up(self.scratch)  # the kill is the served command's (the next one may run itself)
        env = self.env()
        env["GIT_CHECKPOINT_USAGE_FILE"] = str(usage)
        if kill_at is not None:
            env["PATH"] = f"{SERVED_GIT}{os.pathsep}{os.environ['PATH']}"
            env.update(FI_REAL_GIT=REAL_GIT, FI_COUNTER=str(counter), FI_MODE=mode)
            env.update(FI_KILL_AT=str(kill_at), FI_TARGET=self.target, FI_WHO=str(who))
            env.update(FI_CLIENT_PID=str(client), FI_SERVER_LOCK=self.lock)
        proc = subprocess.Popen(
            [self.program, *args],
            cwd=path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
        )
        client.write_text(str(proc.pid))
        try:
            out, err = proc.communicate(timeout=120)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            self.problems.append(f"{' '.join(args)} (kill {mode} {kill_at}): no answer in 120 s")
        code = proc.returncode
        served = (usage.exists() and len(usage.read_text().splitlines()) > used) or (
            who.exists() and "entry.server" in who.read_text()
        )
        label = f"{' '.join(args)} (kill {self.target} {mode} {kill_at})"
        self.counts["served" if served else "own process"] += 1
        if not served and not self.server_killed:
            self.problems.append(f"{label}: not served ({code}: {err.strip()[-200:]})")
        if served:
            self.server_killed = False
        for name, text in (("stdout", out), ("stderr", err)):
            if "Traceback" in text:
                self.problems.append(f"{label}: traceback on {name}: {text[-600:]}")
        problems = Path(f"{counter}.problems")
        if problems.exists():
            self.problems.append(f"{label}: {problems.read_text().strip()}")
            problems.unlink()
        if code != 0:
            wait_for_orphans(path)
        if kill_at and self.target == "server" and code == -9:
            self.server_killed = True  # (the next command may run in its own process)
        calls = log.read_text().splitlines() if log.exists() else []
        return Run(code, out, err, calls, [])

    def finish(self, where: Path) -> list[str]:
        """The server answers and serves the next command; nothing left behind."""
        extra: list[str] = []
        repo = make_repo(where)
        self.up(repo.path)
        self.server_killed = False  # the saves after the first must be served
        for n in range(3):
            repo.write("a.txt", f"{n}\n")
            run = self(repo.path, "save", "-m", f"after {n}", kill_at=None)
            if run.code != 0:
                extra.append(f"a save after the sweep: {run.line()}")
        problems = self.problems + extra
        pid = self.server_pid()
        if pid is None or not _alive(pid):
            problems.append("no command server running after the sweep")
        else:
            state = subprocess.run(
                [self.program, "server", "status", "--json"],
                cwd=where,
                env=self.env(),
                capture_output=True,
                text=True,
                timeout=30,
            )
            if state.returncode != 0 or not json.loads(state.stdout).get("running"):
                problems.append(f"server status: {state.returncode} {state.stdout} {state.stderr}")
            kids = _children(pid)
            zombies = [k for k, s in kids if s == "Z"]
            if len(kids) > 1 or zombies:
                problems.append(f"the server has {len(kids)} children ({zombies} zombies)")
        log = rendezvous.server_file(".log", self.identity)
        if log and os.path.exists(log) and "Traceback" in Path(log).read_text():
            problems.append(f"server log: {Path(log).read_text()[-800:]}")
        left = _processes_under(self.scratch.parent)
        if left:
            problems.append(f"processes left working in the test's folders: {left}")
        return problems

    def close(self) -> None:
        with contextlib.suppress(Exception):
            subprocess.run(
                [self.program, "server", "stop"],
                cwd="/",
                env=self.env(),
                capture_output=True,
                timeout=60,
            )
        pid = self.server_pid()
        if pid and _alive(pid) and "entry.server" in _cmdline(pid):
            os.kill(pid, 9)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _cmdline(pid: int) -> str:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return ""
    try:
        return raw.replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _children(pid: int) -> list[tuple[int, str]]:
    out = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                stat = Path(f"/proc/{entry.name}/stat").read_text().rsplit(")", 1)[1].split()
                if int(stat[1]) == pid:
                    out.append((int(entry.name), stat[0]))
    return out


def _processes_under(root: Path) -> list[str]:
    found = []
    where = str(root)
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            with contextlib.suppress(OSError):
                cwd = os.readlink(f"/proc/{entry.name}/cwd")
                if cwd == where or cwd.startswith(where + "/"):
                    found.append(f"{entry.name}: {_cmdline(int(entry.name))[:120]}")
    return found
