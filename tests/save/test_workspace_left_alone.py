"""A save reads the workspace and never writes it: the index and the work tree are as
they were, and a racy same-size rewrite is still seen."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from ..conftest import Repo
from ..helpers import REF1
from .conftest import blob


def test_racy_git_same_size_rewrite(repo: Repo) -> None:
    """`git add` then a same-size rewrite in the same second: the index entry looks clean
    by stat alone; only the index's own mtime tells git to look at the content."""
    target = repo.path / "src" / "app.py"
    for _attempt in range(5):
        now = time.time()
        if now - int(now) > 0.5:
            time.sleep(1 - (now - int(now)) + 0.02)
        target.write_text("AAAA\n")
        repo.git("add", "src/app.py")
        target.write_text("BBBB\n")
        index_sec = int((repo.path / ".git" / "index").stat().st_mtime)
        if int(target.stat().st_mtime) == index_sec:
            break
    else:
        pytest.skip("could not rewrite within the same second")
    time.sleep(1.1)  # a copy of the index made now would look newer than the file
    repo.cp("save")
    assert blob(repo, f"{REF1}^2", "src/app.py") == b"AAAA\n"
    assert blob(repo, REF1, "src/app.py") == b"BBBB\n"


def work_tree_state(root: Path) -> dict[str, tuple[int, int, bytes]]:
    return {
        p.relative_to(root).as_posix(): (p.lstat().st_mtime_ns, p.lstat().st_mode, p.read_bytes())
        for p in root.rglob("*")
        if p.is_file() and not p.is_symlink() and ".git" not in p.relative_to(root).parts
    }


def test_save_leaves_index_and_work_tree_alone(repo: Repo) -> None:
    repo.write("src/app.py", "staged\n")
    repo.git("add", "src/app.py")
    repo.write("src/app.py", "unstaged\n")
    repo.write("README.md", "mod\n")
    repo.write("new.txt", "n\n")
    repo.write("x.log", "ignored\n")
    repo.write(".env", "S=1\n")
    repo.git("status", "--porcelain")  # let git refresh its own index first
    index = repo.path / ".git" / "index"
    status_before = repo.git("status", "--porcelain", "--ignored")
    before_bytes, before_mtime = index.read_bytes(), index.stat().st_mtime_ns
    files_before = work_tree_state(repo.path)
    git_dir_before = sorted(p.name for p in (repo.path / ".git").iterdir())

    repo.cp("save")
    repo.cp("save")  # the unchanged path too
    repo.cp("save", "--task", "other", "--include", "x.log")

    assert index.read_bytes() == before_bytes
    assert index.stat().st_mtime_ns == before_mtime
    assert work_tree_state(repo.path) == files_before
    assert repo.git("status", "--porcelain", "--ignored") == status_before
    git_dir_after = sorted(p.name for p in (repo.path / ".git").iterdir())
    assert [n for n in git_dir_after if n not in git_dir_before] == ["checkpoint"]
    assert not (repo.path / ".git" / "index.lock").exists()
