"""HEAD and a restore: a checkpoint from before the first commit offers --keep-head only,
--move-head never moves a branch to another branch's checkpoint, and neither undo nor
--continue moves a HEAD that moved since without being told to."""

from __future__ import annotations

import json

from ..conftest import Repo
from ..helpers import state


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


def test_undo_asks_before_moving_a_head_that_moved_since(repo: Repo) -> None:
    repo.write("src/app.py", "work\n")
    repo.cp("save")
    repo.cp("restore")
    repo.write("src/app.py", "committed after the restore\n")
    later = repo.commit_all("c3")
    proc = repo.cp("undo", expect=3)
    assert "--move-head" in proc.stderr
    assert repo.git("rev-parse", "HEAD").strip() == later
    repo.cp("undo", "--keep-head")
    assert repo.git("rev-parse", "HEAD").strip() == later


def test_continue_never_drops_a_commit_made_after_the_interruption(repo: Repo) -> None:
    repo.cp("save")
    repo.write("src/app.py", "later\n")
    repo.commit_all("B")
    repo.cp("restore", "cp_001", "--move-head")  # fine; now fake an interruption after it
    journal = repo.path / ".git/checkpoint/restore-journal.json"
    b = repo.git("rev-parse", "HEAD@{1}").strip()
    a = repo.git("rev-parse", "HEAD").strip()
    journal.write_text(
        json.dumps(
            {
                "target": repo.git("rev-parse", "refs/checkpoints/main/cp_001").strip(),
                "target_name": "main/cp_001",
                "safety": repo.git("rev-parse", "refs/checkpoints/main/cp_002").strip(),
                "safety_name": "main/cp_002",
                "head_from": b,
                "head_to": a,
                "move_head": True,
                "started_at": "2026-01-01T00:00:00Z",
                "pid": 1,
            }
        )
    )
    repo.write("c.txt", "new work\n")
    c = repo.commit_all("C, committed after the interruption")
    proc = repo.cp("restore", "--continue", expect=3)
    assert "--move-head" in proc.stderr
    assert repo.git("rev-parse", "HEAD").strip() == c


def test_move_head_never_moves_a_branch_to_another_branchs_checkpoint(repo: Repo) -> None:
    repo.cp("save", "-m", "on main")
    repo.git("switch", "-q", "-c", "feature")
    repo.write("f.txt", "feature work\n")
    repo.commit_all("feature")
    feature = repo.git("rev-parse", "feature").strip()
    proc = repo.cp("restore", "main/cp_001", "--move-head", expect=3)
    assert "git switch main" in proc.stderr and "--keep-head" in proc.stderr
    assert repo.git("rev-parse", "feature").strip() == feature
    repo.cp("restore", "main/cp_001", "--keep-head")
    assert repo.git("rev-parse", "feature").strip() == feature


def test_another_branchs_checkpoint_offers_only_what_would_work(repo: Repo) -> None:
    repo.cp("save", "-m", "on main")
    repo.git("switch", "-q", "-c", "feature")
    repo.write("f.txt", "feature work\n")
    repo.commit_all("feature")
    proc = repo.cp("restore", "main/cp_001", expect=3)
    assert "git switch main" in proc.stderr and "--keep-head" in proc.stderr
    assert "Choose: --move-head" not in proc.stderr
