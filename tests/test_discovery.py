"""Finding the repository without `git rev-parse` when git has described it before
(gitio._confirmed): the walk up to `.git` must find what git said, and neither config
file may have changed since."""

from __future__ import annotations

import os
import time
from pathlib import Path

from .conftest import Repo
from .test_early_scan import traced


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
