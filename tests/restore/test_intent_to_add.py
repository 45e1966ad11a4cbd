"""Intent-to-add entries (`git add -N`) come back marked: committed since, with odd
names, on an ignored path, in index versions 2 and 4; the placeholder a restore writes
for a mark whose file is gone leaves nothing behind, and killed while it exists, undo
and --continue are whole."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..conftest import Repo
from ..helpers import state
from ..launcher import REAL_GIT
from .conftest import (
    copy_repo,
    full_state,
    git_wrapper,
    marked_then_deleted,
    needs_cp,
    run_with_git,
)


@pytest.mark.parametrize("head", ["--keep-head", "--move-head"])
def test_an_intent_to_add_path_committed_since_is_restored_as_intent_to_add(
    repo: Repo, head: str
) -> None:
    repo.write("n.py", "new\n")
    repo.git("add", "-N", "n.py")
    repo.cp("save", "-m", "ita")
    staged = repo.git("ls-files", "-s", "n.py")
    repo.git("add", "n.py")
    repo.commit_all("add n")
    done = repo.cp("restore", "cp_001", head, expect=None)
    assert done.returncode == 0, done.stderr
    assert repo.git("ls-files", "-s", "n.py") == staged  # the placeholder, stage 0
    assert repo.git("diff", "--name-only", "--diff-filter=A").split() == ["n.py"]  # -N
    assert "interrupted" not in repo.cp("status").stdout
    assert (repo.path / "n.py").read_text() == "new\n"


@pytest.mark.parametrize("path", ["new dir/deep/it a.txt", "nl\ndir/x\ny.txt"])
def test_odd_names_come_back_marked_with_no_placeholder_left(repo: Repo, path: str) -> None:
    repo.cp("save", "-m", "base")
    marked_then_deleted(repo, path)
    repo.cp("save", "-m", "marked")
    marked = full_state(repo)
    repo.cp("restore", "cp_001")
    assert not (repo.path / path.split("/")[0]).exists()
    repo.cp("undo")
    assert full_state(repo) == marked
    assert not (repo.path / path).exists()


def test_a_placeholder_in_a_folder_that_holds_ignored_files_leaves_the_folder(
    repo: Repo,
) -> None:
    repo.cp("save", "-m", "base")
    marked_then_deleted(repo, "shared/ita.txt")
    repo.cp("save", "-m", "marked")
    repo.cp("restore", "cp_001")
    repo.write("shared/keep.log", "ignored, mine\n")  # *.log: never managed
    repo.write("shared/mine.txt", "untracked, mine\n")

    repo.cp("restore", "cp_002")
    assert (repo.path / "shared/keep.log").read_text() == "ignored, mine\n"
    assert sorted(p.name for p in (repo.path / "shared").iterdir()) == ["keep.log"]
    assert "shared/ita.txt" in repo.git("ls-files")
    repo.cp("undo")
    assert (repo.path / "shared/mine.txt").read_text() == "untracked, mine\n"
    assert not (repo.path / "shared/ita.txt").exists()
    assert "shared/ita.txt" not in repo.git("ls-files")


@needs_cp
@pytest.mark.parametrize("mode", ["before", "after"])
def test_a_kill_while_the_placeholder_exists_leaves_undo_and_continue_whole(
    repo: Repo, tmp_path: Path, mode: str
) -> None:
    repo.cp("save", "-m", "base")
    marked_then_deleted(repo, "p/q/ita.txt")
    repo.cp("save", "-m", "marked")
    repo.cp("restore", "cp_001")
    repo.write("src/app.py", "print('attempt')\n")
    before = full_state(repo)
    finished = copy_repo(repo, tmp_path / "finished")
    finished.cp("restore", "cp_002")
    after = full_state(finished)
    run = "" if mode == "before" else f'{REAL_GIT} "$@"; '
    wrap = git_wrapper(
        tmp_path,
        f'if [ "$1 $2" = "add --intent-to-add" ]; then {run}kill -KILL $PPID; exit 137; fi',
    )
    killed = run_with_git(repo, wrap, "restore", "cp_002")
    assert killed.returncode == -9, killed.stderr
    other = copy_repo(repo, tmp_path / "other")

    repo.cp("undo")
    assert full_state(repo) == before
    assert not (repo.path / "p").exists()
    other.cp("restore", "--continue")
    assert full_state(other) == after
    assert not (other.path / "p").exists()


def test_an_intent_to_add_entry_on_an_ignored_path_comes_back(repo: Repo) -> None:
    repo.cp("save", "-m", "base")
    marked_then_deleted(repo, "build.log", force=True)  # *.log is ignored
    marked = full_state(repo)
    repo.cp("restore", "cp_001")
    repo.cp("undo")
    assert full_state(repo) == marked


@pytest.mark.parametrize("index_version", ["2", "4"])
def test_intent_to_add_entries_come_back_as_they_were(repo: Repo, index_version: str) -> None:
    repo.git("config", "index.version", index_version)
    repo.cp("save")
    repo.write("n.txt", "new\n")
    repo.git("add", "-N", "n.txt")
    marked = state(repo)
    assert " A n.txt" in repo.git("status", "--short")
    repo.cp("restore", "cp_001")
    assert "n.txt" not in repo.git("status", "--short")  # neither on disk nor in the index
    repo.cp("undo")
    assert state(repo) == marked
    assert " A n.txt" in repo.git("status", "--short")
    repo.cp("save", "-m", "with an intent-to-add entry")
    repo.git("rm", "-q", "--cached", "n.txt")
    repo.cp("restore")
    assert state(repo) == marked
