"""A restore refuses while git is in the middle of a merge, cherry-pick, revert, rebase,
bisect or am, and the read-only commands still answer."""

from __future__ import annotations

import pytest

from ..conftest import Repo
from ..helpers import state


def _conflict(repo: Repo) -> None:
    repo.write("c.txt", "base\n")
    repo.commit_all("base")
    repo.git("switch", "-q", "-c", "other")
    repo.write("c.txt", "other\n")
    repo.commit_all("other")
    repo.git("switch", "-q", "main")
    repo.write("c.txt", "main\n")
    repo.commit_all("main side")


@pytest.mark.parametrize("operation", ["merge", "cherry-pick", "revert", "rebase", "bisect", "am"])
def test_restore_refuses_while_a_git_operation_is_in_progress(repo: Repo, operation: str) -> None:
    _conflict(repo)
    repo.cp("save", "-m", "before")
    if operation == "merge":
        repo.git("merge", "other", check=False)
    elif operation == "cherry-pick":
        repo.git("cherry-pick", "other", check=False)
    elif operation == "revert":
        repo.write("c.txt", "edited again\n")
        repo.commit_all("edit")
        repo.git("revert", "--no-edit", "HEAD~1", check=False)
    elif operation == "rebase":
        repo.git("rebase", "--exec", "false", "HEAD~1", check=False)
    elif operation == "bisect":
        repo.git("bisect", "start")
    else:
        patch = repo.git("format-patch", "-1", "--stdout", "other")
        repo.git("am", input=patch.encode(), check=False)
    word = {"rebase": "rebase", "am": "am", "bisect": "bisect"}.get(operation, operation)
    before = state(repo)
    proc = repo.cp("restore", "main/cp_001", "--keep-head", expect=3)
    assert word in proc.stderr and "Traceback" not in proc.stderr
    assert state(repo) == before
    for command in (["status"], ["list", "--all"], ["log"], ["show", "main/cp_001"],
                    ["diff", "main/cp_001"], ["resume"]):  # fmt: skip
        assert repo.cp(*command, expect=None).returncode in (0, 1), command
