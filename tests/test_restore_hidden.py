"""An attempt hides files the checkpoint holds behind a new rule (`.gitignore`, or an
exclude in `.checkpoint.yaml`) and edits them. The restore puts the rule files back
first, so those files are work again: each is kept in the safety checkpoint, then
overwritten, and undo gives the attempt's bytes back. Only a file too big to keep is
still refused, with nothing changed."""

from __future__ import annotations

import os
from pathlib import Path

from git_checkpoint.restore.checks import ADOPT_MAX_BYTES

from .conftest import Repo
from .helpers import state
from .servers import bare_repo
from .test_sharing import clone, publish


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


def test_a_fetched_checkpoint_never_replaces_a_file_this_clone_ignores(
    repo: Repo, tmp_path: Path
) -> None:
    """Adoption is for this machine's own checkpoints: a fetched one holding `.env` in
    its overlay does not replace the `.env` this clone ignores (refused, as before)."""
    url = bare_repo(tmp_path / "server.git").as_uri()
    a = publish(repo, url)
    a.write("settings.local", "API=https://their.example\n")
    a.cp("save", "-m", "theirs")
    a.cp("push")
    b = clone(url, tmp_path / "b")
    b.cp("fetch")
    (b.path / ".git/info").mkdir(exist_ok=True)
    with open(b.path / ".git/info/exclude", "a") as fh:
        fh.write("settings.local\n")
    b.write("settings.local", "API=https://mine.example\n")
    before = state(b)

    proc = b.cp("restore", "origin/main/cp_001", "--keep-head", expect=3)

    assert "settings.local" in proc.stderr and "another machine" in proc.stderr
    assert state(b) == before
