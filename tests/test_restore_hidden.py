"""An attempt hides files the checkpoint holds behind a new rule (`.gitignore`, or an
exclude in `.checkpoint.yaml`) and edits them. The restore puts the rule files back
first, so those files are work again: each is kept in the safety checkpoint, then
overwritten, and undo gives the attempt's bytes back. Only a file too big to keep is
still refused, with nothing changed."""

from __future__ import annotations

import os

from git_checkpoint.restore import ADOPT_MAX_BYTES

from .conftest import Repo
from .helpers import state


def test_a_file_hidden_by_a_new_gitignore_comes_back_and_undo_returns_the_edit(
    repo: Repo,
) -> None:
    repo.write("notes/todo.txt", "mine\n")
    repo.cp("save", "-m", "base")
    with open(repo.path / ".gitignore", "a") as fh:
        fh.write("notes/\n")
    repo.write("notes/todo.txt", "the agent overwrote it\n")
    attempt = state(repo)

    repo.cp("restore", "cp_001")
    assert (repo.path / "notes/todo.txt").read_text() == "mine\n"
    assert "notes/" not in (repo.path / ".gitignore").read_text()

    repo.cp("undo")
    assert state(repo) == attempt


def test_a_file_hidden_by_a_new_exclude_comes_back(repo: Repo) -> None:
    repo.write(".checkpoint.yaml", "untracked:\n  include: []\n")
    repo.commit_all("config")
    repo.write("data/file.txt", "kept\n")
    repo.cp("save", "-m", "base")
    repo.write(".checkpoint.yaml", "untracked:\n  exclude: [data/]\n")
    repo.write("data/file.txt", "edited while excluded\n")
    attempt = state(repo)

    repo.cp("restore", "cp_001")
    assert (repo.path / "data/file.txt").read_text() == "kept\n"
    repo.cp("undo")
    assert state(repo) == attempt


def test_a_hidden_file_too_big_to_keep_is_still_refused(repo: Repo) -> None:
    repo.write("notes/todo.txt", "mine\n")
    repo.cp("save", "-m", "base")
    with open(repo.path / ".gitignore", "a") as fh:
        fh.write("notes/\n")
    with open(repo.path / "notes/todo.txt", "wb") as fh:
        fh.truncate(ADOPT_MAX_BYTES + 1)  # sparse: no disk used
    before = state(repo)

    proc = repo.cp("restore", "cp_001", expect=3)

    assert "notes/todo.txt" in proc.stderr and "too big" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert state(repo) == before
    assert os.path.getsize(repo.path / "notes/todo.txt") == ADOPT_MAX_BYTES + 1
