"""Git hooks in real git commands: `git rebase`, `git merge` and `git push` (to a bare
file:// remote) fire them, a hook that was there before keeps running and its failure
still stops the command, a checkpoint problem never does, and uninstall leaves the
hooks folder exactly as it was."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from git_checkpoint.install.git_hooks import templates_dir

from ..conftest import Repo
from ..helpers import diverged


def checkpoints(repo: Repo) -> list[str]:
    return repo.git("for-each-ref", "--format=%(refname)", "refs/checkpoints/").split()


def summaries(repo: Repo) -> list[str]:
    return [repo.git("log", "-1", "--format=%s", ref).strip() for ref in checkpoints(repo)]


def git_run(
    repo: Repo, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *args],
        cwd=repo.path,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **(env or {})},
        timeout=120,
    )


def folder_snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    if not folder.exists():
        return {}
    return {
        p.name: (p.read_bytes(), p.stat().st_mode) for p in sorted(folder.iterdir()) if p.is_file()
    }


def foreign_hook(repo: Repo, name: str, body: str) -> Path:
    hooks = repo.path / ".git" / "hooks"
    hooks.mkdir(exist_ok=True)
    path = hooks / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(0o755)
    return path


def test_rebase_saves_first(repo: Repo) -> None:
    diverged(repo)
    repo.write("scratch.txt", "untracked work the rebase leaves alone\n")
    repo.cp("hooks", "install", "--git")
    proc = git_run(repo, "rebase", "main")
    assert proc.returncode == 0, proc.stderr
    assert summaries(repo) == ["checkpoint cp_001 on feature: before rebase onto main"]
    assert "scratch.txt" in repo.git("ls-tree", "-r", "--name-only", checkpoints(repo)[0] + "^3")


def test_merge_commit_saves_first(repo: Repo) -> None:
    diverged(repo)
    repo.git("checkout", "-q", "main")
    repo.write("scratch.txt", "untracked\n")
    repo.cp("hooks", "install", "--git")
    proc = git_run(repo, "merge", "--no-edit", "feature")
    assert proc.returncode == 0, proc.stderr
    assert summaries(repo) == ["checkpoint cp_001 on main: before the merge commit"]


def test_existing_hook_still_runs_and_its_failure_still_stops_rebase(repo: Repo) -> None:
    diverged(repo)
    marker = repo.path.parent / "legacy-ran"
    foreign_hook(repo, "pre-rebase", f'echo "$@" > "{marker}"\nexit 1\n')
    repo.write("scratch.txt", "untracked\n")
    repo.cp("hooks", "install", "--git")
    head = repo.git("rev-parse", "HEAD")
    proc = git_run(repo, "rebase", "main")
    assert proc.returncode != 0  # the old hook said no: the rebase does not happen
    assert marker.read_text().strip() == "main"
    assert repo.git("rev-parse", "HEAD") == head
    assert len(checkpoints(repo)) == 1  # ours ran first


def test_push_chains_with_an_existing_pre_push_hook(repo: Repo, tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    repo.git("remote", "add", "origin", f"file://{remote}")
    seen = tmp_path / "seen"
    hook = foreign_hook(repo, "pre-push", f'echo "args: $@" > "{seen}"\ncat >> "{seen}"\nexit 0\n')
    repo.cp("hooks", "install", "--git")
    proc = git_run(repo, "push", "-q", "origin", "main")
    assert proc.returncode == 0, proc.stderr
    text = seen.read_text()
    assert text.startswith(f"args: origin file://{remote}")
    assert "refs/heads/main" in text  # the old hook still got the refs on its stdin
    hook_legacy = hook.with_name("pre-push.checkpoint-legacy")
    hook_legacy.write_text("#!/bin/sh\ncat >/dev/null\necho refused >&2\nexit 1\n")
    repo.write("more.txt", "more\n")
    repo.commit_all("more")
    proc = git_run(repo, "push", "-q", "origin", "main")
    assert proc.returncode != 0  # its failure still fails the push
    assert "refused" in proc.stderr


def test_push_with_branch_pushes_the_branch_checkpoints_too(repo: Repo, tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    repo.git("remote", "add", "origin", f"file://{remote}")
    repo.cp("hooks", "install", "--git")
    repo.write("work.txt", "saved\n")
    repo.cp("save", "-m", "mine")

    def remote_refs() -> str:
        return subprocess.run(
            ["git", "for-each-ref", "--format=%(refname)"],
            cwd=remote,
            capture_output=True,
            text=True,
            check=True,
        ).stdout

    assert git_run(repo, "push", "-q", "origin", "main").returncode == 0
    assert "refs/checkpoints/" not in remote_refs()  # not asked for: the branch only
    repo.git("config", "checkpoint.pushWithBranch", "true")
    repo.write("more.txt", "more\n")
    repo.commit_all("more")
    proc = git_run(repo, "push", "-q", "origin", "main")
    assert proc.returncode == 0, proc.stderr
    assert "refs/checkpoints/main/cp_001" in remote_refs()
    assert "refs/heads/main" in remote_refs()


def test_a_checkpoint_problem_never_stops_git(repo: Repo) -> None:
    diverged(repo)
    repo.cp("hooks", "install", "--git")
    repo.write(".checkpoint.yaml", "limits: {overlay_max_files: 1, on_exceed: refuse}\n")
    repo.write("notes.txt", "untracked: over the limit, so every save now fails\n")
    proc = git_run(repo, "rebase", "main")
    assert proc.returncode == 0, proc.stderr
    assert "git-checkpoint: no checkpoint saved" in proc.stderr
    assert checkpoints(repo) == []


def test_recursion_guard_skips_the_save(repo: Repo) -> None:
    diverged(repo)
    repo.write("scratch.txt", "untracked\n")
    repo.cp("hooks", "install", "--git")
    proc = git_run(repo, "rebase", "main", env={"GIT_CHECKPOINT_HOOK_ACTIVE": "1"})
    assert proc.returncode == 0, proc.stderr
    assert checkpoints(repo) == []


def test_install_uninstall_leaves_the_hooks_folder_byte_identical(repo: Repo) -> None:
    foreign_hook(repo, "pre-push", "exit 0\n")
    foreign_hook(repo, "post-commit", "echo hi\n")
    (repo.path / ".git" / "hooks" / "pre-rebase.sample").write_text("sample\n")
    hooks = repo.path / ".git" / "hooks"
    before = folder_snapshot(hooks)
    inode = (hooks / "pre-push").stat().st_ino
    repo.cp("hooks", "install", "--git")
    repo.cp("hooks", "install", "--git")  # twice: the chained hook is not lost
    assert (hooks / "pre-push.checkpoint-legacy").stat().st_ino == inode
    status = repo.cp("hooks", "status", "--git").stdout
    assert "pre-rebase installed" in status and "pre-push installed (chained)" in status
    repo.cp("hooks", "uninstall", "--git")
    assert folder_snapshot(hooks) == before
    assert (hooks / "pre-push").stat().st_ino == inode


def test_missing_hooks_folder_is_created_and_removed_again(repo: Repo) -> None:
    hooks = repo.path / ".git" / "hooks"
    assert not hooks.exists()  # the tests' empty template dir makes none
    repo.cp("hooks", "install", "--git")
    assert (hooks / "pre-rebase").exists()
    repo.cp("hooks", "uninstall", "--git")
    assert not hooks.exists()


def test_core_hooks_path_is_respected(repo: Repo) -> None:
    repo.git("config", "core.hooksPath", ".githooks/deep")
    diverged(repo)
    repo.write("scratch.txt", "untracked\n")
    repo.cp("hooks", "install", "--git")
    assert (repo.path / ".githooks" / "deep" / "pre-rebase").exists()
    assert not (repo.path / ".git" / "hooks" / "pre-rebase").exists()
    assert git_run(repo, "rebase", "main").returncode == 0
    assert len(checkpoints(repo)) == 1
    repo.cp("hooks", "uninstall", "--git")
    assert not (repo.path / ".githooks").exists()


def test_a_taken_legacy_name_is_refused(repo: Repo) -> None:
    foreign_hook(repo, "pre-rebase", "exit 0\n")
    foreign_hook(repo, "pre-rebase.checkpoint-legacy", "exit 0\n")
    before = folder_snapshot(repo.path / ".git" / "hooks")
    proc = repo.cp("hooks", "install", "--git", expect=3)
    assert "exists already" in proc.stderr
    assert folder_snapshot(repo.path / ".git" / "hooks") == before


def test_a_hook_that_runs_by_its_own_name_is_refused_untouched(repo: Repo) -> None:
    repo.git("config", "core.hooksPath", ".husky/_")
    hooks = repo.path / ".husky" / "_"
    hooks.mkdir(parents=True)
    (hooks / "h").write_text('#!/usr/bin/env sh\nn=$(basename "$0")\n. ".husky/$n"\n')
    (hooks / "pre-push").write_text('#!/usr/bin/env sh\n. "$(dirname "$0")/h"\n')
    (hooks / "pre-push").chmod(0o755)
    before = folder_snapshot(hooks)
    proc = repo.cp("hooks", "install", "--git", expect=3)
    assert "by its own file name" in proc.stderr
    assert folder_snapshot(hooks) == before


@pytest.mark.parametrize("name", ["pre-rebase", "pre-merge-commit", "pre-push"])
def test_templates_are_posix_shell(name: str) -> None:
    template = templates_dir() / "git" / name
    assert subprocess.run(["sh", "-n", str(template)], check=False).returncode == 0
    assert os.access(template, os.X_OK)


def test_the_top_level_hooks_folder_is_the_package_templates() -> None:
    """One copy: the package's (what every installer ships); `hooks/` at the top of the
    repository is a link to it, for the paths its users source."""
    top = Path(__file__).parents[2] / "hooks"
    assert top.is_symlink() and top.resolve() == templates_dir().resolve()


def test_a_shared_hooks_path_outside_the_repository_is_named_as_such(
    repo: Repo, tmp_path: Path
) -> None:
    shared = tmp_path / "shared-hooks"
    repo.git("config", "core.hooksPath", str(shared))
    out = repo.cp("hooks", "install", "--git").stdout
    assert "shared with others" in out and (shared / "pre-rebase").exists()
    repo.cp("hooks", "uninstall", "--git")
    assert not shared.exists()
