"""A restore journal that cannot be read (garbage on disk) is set aside, and what every
command says of it is what goes back over that restore: the interrupted restore's own
safety checkpoint when there is one newer than the last finished restore (undo then says
the same rather than go back over an older restore), else undo of the last finished
one, else that nothing is recorded."""

from __future__ import annotations

from ..conftest import Repo
from ..launcher import logged

JOURNAL = ".git/checkpoint/restore-journal.json"


def safety_refs(repo: Repo) -> list[str]:
    return repo.git("for-each-ref", "--format=%(refname:lstrip=2)", "refs/checkpoints/").split()


def killed_after_its_safety_ref(repo: Repo, name: str) -> str:
    """`restore NAME` killed at the git call that follows its safety checkpoint's ref (its
    journal written, its files written); that checkpoint's name. A kill before the
    journal changes nothing; the one at the ref's own call leaves a journal that the
    next try sets aside (nothing was written yet)."""
    before = safety_refs(repo)
    for at in range(1, 80):
        logged(repo, "restore", name, expect=None, FI_KILL_AT=str(at), FI_MODE="before")
        made = [r for r in safety_refs(repo) if r not in before]
        if made:
            return made[0]
        (repo.path / JOURNAL).unlink(missing_ok=True)
    raise AssertionError("the restore never made its safety checkpoint")


def test_the_interrupted_restores_safety_checkpoint_is_named(repo: Repo) -> None:
    repo.cp("save", "-m", "one")
    repo.write("src/app.py", "print('two')\n")
    repo.git("add", "src/app.py")  # staged: the restore to it updates the index last
    repo.cp("save", "-m", "two")
    repo.cp("restore", "cp_001")  # a finished restore: cp_003 is its safety checkpoint
    repo.write("src/app.py", "print('work')\n")
    safety = killed_after_its_safety_ref(repo, "cp_002")
    (repo.path / JOURNAL).write_text("garbage{")
    said = repo.cp("list").stderr
    assert "is unreadable" in said
    assert f"the newest safety checkpoint, {safety}, holds what was there before it" in said
    undo = repo.cp("undo", expect=2)
    assert f"`git checkpoint restore {safety}` goes back" in undo.stderr
    repo.cp("restore", safety)
    assert (repo.path / "src/app.py").read_text() == "print('work')\n"


def test_without_a_newer_safety_checkpoint_undo_goes_over_the_last_finished_restore(
    repo: Repo,
) -> None:
    repo.cp("save", "-m", "one")
    repo.write("src/app.py", "print('two')\n")
    repo.cp("save", "-m", "two")
    repo.cp("restore", "cp_001")
    (repo.path / JOURNAL).write_text("garbage{")
    said = repo.cp("list").stderr
    assert "`git checkpoint undo` goes back to before the last finished restore" in said
    repo.cp("undo")
    assert (repo.path / "src/app.py").read_text() == "print('two')\n"


def test_with_nothing_recorded_it_says_so(repo: Repo) -> None:
    repo.cp("save", "-m", "one")
    (repo.path / JOURNAL).write_text("garbage{")
    said = repo.cp("list").stderr
    assert "no restore to go back over is recorded" in said
    undo = repo.cp("undo", expect=2)
    assert "no restore to go back over is recorded" in undo.stderr
