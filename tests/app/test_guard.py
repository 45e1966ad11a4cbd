"""`git checkpoint guard -- CMD…`: a checkpoint first when CMD is risky, then CMD itself,
with its stdin, stdout, exit code and signals; a checkpoint problem never stops CMD."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ..conftest import Repo


def guard(
    cwd: Path, *cmd: str, input: str | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "checkpoint", "guard", "--", *cmd],
        cwd=cwd,
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def checkpoints(repo: Repo) -> list[str]:
    return repo.git("for-each-ref", "--format=%(refname)", "refs/checkpoints/").split()


@pytest.mark.parametrize(
    ("cmd", "code"),
    [
        (["sh", "-c", "exit 3"], 3),
        (["false"], 1),
        (["true"], 0),
        (["exit 5"], 5),  # one argument: a shell line
        (["rm -f nothing; exit 9"], 9),  # risky, saved first, code still passed
        (["no-such-command-anywhere"], 127),
        (["no-such-command-anywhere", "--flag"], 127),
    ],
)
def test_exit_codes_pass_through(repo: Repo, cmd: list[str], code: int) -> None:
    assert guard(repo.path, *cmd).returncode == code


def test_stdin_and_stdout_pass_through_a_save(repo: Repo) -> None:
    repo.write("src/app.py", "changed\n")
    proc = guard(repo.path, "sh", "-c", "rm -f gone.txt; cat; echo done", input="line 1\nline 2\n")
    assert proc.returncode == 0
    assert proc.stdout == "line 1\nline 2\ndone\n"  # the save read none of it
    assert len(checkpoints(repo)) == 1


def test_a_risky_command_is_saved_first_a_harmless_one_not(repo: Repo) -> None:
    repo.write("notes.txt", "uncommitted work\n")
    proc = guard(repo.path, "git", "status", "--short")
    assert proc.returncode == 0 and "notes.txt" in proc.stdout
    assert checkpoints(repo) == []
    proc = guard(repo.path, "rm", "notes.txt")
    assert proc.returncode == 0
    assert not (repo.path / "notes.txt").exists()
    assert "checkpoint saved: cp_001 (before: rm notes.txt)" in proc.stderr
    shown = repo.cp("show", "cp_001", "--manifest").stdout
    assert "before: rm notes.txt" in shown
    repo.cp("restore", "cp_001")
    assert (repo.path / "notes.txt").read_text() == "uncommitted work\n"


def test_saves_are_deduplicated(repo: Repo) -> None:
    repo.write("src/app.py", "changed\n")
    for _ in range(3):
        assert guard(repo.path, "git", "stash", "list").returncode == 0  # harmless
        assert guard(repo.path, "rm", "-f", "no-such-file").returncode == 0
    assert len(checkpoints(repo)) == 1


def test_git_reset_hard_is_undoable(repo: Repo) -> None:
    repo.write("src/app.py", "half-done work\n")
    assert guard(repo.path, "git", "reset", "--hard").returncode == 0
    assert (repo.path / "src/app.py").read_text() == "print('hello')\n"
    repo.cp("restore", "@")
    assert (repo.path / "src/app.py").read_text() == "half-done work\n"


def test_outside_a_repository_the_command_still_runs(tmp_path: Path) -> None:
    (tmp_path / "victim").write_text("x")
    proc = guard(tmp_path, "rm", "victim")
    assert proc.returncode == 0
    assert not (tmp_path / "victim").exists()
    assert proc.stderr.count("\n") == 1 and "no checkpoint saved" in proc.stderr
    assert guard(tmp_path, "ls").stderr == ""  # harmless: nothing to say


def test_a_refused_save_never_stops_the_command(repo: Repo) -> None:
    repo.write(".checkpoint.yaml", "limits: {overlay_max_files: 1, on_exceed: refuse}\n")
    repo.write("file.txt", "x")
    proc = guard(repo.path, "rm", "file.txt")
    assert proc.returncode == 0 and not (repo.path / "file.txt").exists()
    assert proc.stderr.count("\n") == 1 and "no checkpoint saved (overlay" in proc.stderr


def test_a_broken_config_saves_with_the_defaults_and_says_so(repo: Repo) -> None:
    repo.write(".checkpoint.yaml", "untracked: [unclosed\n")
    repo.write("file.txt", "x")
    proc = guard(repo.path, "rm", "file.txt")
    assert proc.returncode == 0 and not (repo.path / "file.txt").exists()
    assert ".checkpoint.yaml" in proc.stderr and "default settings" in proc.stderr
    assert "checkpoint saved: cp_001" in proc.stderr


def test_a_held_lock_never_stops_the_command(repo: Repo) -> None:
    repo.cp("save", "-m", "first")  # creates the state folder
    repo.write("file.txt", "x")
    lock = repo.path / ".git" / "checkpoint" / "lock"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, os, sys, time\n"
            f"fd = os.open({str(lock)!r}, os.O_RDWR | os.O_CREAT)\n"
            "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); time.sleep(60)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        started = time.monotonic()
        proc = guard(repo.path, "rm", "file.txt")
        assert time.monotonic() - started < 20
    finally:
        holder.kill()
        holder.wait()
    assert proc.returncode == 0 and not (repo.path / "file.txt").exists()
    assert "no checkpoint saved" in proc.stderr and "another git-checkpoint" in proc.stderr


def test_a_signal_death_is_128_plus_n_through_git(repo: Repo) -> None:
    proc = guard(repo.path, "sh", "-c", "kill -TERM $$")
    assert proc.returncode == 128 + signal.SIGTERM


def test_the_guard_becomes_the_command(repo: Repo) -> None:
    """No Python process stays between: a signal to the guard's pid reaches CMD itself."""
    script = (
        "import os, signal, sys, time\n"
        # os.write, not print: the signal may land while the pid's print is still in
        # its flush, and a print inside the handler is then a reentrant call (exit 1)
        "def stop(n, f): os.write(1, f'got {n}\\n'.encode()); sys.exit(42)\n"
        "signal.signal(signal.SIGTERM, stop); signal.signal(signal.SIGINT, stop)\n"
        "print(os.getpid(), flush=True); time.sleep(60)"
    )
    guard_bin = str(Path(sys.executable).parent / "git-checkpoint")
    for sig in (signal.SIGTERM, signal.SIGINT):
        proc = subprocess.Popen(
            [guard_bin, "guard", "--", sys.executable, "-c", script],
            cwd=repo.path,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        assert int(proc.stdout.readline()) == proc.pid  # exec'd: same process
        proc.send_signal(sig)
        assert proc.wait(timeout=30) == 42
        assert proc.stdout.read() == f"got {int(sig)}\n"


def test_signals_to_git_reach_the_command(repo: Repo) -> None:
    """Through `git checkpoint`, git passes SIGTERM on to CMD, waits, then dies of it."""
    marker = repo.path.parent / "got-term"
    script = (
        "import pathlib, signal, sys, time\n"
        "def stop(n, f):\n"
        f"    pathlib.Path({str(marker)!r}).write_text('term'); sys.exit(42)\n"
        "signal.signal(signal.SIGTERM, stop)\n"
        "print('ready', flush=True); time.sleep(60)"
    )
    proc = subprocess.Popen(
        ["git", "checkpoint", "guard", "--", sys.executable, "-c", script],
        cwd=repo.path,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == -signal.SIGTERM  # git re-raises it, as a shell would see
    assert marker.read_text() == "term"


def test_sigpipe_is_default_again_for_the_command(repo: Repo) -> None:
    proc = subprocess.run(
        ["bash", "-c", "git checkpoint guard -- yes | head -n 2"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert proc.stdout == "y\ny\n"
    assert "Broken pipe" not in proc.stderr


def test_usage_without_a_command(repo: Repo) -> None:
    proc = repo.cp("guard", expect=2)
    assert proc.stderr.count("\n") == 1


def test_environment_is_untouched_for_the_command(repo: Repo) -> None:
    repo.write("x.txt", "x")
    proc = guard(repo.path, "sh", "-c", 'rm x.txt; echo "[$GIT_CHECKPOINT_HOOK_ACTIVE]"')
    assert proc.stdout == "[]\n"
    assert os.environ.get("GIT_CHECKPOINT_HOOK_ACTIVE") is None


def test_a_deleted_folder_never_stops_the_command(tmp_path: Path) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    proc = subprocess.run(
        ["bash", "-c", f"cd {gone} && rmdir {gone} && git checkpoint guard -- echo still here"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0 and proc.stdout == "still here\n", proc.stderr
