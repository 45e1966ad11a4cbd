"""A save of an unchanged workspace is no new checkpoint; any change is. Ids count up
per task and are never reused after a drop."""

from __future__ import annotations

import pytest

from ..conftest import Repo
from ..helpers import REF1, REF2, checkpoint_refs, one_line_error
from .conftest import save_json


def test_dedupe_then_change(repo: Repo) -> None:
    repo.write("README.md", "one\n")
    assert repo.cp("save").stdout.strip() == "checkpoint saved: cp_001"
    proc = repo.cp("save", "-m", "again")
    assert proc.stdout.strip() == "unchanged since cp_001"
    data = save_json(repo)
    assert data["created"] is False
    assert data["checkpoint_id"] == "cp_001"
    assert checkpoint_refs(repo) == [REF1]
    repo.write("README.md", "two\n")
    assert repo.cp("save").stdout.strip() == "checkpoint saved: cp_002"
    assert checkpoint_refs(repo) == [REF1, REF2]


@pytest.mark.parametrize("change", ["stage", "untracked", "commit", "chmod"])
def test_any_kind_of_change_is_a_new_checkpoint(repo: Repo, change: str) -> None:
    repo.write("README.md", "edited\n")
    repo.cp("save")
    if change == "stage":
        repo.git("add", "README.md")  # same work tree, different index
    elif change == "untracked":
        repo.write("new.txt", "n\n")
    elif change == "commit":
        repo.git("commit", "-q", "-am", "c")  # same files, different base
    else:
        (repo.path / "src" / "app.py").chmod(0o755)
    assert repo.cp("save").stdout.strip() == "checkpoint saved: cp_002"


def test_untracked_content_change_is_a_new_checkpoint(repo: Repo) -> None:
    repo.write("new.txt", "one\n")
    repo.cp("save")
    repo.write("new.txt", "two\n")
    assert repo.cp("save").stdout.strip() == "checkpoint saved: cp_002"


def test_ids_never_reused_after_drop(repo: Repo) -> None:
    repo.write("README.md", "1\n")
    repo.cp("save")
    repo.write("README.md", "2\n")
    repo.cp("save")
    repo.cp("drop", "cp_002")
    assert checkpoint_refs(repo) == [REF1]
    repo.write("README.md", "3\n")
    assert repo.cp("save").stdout.strip() == "checkpoint saved: cp_003"
    repo.cp("drop", "cp_003", "cp_001")
    assert checkpoint_refs(repo) == []
    repo.write("README.md", "4\n")
    assert repo.cp("save").stdout.strip() == "checkpoint saved: cp_004"


def test_ids_are_per_task(repo: Repo) -> None:
    repo.write("README.md", "1\n")
    assert save_json(repo, "--task", "alpha")["checkpoint_id"] == "cp_001"
    assert save_json(repo, "--task", "beta")["checkpoint_id"] == "cp_001"
    repo.write("README.md", "2\n")
    assert save_json(repo, "--task", "alpha")["checkpoint_id"] == "cp_002"
    assert save_json(repo, "--task", "team/beta")["ref"] == "refs/checkpoints/team/beta/cp_001"


@pytest.mark.parametrize("bad", ["bad name", "remotes/x", "cp_001", "a/../b", "x.lock", "-x"])
def test_bad_task_name(repo: Repo, bad: str) -> None:
    proc = repo.cp("save", f"--task={bad}", expect=2)
    one_line_error(proc.stderr)
    assert checkpoint_refs(repo) == []
