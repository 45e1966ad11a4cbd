"""A restore leaves the index as git's checkout would: a file it writes through the
filters (autocrlf) is recorded with the stat data of what is on disk, so that `git
status` finds it clean, as after `git checkout -- file`."""

from __future__ import annotations

import subprocess

import pytest

from ..conftest import Repo


@pytest.mark.parametrize("setting", ["true", "input"])
def test_a_file_checked_out_before_autocrlf_was_set_is_clean_after_a_restore(
    repo: Repo, setting: str
) -> None:
    repo.write("notes.txt", "one\ntwo\n")  # committed with LF, checked out with LF
    repo.commit_all("notes")
    repo.git("config", "core.autocrlf", setting)
    repo.write("scratch.txt", "untracked work\n")
    repo.cp("save", "-m", "clean notes")
    repo.write("notes.txt", "an edit to undo\n")
    repo.cp("restore", "cp_001")
    assert repo.git("status", "--porcelain", "--untracked-files=no") == ""
    refreshed = subprocess.run(
        ["git", "update-index", "--refresh"], cwd=repo.path, capture_output=True, text=True
    )
    assert refreshed.returncode == 0, refreshed.stdout
    assert repo.git("diff-files", "--name-only") == ""


def test_a_file_modified_in_the_checkpoint_stays_modified(repo: Repo) -> None:
    repo.write("notes.txt", "one\ntwo\n")
    repo.commit_all("notes")
    repo.git("config", "core.autocrlf", "true")
    repo.write("notes.txt", "one\ntwo\nthree\n")
    repo.cp("save", "-m", "an edit kept")
    repo.write("notes.txt", "something else\n")
    repo.cp("restore", "cp_001")
    assert repo.git("status", "--porcelain") == " M notes.txt\n"
    assert "+three" in repo.git("diff")
