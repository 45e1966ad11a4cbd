"""A tracked folder replaced by a symlink that loops (`d/a -> a`), found by helper-19.

git's status meets ELOOP below such a link, says so on stderr and skips the tracked files
there (below any other symlink it counts them as deleted). A snapshot then kept their
index entries beside the link, a checkpoint no restore accepted ("both tracked and
untracked"), and a restore over the link wrote nothing below it yet said the workspace
matched.
"""

from __future__ import annotations

import os

from .conftest import Repo
from .helpers import state


def _with_loop(repo: Repo) -> None:
    repo.write("d/a/x.txt", "x\n")
    repo.write("d/a/y.txt", "y\n")
    repo.commit_all("a folder")


def _loop(repo: Repo) -> None:
    for name in ("x.txt", "y.txt"):
        (repo.path / "d" / "a" / name).unlink()
    (repo.path / "d" / "a").rmdir()
    os.symlink("a", repo.path / "d" / "a")


def test_a_restore_over_a_looping_link_brings_the_folder_back_and_undo_the_link(
    repo: Repo,
) -> None:
    _with_loop(repo)
    repo.cp("save", "-m", "folder")
    saved = state(repo)
    _loop(repo)
    looped = state(repo)
    proc = repo.cp("restore", "cp_001")
    assert "workspace matches cp_001" in proc.stdout
    assert state(repo) == saved
    assert (repo.path / "d" / "a" / "x.txt").read_text() == "x\n"
    repo.cp("undo")
    assert state(repo) == looped
    assert os.readlink(repo.path / "d" / "a") == "a"


def test_a_save_beside_a_looping_link_restores(repo: Repo) -> None:
    _with_loop(repo)
    _loop(repo)
    repo.cp("save", "-m", "the link")
    looped = state(repo)
    tree = repo.git("rev-parse", "refs/checkpoints/main/cp_001^{tree}").strip()
    listed = repo.git("ls-tree", "-r", "--name-only", tree).split()
    assert "d/a/x.txt" not in listed  # gone from W, as below any other symlink
    os.unlink(repo.path / "d" / "a")
    repo.git("checkout", "--", "d")  # the folder back, the link gone
    repo.cp("restore", "cp_001")
    assert state(repo) == looped
