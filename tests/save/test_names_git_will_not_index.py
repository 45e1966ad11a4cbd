"""Names git will not index (`GIT~1`, `.git.`) are left out of a checkpoint with a word
and never removed by a restore; a backslash is an ordinary character."""

from __future__ import annotations

from ..conftest import Repo


def test_names_git_will_not_index_are_left_out_and_never_removed(repo: Repo) -> None:
    repo.cp("save", "-m", "base")
    repo.write(".gitignore", "*.log\n")
    names = ["GIT~1", "git~1", ".git.", ".GIT "]
    for name in names:
        repo.write(name, f"work in {name}\n")
    proc = repo.cp("save", "-m", "odd names")
    assert "left out" in proc.stdout and "GIT~1" in proc.stdout
    repo.cp("restore", "cp_001")
    for name in names:
        assert (repo.path / name).read_text() == f"work in {name}\n"


def test_a_backslash_in_a_name_is_an_ordinary_character(repo: Repo) -> None:
    repo.write("src\\utils\\helper.py", "v1\n")
    repo.commit_all("windows-looking name")
    repo.cp("save", "-m", "v1")
    repo.write("src\\utils\\helper.py", "v2\n")
    repo.cp("restore", "cp_001")
    assert (repo.path / "src\\utils\\helper.py").read_text() == "v1\n"
    repo.cp("undo")
    assert (repo.path / "src\\utils\\helper.py").read_text() == "v2\n"
