"""After a restore, git sees the files it wrote as clean from their stat data alone: the
index's stat cache is refreshed for them, by pathspec for a few files and by one pass
over the index for many (materialize.REFRESH_PATHS_MAX)."""

from __future__ import annotations

import pytest

from git_checkpoint.restore.apply import REFRESH_PATHS_MAX

from .conftest import Repo


@pytest.mark.parametrize("count", [3, REFRESH_PATHS_MAX + 40])
def test_written_files_are_stat_clean(repo: Repo, count: int) -> None:
    for i in range(count):
        repo.write(f"many/f{i:04}.txt", f"file {i}\n")
    repo.commit_all("many files")
    repo.write("many/f0000.txt", "an unstaged change the checkpoint keeps\n")
    repo.cp("save", "-m", "good")
    for i in range(count):
        repo.write(f"many/f{i:04}.txt", f"broken {i}\n")
    repo.cp("restore", "cp_001")
    # diff-files does not refresh: a written file whose stat data the index lacks shows.
    assert repo.git("diff-files", "--name-only").split() == ["many/f0000.txt"]
    assert repo.git("status", "--porcelain") == " M many/f0000.txt\n"
