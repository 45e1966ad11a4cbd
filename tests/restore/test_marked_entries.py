"""skip-worktree and assume-unchanged entries: an edit below the mark is captured, and a
restore and its undo give back the bytes and the marks, one or both."""

from __future__ import annotations

import pytest

from ..conftest import Repo
from ..helpers import state


@pytest.mark.parametrize("mark", ["--skip-worktree", "--assume-unchanged"])
def test_marked_entries_are_captured_and_keep_their_mark(repo: Repo, mark: str) -> None:
    repo.write("conf", "v1\n")
    repo.commit_all("conf")
    repo.cp("save", "-m", "one")
    repo.git("update-index", mark, "conf")
    repo.write("conf", "MY PRECIOUS LOCAL EDIT\n")
    repo.cp("save", "-m", "edit")  # not "unchanged": the edit is work
    assert repo.git("show", "refs/checkpoints/main/cp_002:conf") == "MY PRECIOUS LOCAL EDIT\n"
    before = state(repo)
    flags = repo.git("ls-files", "-v", "conf")
    repo.cp("restore", "cp_001")
    assert (repo.path / "conf").read_text() == "v1\n"
    repo.cp("undo")
    assert state(repo) == before
    assert repo.git("ls-files", "-v", "conf") == flags


def test_both_marks_survive(repo: Repo) -> None:
    repo.write("conf", "v1\n")
    repo.commit_all("conf")
    repo.cp("save")
    repo.git("update-index", "--skip-worktree", "conf")
    repo.git("update-index", "--assume-unchanged", "conf")
    repo.write("conf", "local\n")
    marks = repo.git("ls-files", "-v", "conf")
    repo.cp("restore")
    repo.cp("undo")
    assert (repo.path / "conf").read_text() == "local\n"
    assert repo.git("ls-files", "-v", "conf") == marks
