"""Finding the repository without `git rev-parse` when git has described it before
(`.git/checkpoint/paths`, gitcore/locate): the walk up to `.git` must find what git said,
and neither config file may have changed since; a moved repository, a linked worktree
and a `.git` file are found where they now are, and the git dir is never taken for a
work tree."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from ..conftest import Repo
from ..helpers import fingerprint
from ..launcher import traced


def asked_git(calls: list[list[str]]) -> bool:
    return any(c[:1] == ["rev-parse"] and "--show-toplevel" in c for c in calls)


def test_the_second_command_asks_git_no_more(repo: Repo) -> None:
    repo.cp("save", "-m", "one")
    said = (repo.path / ".git/checkpoint/paths").read_text().splitlines()
    git_dir = str((repo.path / ".git").resolve())
    assert said == [str(repo.path.resolve()), git_dir, git_dir]
    (repo.path / "src").mkdir(exist_ok=True)
    repo.write("src/app.py", "print('two')\n")
    assert not asked_git(traced(repo, "save", "-m", "two"))
    assert not asked_git(traced(repo, "list"))
    assert "cp_002" in repo.cp("list").stdout


def test_a_config_change_asks_git_again(repo: Repo, tmp_path: Path) -> None:
    """core.worktree moves the work tree: git's word counts, read again after any edit
    of the config."""
    repo.cp("save", "-m", "one")
    time.sleep(0.01)
    repo.git("config", "checkpoint.lockTimeout", "20")
    assert asked_git(traced(repo, "list"))
    assert not asked_git(traced(repo, "list"))  # confirmed again
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "only-here.txt").write_text("x\n")
    time.sleep(0.01)
    repo.git("config", "core.worktree", str(elsewhere))
    calls = traced(repo, "status", expect=None)
    assert asked_git(calls)


def test_a_wrong_or_broken_paths_file_is_no_answer(repo: Repo, tmp_path: Path) -> None:
    repo.cp("save", "-m", "one")
    paths = repo.path / ".git/checkpoint/paths"
    other = tmp_path / "other"
    other.mkdir()
    for text in (
        f"{other}\n{repo.path / '.git'}\n{repo.path / '.git'}\n",  # another top
        "not\nthree lines\n",
        "",
        "\0\n\0\n\0\n",
    ):
        paths.write_text(text)
        os.utime(paths, ns=(time.time_ns() + 10**9,) * 2)  # newer than the config
        assert asked_git(traced(repo, "list")), text
    assert paths.read_text().splitlines()[0] == str(repo.path.resolve())


def test_each_linked_worktree_keeps_its_own(repo: Repo, tmp_path: Path) -> None:
    linked = tmp_path / "linked"
    repo.git("worktree", "add", "-q", str(linked), "-b", "side")
    other = Repo(linked)
    other.cp("save", "-m", "side")
    assert asked_git(traced(other, "list")) is False
    said = (repo.path / ".git/worktrees/linked/checkpoint/paths").read_text().splitlines()
    assert said[0] == str(linked.resolve())
    assert said[2] == str((repo.path / ".git").resolve())
    assert "side" in other.cp("list").stdout


def test_git_dir_in_the_environment_is_git_s_to_read(repo: Repo) -> None:
    repo.cp("save", "-m", "one")
    trace = repo.path.parent / "trace-env.txt"
    repo.cp("list", env={"GIT_TRACE2": str(trace), "GIT_DIR": str(repo.path / ".git")})
    assert "--show-toplevel" in trace.read_text()


# --- the `paths` cache: git refuses a command run from inside the git dir -----------------


@pytest.mark.parametrize("inside", [".git", ".git/objects", ".git/refs/heads"])
def test_inside_the_git_dir_is_not_a_work_tree_after_a_save_either(repo: Repo, inside: str) -> None:
    before = repo.cp("list", cwd=repo.path / inside, expect=None)
    assert before.returncode == 2, before  # git: "this operation must be run in a work tree"
    repo.write("src/app.py", "print('two')\n")
    repo.cp("save", "-m", "one")  # writes .git/checkpoint/paths
    repo.write("src/app.py", "print('three')\n")
    after = repo.cp("save", "-m", "two", cwd=repo.path / inside, expect=None)
    assert after.returncode == before.returncode, after.stdout + after.stderr


# --- where the repository is: moved, linked, a `.git` file, `git -c` --------------------------


def test_a_moved_repository_saves_and_restores_where_it_now_is(repo: Repo, tmp_path: Path) -> None:
    repo.write("src/app.py", "print('two')\n")
    repo.cp("save", "-m", "here")
    moved = Repo(tmp_path / "moved")
    os.rename(repo.path, moved.path)
    moved.write("src/app.py", "print('three')\n")
    moved.write("extra.txt", "untracked\n")
    moved.cp("save", "-m", "there", cwd=moved.path / "src")
    paths = (moved.path / ".git/checkpoint/paths").read_text().split("\n")
    assert paths[0] == str(moved.path), paths
    saved = fingerprint(moved.path)
    moved.cp("restore", "cp_001")
    assert (moved.path / "src/app.py").read_text() == "print('two')\n"
    moved.cp("undo")
    assert fingerprint(moved.path) == saved
    moved.git("fsck", "--strict", "--no-dangling")


def test_a_linked_worktree_and_a_gitdir_file_save_and_restore(repo: Repo, tmp_path: Path) -> None:
    repo.cp("save", "-m", "main first")
    wt = Repo(tmp_path / "wt")
    repo.git("worktree", "add", "-q", "-b", "side", str(wt.path))
    for n in range(2):
        wt.write("src/app.py", f"print('wt {n}')\n")
        wt.write(f"wt-new{n}.txt", f"{n}\n")
        wt.cp("save", "-m", f"wt {n}")
        repo.write("src/app.py", f"print('main {n}')\n")
        repo.cp("save", "-m", f"main {n}")
    assert wt.cp_json("list")  # the worktree's task
    saved_wt, saved_main = fingerprint(wt.path), fingerprint(repo.path, skip=(".git",))
    wt.write("src/app.py", "scribble\n")
    wt.cp("restore")
    assert fingerprint(wt.path) == saved_wt
    assert fingerprint(repo.path) == saved_main
    sep = Repo(tmp_path / "sep")
    subprocess.run(
        ["git", "init", "-q", "--separate-git-dir", str(tmp_path / "sep.git"), str(sep.path)],
        check=True,
    )
    sep.write("f.txt", "one\n")
    sep.commit_all("one")
    sep.write("f.txt", "two\n")
    sep.cp("save", "-m", "sep")
    sep.write("f.txt", "three\n")
    sep.cp("save", "-m", "sep again", cwd=sep.path)
    sep.cp("restore", "cp_001")
    assert (sep.path / "f.txt").read_text() == "two\n"
    for r in (repo, sep):
        r.git("fsck", "--strict", "--no-dangling")


def test_the_existing_folder_on_the_way_to_a_path(tmp_path: Path) -> None:
    from git_checkpoint.gitcore.locate import PATH_MAX, existing_folder

    (tmp_path / "a/b").mkdir(parents=True)
    assert existing_folder(str(tmp_path / "a/b")) == str(tmp_path / "a/b")
    assert existing_folder(str(tmp_path / "a/b/c/d.txt")) == str(tmp_path / "a/b")
    assert existing_folder(str(tmp_path / "a/b/../x/y")) == str(tmp_path / "a")
    deep = str(tmp_path / "a") + "/b" * (PATH_MAX * 50)  # below `b`, too long to reach
    assert existing_folder(deep) == str(tmp_path / "a/b")
