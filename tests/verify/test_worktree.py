"""A checkpoint is verified in a temporary worktree of its own (verify/worktree): the
workspace and the index are left alone, whatever GIT_DIR or GIT_INDEX_FILE say."""

from __future__ import annotations

from ..conftest import Repo
from ..helpers import configure, note_events, state, verifier


def test_git_dir_in_the_environment_does_not_redirect_us(repo: Repo) -> None:
    configure(repo, verifier("unit", "true"))
    repo.write("b.txt", "staged\n")
    repo.git("add", "b.txt")
    repo.cp("save")
    repo.write("b.txt", "staged, then more\n")
    repo.git("add", "b.txt")
    index_before = repo.git("ls-files", "-s")
    env = {"GIT_DIR": str(repo.path / ".git"), "GIT_INDEX_FILE": str(repo.path / ".git/index")}
    repo.cp("verify", "cp_001", env=env)
    assert repo.git("ls-files", "-s") == index_before


def test_verifying_an_older_checkpoint_leaves_the_workspace_alone(repo: Repo) -> None:
    configure(repo, verifier("old", "grep -q old value.txt && test -f untracked.txt"))
    repo.write("value.txt", "old\n")
    repo.write("untracked.txt", "overlay\n")
    repo.cp("save", "-m", "old")
    repo.write("value.txt", "new\n")
    (repo.path / "untracked.txt").unlink()
    repo.write("scratch.txt", "agent scratch\n")
    before = state(repo)
    worktrees = repo.git("worktree", "list")
    proc = repo.cp("verify", "cp_001")
    assert "temporary worktree" in proc.stdout
    assert state(repo) == before
    assert repo.git("worktree", "list") == worktrees
    event = note_events(repo, "refs/checkpoints/main/cp_001")[0]
    assert event["where"] == "temporary worktree" and event["status"] == "passed"
