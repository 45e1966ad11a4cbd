"""The early scan writes nothing where git would not: no folders for a `.git` file that
names nowhere or a pruned worktree, nothing into an empty `.git` below the work tree or
into a repository another user owns; and a symlinked `.git` is one lock, not two."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from ..conftest import Repo
from ..launcher import no_traceback


def test_a_symlinked_dot_git_does_not_wait_for_its_own_lock(repo: Repo, tmp_path: Path) -> None:
    real = tmp_path / "gitdir-elsewhere"
    (repo.path / ".git").rename(real)
    (repo.path / ".git").symlink_to(real)
    repo.git("config", "checkpoint.lockTimeout", "2")
    repo.write("src/app.py", "changed\n")
    started = time.monotonic()
    proc = repo.cp("save", "-m", "x", expect=None)
    took = time.monotonic() - started
    assert proc.returncode == 0 and took < 1.5, (proc.returncode, took, proc.stderr)


def test_a_pruned_worktree_git_file_recreates_nothing(repo: Repo) -> None:
    wt = Repo(repo.path.parent / "wt")
    repo.git("worktree", "add", "-q", str(wt.path))
    admin = repo.path / ".git/worktrees/wt"
    shutil.rmtree(admin)
    proc = wt.cp("save", "-m", "x", expect=2)
    no_traceback(proc)
    assert not admin.exists(), sorted(str(p) for p in admin.rglob("*"))


def test_a_git_file_naming_nowhere_creates_no_folders(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / ".git").write_text("gitdir: ../nowhere/deep\n")
    proc = Repo(work).cp("save", "-m", "x", expect=2)
    no_traceback(proc)
    assert not (tmp_path / "nowhere").exists()


def test_an_empty_dot_git_folder_in_a_subfolder_is_not_written(repo: Repo) -> None:
    (repo.path / "sub/.git").mkdir(parents=True)
    repo.write("sub/file.txt", "s\n")
    repo.write("src/app.py", "changed\n")
    repo.cp("save", "-m", "x", cwd=repo.path / "sub")
    assert list((repo.path / "sub/.git").iterdir()) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the repository away")
def test_an_untrusted_repository_gets_no_state_written_by_another_user(repo: Repo) -> None:
    repo.write("src/app.py", "changed\n")
    for dirpath, dirnames, filenames in os.walk(repo.path):
        for name in [*dirnames, *filenames]:
            os.lchown(os.path.join(dirpath, name), 4242, 4242)
    os.lchown(repo.path, 4242, 4242)
    proc = repo.cp("save", "-m", "x", expect=None)
    assert proc.returncode != 0  # git: dubious ownership
    no_traceback(proc)
    made = repo.path / ".git/checkpoint"
    assert not made.exists() or made.stat().st_uid == 4242
