"""The pre-push hook (entry/hook.py::_push_with_branch) now pushes the pushed branches'
checkpoints in process instead of running `git checkpoint push`. With
checkpoint.pushWithBranch it must still push them, from the main worktree and from a
linked one, under checkpoint.taskPrefix, without recursing; and any failure (a name
taken on the remote, a secret under on_push: block, a broken .checkpoint.yaml, a remote
given as a URL) is one line on stderr that never stops the branch's push."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from ..conftest import Repo

AWS = 'AWS = "AKIAZ3MHPQRS7TUVWXYZ"\nS = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq9ETg5Yk2"\n'


def git_run(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=False,
        env=dict(os.environ), timeout=120,
    )  # fmt: skip


def remote_refs(remote: Path) -> list[str]:
    return git_run(remote, "for-each-ref", "--format=%(refname)").stdout.split()


def ours(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ln.startswith("git-checkpoint:")]


@pytest.fixture
def pushing(repo: Repo, tmp_path: Path) -> tuple[Repo, Path]:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    repo.git("remote", "add", "origin", f"file://{remote}")
    repo.cp("hooks", "install", "--git")
    repo.git("config", "checkpoint.pushWithBranch", "true")
    repo.write("work.txt", "saved\n")
    repo.cp("save", "-m", "mine")
    repo.write("more.txt", "more\n")
    repo.commit_all("more")
    return repo, remote


def test_the_branch_and_its_checkpoints_go_once(pushing: tuple[Repo, Path]) -> None:
    repo, remote = pushing
    proc = git_run(repo.path, "push", "-q", "origin", "main")
    assert proc.returncode == 0, proc.stderr
    refs = remote_refs(remote)
    assert "refs/heads/main" in refs and "refs/checkpoints/main/cp_001" in refs, refs
    assert len(ours(proc.stderr)) <= 1, proc.stderr
    assert "Traceback" not in proc.stderr


def test_under_a_task_prefix(pushing: tuple[Repo, Path]) -> None:
    repo, remote = pushing
    repo.git("config", "checkpoint.taskPrefix", "laptop/")
    proc = git_run(repo.path, "push", "-q", "origin", "main")
    assert proc.returncode == 0, proc.stderr
    assert "refs/checkpoints/laptop/main/cp_001" in remote_refs(remote), proc.stderr


def test_from_a_linked_worktree(pushing: tuple[Repo, Path], tmp_path: Path) -> None:
    repo, remote = pushing
    wt = tmp_path / "side-wt"
    repo.git("worktree", "add", "-q", "-b", "side", str(wt))
    (wt / "side.txt").write_text("side work\n")
    assert git_run(wt, "checkpoint", "save", "-m", "side").returncode == 0
    (wt / "side2.txt").write_text("side commit\n")
    git_run(wt, "add", "-A")
    git_run(wt, "commit", "-q", "-m", "side")
    proc = git_run(wt, "push", "-q", "origin", "side")
    assert proc.returncode == 0, proc.stderr
    refs = remote_refs(remote)
    assert "refs/heads/side" in refs and "refs/checkpoints/side/cp_001" in refs, (refs, proc.stderr)


def test_a_name_taken_on_the_remote_is_one_line_and_the_push_goes_on(
    pushing: tuple[Repo, Path], tmp_path: Path
) -> None:
    repo, remote = pushing
    other = git_run(repo.path, "rev-parse", "HEAD").stdout.strip()
    git_run(
        repo.path, "push", "-q", "--no-verify", "origin", f"{other}:refs/checkpoints/main/cp_001"
    )
    proc = git_run(repo.path, "push", "-q", "origin", "main")
    assert proc.returncode == 0, proc.stderr
    assert "refs/heads/main" in remote_refs(remote)
    lines = ours(proc.stderr)
    assert len(lines) == 1 and "not pushed with the branch" in lines[0], proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_secret_blocks_the_checkpoints_not_the_branch(pushing: tuple[Repo, Path]) -> None:
    repo, remote = pushing
    repo.write("leak.py", AWS)
    repo.cp("save", "-m", "with a key")
    proc = git_run(repo.path, "push", "-q", "origin", "main")
    assert proc.returncode == 0, proc.stderr
    refs = remote_refs(remote)
    assert "refs/heads/main" in refs
    assert not any(r.startswith("refs/checkpoints/") for r in refs), refs
    lines = ours(proc.stderr)
    assert len(lines) == 1 and "secrets found" in lines[0], proc.stderr


def test_a_broken_config_is_one_line_and_the_push_goes_on(pushing: tuple[Repo, Path]) -> None:
    repo, remote = pushing
    repo.write(".checkpoint.yaml", "no_such_key: 1\n")
    proc = git_run(repo.path, "push", "-q", "origin", "main")
    assert proc.returncode == 0, proc.stderr
    assert "refs/heads/main" in remote_refs(remote)
    lines = ours(proc.stderr)
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_push_to_a_url_is_one_line_at_most(pushing: tuple[Repo, Path]) -> None:
    repo, remote = pushing
    proc = git_run(repo.path, "push", "-q", f"file://{remote}", "main")
    assert proc.returncode == 0, proc.stderr
    assert "refs/heads/main" in remote_refs(remote)
    assert len(ours(proc.stderr)) <= 1, proc.stderr
    assert "Traceback" not in proc.stderr


def test_the_hook_with_no_input_and_closed_stdin_does_nothing(pushing: tuple[Repo, Path]) -> None:
    repo, _ = pushing
    proc = subprocess.run(
        ["git-checkpoint-hook", "git", "pre-push", "origin", "x"], cwd=repo.path,
        stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
