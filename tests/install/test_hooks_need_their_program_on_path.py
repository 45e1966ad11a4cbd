"""Installed hooks call `git-checkpoint-hook` by name: `hooks status` and `doctor` check
that it is found on the PATH they run with, and when it is not they say so, with where
the program is and how to make it found, instead of "installed and current"."""

from __future__ import annotations

import json
import os
import subprocess

from ..conftest import BIN, Repo

LAUNCHER = os.path.join(BIN, "git-checkpoint")


def bare_path(repo: Repo, *args: str) -> subprocess.CompletedProcess[str]:
    """`git-checkpoint ARGS` run by its full path with PATH=/usr/bin:/bin."""
    return subprocess.run(
        [LAUNCHER, *args], cwd=repo.path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PATH": "/usr/bin:/bin"}, check=False,
    )  # fmt: skip


def test_hooks_status_says_the_hook_program_is_not_found(repo: Repo) -> None:
    repo.cp("hooks", "install", "--agent", "claude-code", "--git")
    assert "not on PATH" not in repo.cp("hooks", "status").stderr
    proc = bare_path(repo, "hooks", "status")
    assert proc.returncode == 0
    assert "git-checkpoint-hook is not on PATH (/usr/bin:/bin)" in proc.stderr
    assert f"ln -s {BIN}/git-checkpoint-hook ~/.local/bin/git-checkpoint-hook" in proc.stderr


def test_doctor_fails_the_hooks_check_when_the_program_is_not_found(repo: Repo) -> None:
    repo.cp("hooks", "install", "--git")
    proc = bare_path(repo, "doctor", "--json")
    checks = {c["name"]: c for c in json.loads(proc.stdout)["checks"]}
    assert checks["hooks"]["status"] == "fail"
    assert "git-checkpoint-hook is not on PATH" in checks["hooks"]["detail"]
    assert f'export PATH="{BIN}:$PATH"' in checks["hooks"]["fix"]


def test_without_installed_hooks_nothing_is_said(repo: Repo) -> None:
    proc = bare_path(repo, "hooks", "status")
    assert "not on PATH" not in proc.stderr
