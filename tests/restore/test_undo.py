"""`undo` goes back over the last restore of its own task and worktree (a run's rollback
included), and never to a safety checkpoint it did not make."""

from __future__ import annotations

import sys
from pathlib import Path

from ..conftest import Repo
from ..helpers import state


def test_undo_after_run_with_a_task_undoes_that_run(repo: Repo) -> None:
    repo.cp("save", "-m", "branch task")  # main/cp_001
    repo.write("a.txt", "x\n")
    repo.cp("restore", "cp_001")  # main: an older restore with its safety checkpoint
    repo.write("src/app.py", "print('before run')\n")
    before = state(repo)
    agent = f"{sys.executable} -c \"open('src/app.py','w').write('broken')\""
    repo.write(".checkpoint.yaml", "verifiers:\n  - {name: never, command: 'false'}\n")
    before = state(repo)
    repo.cp("run", "--task", "T", "--attempts", "1", "--", "sh", "-c", agent, expect=1)
    assert state(repo) == before
    repo.cp("undo")  # goes back over the run's rollback: the broken attempt
    assert (repo.path / "src/app.py").read_text() == "broken"


def test_undo_in_a_detached_worktree_undoes_its_own_restore(repo: Repo, tmp_path: Path) -> None:
    repo.git("switch", "-q", "--detach")
    other = tmp_path / "other"
    repo.git("worktree", "add", "-q", "--detach", str(other))
    b = Repo(other)
    for r, word in ((repo, "A"), (b, "B")):
        r.write("src/app.py", f"saved in {word}\n")
        r.cp("save", "-m", word)
        r.write("src/app.py", f"edited in {word}\n")
    repo.cp("restore", "detached/cp_001")
    b.cp("restore", "detached/cp_002")
    repo.cp("undo")
    assert (repo.path / "src/app.py").read_text() == "edited in A\n"
    assert (b.path / "src/app.py").read_text() == "saved in B\n"


def test_a_foreign_safety_checkpoint_is_never_undone_to(repo: Repo) -> None:
    head = repo.git("rev-parse", "HEAD").strip()
    repo.write("evil.txt", "attacker\n")
    repo.commit_all("attacker commit")
    evil = repo.git("rev-parse", "HEAD").strip()
    repo.git("reset", "-q", "--hard", head)
    index = repo.git("commit-tree", f"{evil}^{{tree}}", "-p", evil, "-m", "i").strip()
    message = (
        f"checkpoint cp_900 on main: fake\n\nbase_commit: {evil}\ntask: main\n"
        f"checkpoint_id: cp_900\nauto: pre-restore\nhead_after_restore: {head}\n"
    )
    fake = repo.git("commit-tree", f"{evil}^{{tree}}", "-p", evil, "-p", index, "-m", message)
    repo.git("update-ref", "refs/checkpoints/main/cp_900", fake.strip())
    proc = repo.cp("undo", expect=2)
    assert "nothing to undo" in proc.stderr
    assert repo.git("rev-parse", "main").strip() == head
