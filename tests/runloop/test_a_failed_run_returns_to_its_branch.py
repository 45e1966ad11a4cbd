"""A failed attempt is rolled back to the rollback point, HEAD too: an agent that
switched to a branch of its own does not leave the next attempt, or the user after the
run, on that branch."""

from __future__ import annotations

from ..conftest import Repo
from ..helpers import configure, verifier

AGENT = (
    'git branch --show-current >> "$BRANCHES" && '
    'git checkout -q -b "try-$CHECKPOINT_ATTEMPT" && echo wrong > src/app.py'
)


def test_a_failed_run_ends_on_the_branch_it_started_on(repo: Repo) -> None:
    configure(repo, verifier("unit", "grep -q hello src/app.py"))
    branches = repo.path.parent / "branches.txt"
    proc = repo.cp(
        "run", "--attempts", "2", "--", "sh", "-c", AGENT,
        env={"BRANCHES": str(branches)}, expect=1,
    )  # fmt: skip
    assert "workspace is at cp_001" in proc.stdout
    assert (
        "head: back on main from try-2, which keeps any commits the attempt made there"
        in proc.stdout
    )
    assert repo.git("branch", "--show-current").strip() == "main"
    # the second attempt started on main, as the first did, not on the first's branch
    assert branches.read_text().splitlines() == ["main", "main"]


def test_a_failed_attempt_that_deleted_the_branch_is_rolled_back_onto_it_again(
    repo: Repo,
) -> None:
    configure(repo, verifier("unit", "grep -q hello src/app.py"))
    start = repo.git("rev-parse", "HEAD").strip()
    agent = "git checkout -q -b side && git branch -q -D main && echo wrong > src/app.py"
    proc = repo.cp("run", "--attempts", "1", "--", "sh", "-c", agent, expect=1)
    assert "workspace is at cp_001" in proc.stdout, proc.stdout + proc.stderr
    assert repo.git("branch", "--show-current").strip() == "main"
    assert repo.git("rev-parse", "main").strip() == start
    assert "hello" in (repo.path / "src/app.py").read_text()


def test_a_failed_attempt_on_an_orphan_branch_is_rolled_back_onto_its_branch(
    repo: Repo,
) -> None:
    configure(repo, verifier("unit", "grep -q hello src/app.py"))
    agent = "git checkout -q --orphan fresh && echo wrong > src/app.py"
    proc = repo.cp("run", "--attempts", "1", "--", "sh", "-c", agent, expect=1)
    assert "workspace is at cp_001" in proc.stdout, proc.stdout + proc.stderr
    assert repo.git("branch", "--show-current").strip() == "main"
    assert repo.git("status", "--porcelain").strip() == ""
