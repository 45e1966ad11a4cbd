"""Stopping `git checkpoint run` stops everything its agent started: a signal to run (or
through git), Ctrl-C typed at the agent, which is the terminal's foreground job, and
Ctrl-Z; what the agent leaves running is stopped before its attempt is saved. A SIGTERM
to `verify` ends it the same way, exit 143."""

from __future__ import annotations

import os
import pty
import select
import shlex
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ..conftest import Repo
from ..helpers import configure, verifier
from .conftest import interrupted_run, start, stays_unchanged, wait_for

# A background job of a shell script ignores SIGINT; this one SIGHUP too (nohup), as the
# hang-up of a terminal would stop it otherwise. It writes once `run` is long gone.
LATE_WRITER = "(trap '' HUP; sleep 1.5; echo late > late.txt; echo late >> README.md) &"


# --- nothing the agent started outlives run -------------------------------------------


@pytest.mark.parametrize(
    ("sig", "code", "said"),
    [
        (signal.SIGTERM, 143, "interrupted during attempt 1 by SIGTERM"),
        (signal.SIGHUP, 129, "interrupted during attempt 1 by SIGHUP"),
        (signal.SIGINT, 130, "interrupted during attempt 1:"),
    ],
)
def test_a_signal_to_run_stops_everything_the_agent_started(
    repo: Repo, tmp_path: Path, sig: int, code: int, said: str
) -> None:
    configure(repo, verifier("unit", "true"))
    proc = interrupted_run(
        repo, tmp_path, LATE_WRITER, "--task", "fix4", "--attempts", "1", sig=sig
    )
    assert proc.returncode == code, proc.stderr
    assert said in proc.stdout
    assert "git_checkpoint/" not in proc.stderr
    stays_unchanged(repo)


def test_sigterm_through_git_exits_143_with_nothing_left_running(
    repo: Repo, tmp_path: Path
) -> None:
    configure(repo, verifier("unit", "true"))
    started = tmp_path / "started"
    script = f"{LATE_WRITER} touch {started}; wait"
    proc = start(repo, "git", "checkpoint", "run", "--", "sh", "-c", script)
    wait_for(started)
    proc.send_signal(signal.SIGTERM)  # git passes it on to git-checkpoint and waits
    out, _ = proc.communicate(timeout=60)
    # git waits for git-checkpoint, then dies of the same signal: a shell shows 143.
    assert proc.returncode == -signal.SIGTERM
    assert "interrupted during attempt 1 by SIGTERM" in out
    stays_unchanged(repo)


def test_what_the_agent_leaves_running_is_stopped_before_its_attempt_is_saved(
    repo: Repo,
) -> None:
    configure(repo, verifier("unit", "true"))
    proc = repo.cp("run", "--", "sh", "-c", f"{LATE_WRITER} echo done > done.txt")
    assert "the agent left processes running: stopped them" in proc.stdout
    assert "promoted: cp_002" in proc.stdout
    assert (repo.path / "done.txt").read_text() == "done\n"
    stays_unchanged(repo)
    assert "left processes running" not in repo.cp("run", "--", "true").stdout


def test_sigterm_to_verify_exits_143(repo: Repo, tmp_path: Path) -> None:
    started = tmp_path / "started"
    configure(repo, verifier("slow", f"touch {started}; sleep 30"))
    proc = start(repo, "git-checkpoint", "verify")
    wait_for(started)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143
    assert err.strip().endswith("git checkpoint: interrupted")


# --- on a terminal: the agent is the foreground job ---------------------------------


class Terminal:
    """`argv` as the foreground job of a new pseudo-terminal (its session leader)."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> None:
        self.pid, self.fd = pty.fork()
        if self.pid == 0:  # pragma: no cover (the child)
            try:
                os.chdir(cwd)
                os.execvpe(argv[0], argv, {**os.environ, **(env or {})})
            finally:
                os._exit(127)
        self.out = b""

    def _read(self, timeout: float) -> bool:
        """What the terminal shows within `timeout`; False once the session has ended."""
        ready, _, _ = select.select([self.fd], [], [], max(timeout, 0))
        if not ready:
            return True
        try:
            chunk = os.read(self.fd, 4096)
        except OSError:  # EIO: no one has the terminal open any more
            return False
        self.out += chunk
        return bool(chunk)

    def expect(self, text: bytes, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.out:
            if time.monotonic() > deadline or not self._read(deadline - time.monotonic()):
                raise AssertionError(f"{text!r} not seen in {self.out.decode(errors='replace')}")

    def send(self, data: bytes) -> None:
        os.write(self.fd, data)

    def ask_until(self, command: bytes, text: bytes, timeout: float = 30) -> None:
        """Type `command` again and again until `text` shows."""
        deadline = time.monotonic() + timeout
        while text not in self.out:
            assert time.monotonic() < deadline, self.out.decode(errors="replace")
            self.send(command)
            self._read(0.2)

    def exit_code(self, timeout: float = 30) -> int:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._read(0.05)  # keep the output flowing
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.pid = 0
                return os.waitstatus_to_exitcode(status)
        raise AssertionError(f"still running: {self.out.decode(errors='replace')}")

    def close(self) -> None:
        if self.pid:
            os.killpg(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
        os.close(self.fd)


READ_A_LINE = "import pathlib\npathlib.Path('got.txt').write_text(input('say: '))\n"


def line_reader(tmp_path: Path) -> str:
    """An agent that asks for a line on the terminal (its prompt is not in run's log)."""
    path = tmp_path / "reader.py"
    path.write_text(READ_A_LINE)
    return str(path)


def test_an_agent_reads_the_terminal(repo: Repo, tmp_path: Path) -> None:
    """In a process group of its own but not the terminal's foreground, it would stop
    (SIGTTIN) at its first read, and the run with it."""
    configure(repo, verifier("unit", "true"))
    argv = ["git-checkpoint", "run", "--", sys.executable, line_reader(tmp_path)]
    terminal = Terminal(argv, repo.path)
    try:
        terminal.expect(b"say: ")
        terminal.send(b"hello\n")
        assert terminal.exit_code() == 0
    finally:
        terminal.close()
    assert b"promoted: cp_002" in terminal.out
    assert (repo.path / "got.txt").read_text() == "hello"


def test_ctrl_c_typed_at_the_agent_stops_the_run_and_all_it_started(
    repo: Repo, tmp_path: Path
) -> None:
    configure(repo, verifier("unit", "true"))
    # A shell reads the line: a Ctrl-C that lands between Python's prompt and its read
    # is only noticed once the read returns.
    reader = tmp_path / "reader.sh"
    reader.write_text(f"{LATE_WRITER}\nprintf 'say: '; read line; echo \"$line\" > got.txt\n")
    terminal = Terminal(["git-checkpoint", "run", "--", "sh", str(reader)], repo.path)
    try:
        terminal.expect(b"say: ")
        terminal.send(b"\x03")  # the terminal's Ctrl-C: SIGINT to its foreground job
        assert terminal.exit_code() == 130
    finally:
        terminal.close()
    assert b"interrupted during attempt 1" in terminal.out
    stays_unchanged(repo)


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash for job control")
@pytest.mark.parametrize("stopped_by", ["ctrl-z", "a read in the background"])
def test_run_stops_as_one_job_and_fg_goes_on(repo: Repo, tmp_path: Path, stopped_by: str) -> None:
    """Ctrl-Z typed at the agent, or the agent reading the terminal while run is in the
    background: run stops with it (the shell sees one job stopped), and fg hands the
    agent the terminal (a wrong 'our group is orphaned' answer would SIGHUP it)."""
    configure(repo, verifier("unit", "true"))
    shell = ["bash", "--norc", "--noprofile", "-i"]
    terminal = Terminal(shell, repo.path, env={"PS1": "$ ", "TERM": "dumb"})
    run = shlex.join(["git", "checkpoint", "run", "--", sys.executable, line_reader(tmp_path)])
    try:
        if stopped_by == "ctrl-z":
            terminal.send(f"{run}\n".encode())
            terminal.expect(b"say: ")
            terminal.send(b"\x1a")
            terminal.expect(b"Stopped")
        else:
            terminal.send(f"{run} &\n".encode())
            terminal.expect(b"say: ")
            terminal.ask_until(b"jobs\n", b"Stopped")  # once the agent has tried to read
        terminal.send(b"fg\n")
        terminal.send(b"hello\n")
        terminal.expect(b"promoted: cp_002")
        terminal.send(b"exit\n")
        assert terminal.exit_code() == 0
    finally:
        terminal.close()
    assert (repo.path / "got.txt").read_text() == "hello"


def test_sigterm_stops_the_agent_too(repo: Repo) -> None:
    configure(repo, verifier("unit", "true"))
    marker = repo.path.parent / "agent-alive"
    agent = repo.path.parent / "slow.py"
    agent.write_text(
        "import pathlib, time\n"
        f"for _ in range(600):\n    pathlib.Path({str(marker)!r}).touch(); time.sleep(0.05)\n"
    )
    proc = subprocess.Popen(
        ["git-checkpoint", "run", "--", sys.executable, str(agent)],
        cwd=repo.path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=30)
    assert "interrupted during attempt 1" in out
    marker.unlink()
    time.sleep(0.5)
    assert not marker.exists(), "the agent kept running after git checkpoint stopped"
