"""A repository with two tasks and several checkpoints, for the names that resolve to
them and the drops that take them away."""

from __future__ import annotations

import pytest

from ..conftest import Repo


def shown_commit(repo: Repo, name: str) -> str:
    """The commit `show NAME` resolves the name to."""
    return repo.cp_json("show", name)["commit"]


@pytest.fixture
def three(repo: Repo) -> Repo:
    """Task main with cp_001..cp_003 and task other with cp_001."""
    for n in (1, 2, 3):
        repo.write("README.md", f"version {n}\n")
        repo.cp("save", "-m", f"save {n}")
    repo.write("README.md", "other\n")
    repo.cp("save", "--task", "other", "-m", "other task")
    return repo
