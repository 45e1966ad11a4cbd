"""hooks/shell/git-checkpoint-guard.sh sourced in a real bash and a real zsh: what a
person types that discards work saves first, the command still runs with its exit code,
and a failed save never stops it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from ..conftest import Repo

SCRIPT = Path(__file__).resolve().parents[2] / "hooks" / "shell" / "git-checkpoint-guard.sh"


SHELLS = [
    "bash",
    pytest.param(
        "zsh",
        marks=pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed"),
    ),
]


def typed(shell: str, cwd: Path, line: str) -> subprocess.CompletedProcess[str]:
    """Run `line` in `shell` after sourcing the guard, as if typed at its prompt."""
    return subprocess.run(
        [shell, "-c", f". {SCRIPT}\n{line}"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def messages(repo: Repo) -> list[str]:
    refs = repo.git("for-each-ref", "--format=%(refname)", "refs/checkpoints/").split()
    return [repo.git("log", "-1", "--format=%s", ref).strip() for ref in refs]


@pytest.mark.parametrize("shell", SHELLS)
def test_git_reset_hard_saves_first(shell: str, repo: Repo) -> None:
    repo.write("src/app.py", "work in progress\n")
    proc = typed(shell, repo.path, "git reset --hard -q; echo rc=$?")
    assert proc.stdout == "rc=0\n", proc.stderr
    assert "checkpoint saved: cp_001 (before: git reset --hard -q)" in proc.stderr
    assert (repo.path / "src/app.py").read_text() == "print('hello')\n"
    repo.cp("restore", "cp_001")
    assert (repo.path / "src/app.py").read_text() == "work in progress\n"


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize(
    "line",
    [
        "git checkout -- src/app.py",
        "git checkout src/app.py",
        "git checkout .",
        "git restore src/app.py",
        "git clean -fdq",
        "git stash -q",
        "git -C src checkout -- app.py",
        "git switch --discard-changes main -q",
    ],
)
def test_discarding_forms_save_first(shell: str, line: str, repo: Repo) -> None:
    repo.write("src/app.py", "work in progress\n")
    repo.write("untracked.txt", "new\n")
    proc = typed(shell, repo.path, line)
    assert proc.returncode == 0, proc.stderr
    assert len(messages(repo)) == 1, proc.stderr
    repo.cp("restore", "cp_001")
    assert (repo.path / "src/app.py").read_text() == "work in progress\n"
    assert (repo.path / "untracked.txt").read_text() == "new\n"


@pytest.mark.parametrize("shell", SHELLS)
@pytest.mark.parametrize(
    "line",
    [
        "git status --short",
        "git diff",
        "git log --oneline",
        "git stash list",
        "git restore --staged src/app.py",
        "git clean -n",
        "git checkout -b feature -q",
        "git checkpoint list",
        "rm -f untracked.txt",
    ],
)
def test_harmless_forms_save_nothing(shell: str, line: str, repo: Repo) -> None:
    repo.write("src/app.py", "work in progress\n")
    repo.write("untracked.txt", "new\n")
    proc = typed(shell, repo.path, line)
    assert proc.returncode == 0, proc.stderr
    assert messages(repo) == []
    assert "git-checkpoint:" not in proc.stderr


@pytest.mark.parametrize("shell", SHELLS)
def test_rm_recursive_saves_first(shell: str, repo: Repo) -> None:
    repo.write("data/results.csv", "precious\n")
    proc = typed(shell, repo.path, "rm -rf data && echo gone")
    assert proc.stdout == "gone\n" and not (repo.path / "data").exists()
    assert len(messages(repo)) == 1 and "before: rm -rf data" in proc.stderr
    repo.cp("restore", "cp_001")
    assert (repo.path / "data/results.csv").read_text() == "precious\n"


@pytest.mark.parametrize("shell", SHELLS)
def test_exit_codes_pass_through(shell: str, repo: Repo) -> None:
    proc = typed(shell, repo.path, "git status --no-such-option; echo rc=$?")
    assert proc.stdout.endswith("rc=129\n")
    proc = typed(shell, repo.path, "git rebase no-such-branch; echo rc=$?")
    assert proc.stdout.endswith("rc=128\n")
    proc = typed(shell, repo.path, "rm -r no-such-dir; echo rc=$?")
    assert proc.stdout.endswith("rc=1\n")


@pytest.mark.parametrize("shell", SHELLS)
def test_a_failed_save_never_stops_the_command(shell: str, repo: Repo) -> None:
    repo.write(".checkpoint.yaml", "limits: {overlay_max_files: 1, on_exceed: refuse}\n")
    repo.write("notes.txt", "untracked: over the limit, so the save fails\n")
    repo.write("src/app.py", "work in progress\n")
    proc = typed(shell, repo.path, "git reset --hard -q; echo rc=$?")
    assert proc.stdout == "rc=0\n"
    assert (repo.path / "src/app.py").read_text() == "print('hello')\n"
    lines = proc.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("git-checkpoint: no checkpoint saved (")


@pytest.mark.parametrize("shell", SHELLS)
def test_outside_a_repository_rm_is_just_rm(shell: str, tmp_path: Path) -> None:
    (tmp_path / "d").mkdir()
    proc = typed(shell, tmp_path, "rm -r d; echo rc=$?")
    assert proc.stdout == "rc=0\n" and proc.stderr == ""
    assert not (tmp_path / "d").exists()


@pytest.mark.parametrize("shell", SHELLS)
def test_switched_off(shell: str, repo: Repo) -> None:
    repo.write("src/app.py", "work in progress\n")
    proc = typed(shell, repo.path, "GIT_CHECKPOINT_GUARD=off; git reset --hard -q")
    assert proc.returncode == 0 and messages(repo) == []
    repo.write("src/app.py", "again\n")
    proc = typed(shell, repo.path, "command git reset --hard -q")
    assert proc.returncode == 0 and messages(repo) == []
