"""A folder that is not there (a `repo` given to the API or the MCP server, a hook's
cwd, GIT_WORK_TREE, a current folder removed under the shell) is bad input: one line
that names it as a path, exit 2, never a Python repr or an error of git's."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from git_checkpoint import api
from git_checkpoint.core.errors import UsageError
from git_checkpoint.gitcore.repo import Repo as GitRepo

from ..conftest import Repo
from ..helpers import one_line_error


def test_discover_names_a_missing_folder(tmp_path: Path) -> None:
    gone = tmp_path / "gone" / "deeper"
    with pytest.raises(UsageError) as raised:
        GitRepo.discover(gone)
    assert str(raised.value) == f"no such folder: {gone}"
    assert raised.value.exit_code == 2


def test_discover_names_a_file_that_is_no_folder(repo: Repo) -> None:
    with pytest.raises(UsageError) as raised:
        GitRepo.discover(repo.path / "README.md")
    assert str(raised.value) == f"not a folder: {repo.path / 'README.md'}"


def test_the_api_names_a_missing_repo_folder(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"^no such folder: /") as raised:
        api.status(repo=tmp_path / "nowhere")
    assert "PosixPath" not in str(raised.value)


# The shell's cd sets $PWD; the folder goes before git-checkpoint starts in it.
SCRIPT = 'cd "$1" && rmdir "$1" && shift && exec git-checkpoint "$@"'


def test_a_removed_current_folder_is_named(repo: Repo) -> None:
    doomed = repo.path / "doomed"
    doomed.mkdir()
    for argv in (["status"], ["save", "-m", "x"], ["list", "--json"]):
        proc = subprocess.run(
            ["sh", "-c", SCRIPT, "sh", str(doomed), *argv],
            capture_output=True,
            text=True,
            check=False,
        )
        assert proc.returncode == 2, proc.stderr
        line = one_line_error(proc.stderr)
        assert str(doomed) in line and "removed" in line and "Traceback" not in proc.stderr
        doomed.mkdir()


def test_a_missing_git_work_tree_is_named(repo: Repo, tmp_path: Path) -> None:
    gone = tmp_path / "no-work-tree"
    proc = repo.cp("status", expect=2, env={"GIT_WORK_TREE": str(gone)})
    assert one_line_error(proc.stderr) == f"git checkpoint: no such folder: {gone} (GIT_WORK_TREE)"
