"""A restore run from a folder that the target lacks removes the files in it but not
the folder itself (as git since 2.35): the shell standing there must not be left in a
folder that is gone. The next command from there works."""

from __future__ import annotations

from .conftest import Repo


def test_the_folder_a_restore_runs_in_stays(repo: Repo) -> None:
    repo.cp("save", "-m", "base")
    repo.write("work/deep/new.py", "x = 1\n")
    here = repo.path / "work" / "deep"

    repo.cp("restore", "cp_001", cwd=here)

    assert here.is_dir() and list(here.iterdir()) == []
    assert repo.git("status", "--porcelain") == ""
    repo.cp("undo", cwd=here)
    assert (here / "new.py").read_text() == "x = 1\n"


def test_folders_elsewhere_still_go(repo: Repo) -> None:
    repo.cp("save", "-m", "base")
    repo.write("work/deep/new.py", "x = 1\n")
    repo.cp("restore", "cp_001", cwd=repo.path / "src")
    assert not (repo.path / "work").exists()
