"""`restore CP -- PATH` of a file outside the managed set (secret-looking, excluded,
over a limit) is refused, and the error says why: the file is in the workspace."""

from __future__ import annotations

from ..conftest import Repo
from ..helpers import one_line_error


def test_a_path_restore_of_a_secret_looking_file_names_the_reason(repo: Repo) -> None:
    repo.cp("save", "-m", "start")
    repo.write(".env", "API_KEY=x\n")
    proc = repo.cp("restore", "cp_001", "--", ".env", expect=2)
    line = one_line_error(proc.stderr)
    assert "neither" not in line and "nor the workspace" not in line, line
    assert "leave the workspace's out (its name looks like a secret)" in line, line
    assert (repo.path / ".env").read_text() == "API_KEY=x\n"


def test_a_path_restore_of_an_ignored_file_says_checkpoints_do_not_hold_it(repo: Repo) -> None:
    repo.write(".gitignore", "*.log\n")
    repo.commit_all("ignore logs")
    repo.cp("save", "-m", "start")
    repo.write("run.log", "output\n")
    proc = repo.cp("restore", "cp_001", "--", "run.log", expect=2)
    line = one_line_error(proc.stderr)
    assert "checkpoints do not hold the workspace's" in line, line
    assert (repo.path / "run.log").read_text() == "output\n"


def test_a_path_restore_of_a_path_nowhere_says_so(repo: Repo) -> None:
    repo.cp("save", "-m", "start")
    proc = repo.cp("restore", "cp_001", "--", "nowhere.txt", expect=2)
    assert "is in neither main/cp_001 nor the workspace" in one_line_error(proc.stderr)
