"""The command line as a person meets it: colour on a terminal only, help, entry points."""

from __future__ import annotations

import os
import pty
import subprocess
import sys

from ..conftest import Repo


def run_on_terminal(repo: Repo, *args: str, env: dict[str, str]) -> str:
    """Run git checkpoint with stdout on a pseudo-terminal; return what it printed."""
    leader, follower = pty.openpty()
    try:
        proc = subprocess.run(
            ["git", "checkpoint", *args],
            cwd=repo.path,
            stdout=follower,
            stderr=subprocess.PIPE,
            env=env,
            check=False,
            timeout=60,
        )
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:
                break
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(leader)
    assert proc.returncode == 0, proc.stderr
    return b"".join(chunks).decode()


def test_colour_only_on_a_terminal_and_never_with_no_color(repo: Repo) -> None:
    repo.write(".checkpoint.yaml", "verifiers:\n  - {name: unit, command: 'true'}\n")
    repo.commit_all("verifiers")
    repo.cp("verify")
    env = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
    on_terminal = run_on_terminal(repo, "list", env=env)
    assert "\x1b[" in on_terminal and "promoted" in on_terminal
    assert "\x1b[" not in run_on_terminal(repo, "list", env={**env, "NO_COLOR": "1"})
    piped = subprocess.run(
        ["git", "checkpoint", "list"], cwd=repo.path, env=env, capture_output=True, text=True
    )
    assert "\x1b[" not in piped.stdout and "promoted" in piped.stdout


def test_python_dash_m_and_version(repo: Repo) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "git_checkpoint", "--version"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0 and "git-checkpoint, version" in proc.stdout
    proc = subprocess.run(
        [sys.executable, "-m", "git_checkpoint", "save"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0 and "checkpoint saved: cp_001" in proc.stdout


def test_help_and_bad_options(repo: Repo) -> None:
    assert "restore" in repo.cp("-h").stdout  # `git checkpoint --help` is git asking for a man page
    assert "--move-head" in repo.cp("restore", "--help").stdout  # past the verb, it is ours
    proc = repo.cp("save", "--bogus", expect=2)
    assert proc.stderr.count("\n") == 1 and "--bogus" in proc.stderr
    proc = repo.cp("frobnicate", expect=2)
    assert proc.stderr.count("\n") == 1


def test_works_from_a_subfolder(repo: Repo) -> None:
    repo.write("src/deep/new.py", "x = 1\n")
    proc = repo.cp("save", cwd=repo.path / "src" / "deep")
    assert "checkpoint saved: cp_001" in proc.stdout
    files = repo.cp_json("show", "cp_001")["overlay_files"]
    assert files == ["src/deep/new.py"]
