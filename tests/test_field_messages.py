"""Refusals from the field test that pointed the wrong way: a checkpoint saved before
the first commit offered --move-head (which then failed: nothing to move back to), and
a conflict left by `git stash pop` was called a merge to abort before a save."""

from __future__ import annotations

from .conftest import Repo
from .helpers import state


def test_a_checkpoint_from_before_the_first_commit_offers_keep_head_only(
    empty_repo: Repo,
) -> None:
    repo = empty_repo
    repo.write("a.txt", "a\n")
    repo.cp("save", "-m", "before any commit")
    repo.commit_all("first")
    before = state(repo)
    proc = repo.cp("restore", "cp_001", expect=3)
    line = proc.stderr.strip()
    assert "\n" not in line and "--keep-head" in line and "--move-head" not in line, line
    assert state(repo) == before
    repo.cp("restore", "cp_001", "--keep-head")  # the one way offered works


def test_a_stash_pop_conflict_is_not_called_a_merge(repo: Repo) -> None:
    repo.write("src/app.py", "print('stashed')\n")
    repo.git("stash", "push", "-q")
    repo.write("src/app.py", "print('committed')\n")
    repo.commit_all("other")
    repo.git("stash", "pop", "-q", check=False)
    assert "UU src/app.py" in repo.git("status", "--porcelain")
    proc = repo.cp("save", expect=3)
    assert "stash pop" in proc.stderr and "then save" not in proc.stderr, proc.stderr


def test_a_tracked_file_become_a_fifo_is_named_not_gits_message(repo: Repo) -> None:
    import os
    import stat

    repo.cp("save", "-m", "before")
    (repo.path / "src/app.py").unlink()
    os.mkfifo(repo.path / "src/app.py")
    before = (repo.git("status", "--porcelain"), repo.git("ls-files", "-s"))
    for args in (["save"], ["restore", "cp_001", "--dry-run"]):
        proc = repo.cp(*args, expect=3)
        line = proc.stderr.strip()
        assert "\n" not in line and "'src/app.py'" in line and "FIFO" in line, line
        assert "update-index" not in line
    shown = repo.cp("status").stdout  # it only reads: it answers, and says why it cannot
    assert "drift since cp_001: unknown" in shown and "FIFO" in shown, shown
    # (state() would open the FIFO and wait for a writer)
    assert (repo.git("status", "--porcelain"), repo.git("ls-files", "-s")) == before
    assert stat.S_ISFIFO(os.lstat(repo.path / "src/app.py").st_mode)
