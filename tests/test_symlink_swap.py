"""An attempt replaces a tracked folder by a symlink to a folder holding files of the
same names (`rm -rf b; ln -s a b`). The restore removes the symlink and makes the folder
again; what the symlink shows (a's files, or files outside the work tree) is never taken
for the paths below b, never overwritten, never refused as "outside the managed set"."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import Repo
from .helpers import state


@pytest.mark.parametrize("inside", [True, False], ids=["to-a-tracked-folder", "to-outside"])
def test_a_folder_swapped_for_a_symlink_comes_back(
    repo: Repo, tmp_path: Path, inside: bool
) -> None:
    repo.write("a/x.txt", "A\n")
    repo.write("b/x.txt", "B\n")
    repo.write("b/only-b.txt", "only b\n")
    repo.commit_all("two folders")
    repo.cp("save", "-m", "base")
    saved = state(repo)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.txt").write_text("outside\n")
    for child in (repo.path / "b").iterdir():
        child.unlink()
    (repo.path / "b").rmdir()
    (repo.path / "b").symlink_to("a" if inside else outside)
    attempt = state(repo)

    repo.cp("restore", "cp_001")

    assert state(repo) == saved
    assert (repo.path / "a/x.txt").read_text() == "A\n"
    assert (outside / "x.txt").read_text() == "outside\n"
    repo.cp("undo")
    assert state(repo) == attempt
    assert (repo.path / "b").is_symlink()
