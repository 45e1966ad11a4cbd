"""Task names: an empty, malformed or too long `--task` is bad usage (exit 2), and a
long branch gives a short task name that still tells branches apart."""

from __future__ import annotations

import pytest

from ..conftest import Repo
from ..helpers import one_line_of


def test_a_5000_character_task_is_bad_input(repo: Repo) -> None:
    assert "at most" in one_line_of(repo.cp("save", "--task", "t" * 5000, expect=2))
    assert repo.git("for-each-ref", "refs/checkpoints/") == ""


def test_a_long_branch_gives_a_short_task_that_still_tells_branches_apart(repo: Repo) -> None:
    names = ["feature/" + "x" * 150 + "/" + "y" * 150 + suffix for suffix in ("/one", "/two")]
    tasks = []
    for name in names:
        repo.git("checkout", "-qb", name)
        repo.write("src/app.py", f"print({name[-3:]!r})\n")
        tasks.append(repo.cp_json("save")["task"])
    assert len(set(tasks)) == 2 and all(len(t) <= 200 for t in tasks)


def test_empty_task_name_is_bad_usage(repo: Repo) -> None:
    repo.cp("list", "--task", "", expect=2)


@pytest.mark.parametrize("bad", ["a..b", "a.", "remotes/x", ""])
def test_bad_task_names_are_exit_2(repo: Repo, bad: str) -> None:
    proc = repo.cp("save", "--task", bad, expect=2)
    assert proc.stderr.count("\n") == 1
