"""A restore run from a folder that the target lacks removes the files in it but not
the folder itself (as git since 2.35): the shell standing there must not be left in a
folder that is gone, wherever it stands (deep in a removed tree, where a file is
written, in a linked worktree). The next command from there works."""

from __future__ import annotations

from pathlib import Path

from ..conftest import Repo


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


def test_a_file_written_where_the_cwd_folder_is_does_not_remove_the_cwd(repo: Repo) -> None:
    repo.write("x", "file\n")
    repo.commit_all("x")
    repo.cp("save", "-m", "base")
    repo.git("rm", "-q", "x")
    repo.write("x/y/new.txt", "n\n")
    here = repo.path / "x" / "y"

    repo.cp("restore", "cp_001", cwd=here, expect=None)
    assert here.is_dir()


def test_the_cwd_deep_in_a_removed_tree_and_the_root_both_stay(repo: Repo) -> None:
    repo.cp("save", "-m", "base")
    repo.write("w/a/b/c/new.py", "x = 1\n")
    repo.write("w/a/other.py", "y = 2\n")
    here = repo.path / "w/a/b"
    repo.cp("restore", "cp_001", cwd=here)
    assert here.is_dir() and not (here / "c").exists()
    assert not (repo.path / "w/a/other.py").exists()
    repo.cp("undo", cwd=here)
    assert (here / "c/new.py").read_text() == "x = 1\n"
    repo.cp("restore", "cp_001", cwd=repo.path)  # the root: nothing above it to keep
    assert not (repo.path / "w").exists()


def test_the_cwd_in_a_linked_worktree_stays(repo: Repo, tmp_path: Path) -> None:
    linked = tmp_path / "linked"
    repo.git("worktree", "add", "-q", "-b", "side", str(linked))
    side = Repo(linked)
    side.cp("save", "-m", "base")
    side.write("deep/er/new.py", "x = 1\n")
    here = linked / "deep" / "er"
    side.cp("restore", "cp_001", cwd=here)
    assert here.is_dir() and list(here.iterdir()) == []
    assert side.git("status", "--porcelain") == ""
    assert not (repo.path / "deep").exists()
