"""A checkpoint whose index or overlay equals the previous one's reuses that I or U
commit (storage/commits.store_checkpoint): fewer objects, same stash shape, same
restores."""

from __future__ import annotations

from ..conftest import Repo
from ..helpers import checkpoint_parents


def test_unchanged_index_and_overlay_are_the_same_commits(repo: Repo) -> None:
    repo.write("notes.txt", "untracked\n")
    repo.write("src/app.py", "print('one')\n")
    repo.cp("save", "-m", "one")
    repo.write("src/app.py", "print('two')\n")  # W changes; I and U do not
    repo.cp("save", "-m", "two")
    first, second = checkpoint_parents(repo, "cp_001"), checkpoint_parents(repo, "cp_002")
    assert len(first) == len(second) == 3
    assert first[0] == second[0]  # the same base
    assert first[1:] == second[1:]  # the same I and U commits
    repo.cp("restore", "cp_001")
    assert (repo.path / "src/app.py").read_text() == "print('one')\n"
    assert (repo.path / "notes.txt").read_text() == "untracked\n"


def test_a_staged_change_or_a_new_untracked_file_makes_new_ones(repo: Repo) -> None:
    repo.write("notes.txt", "untracked\n")
    repo.cp("save", "-m", "one")
    repo.write("src/app.py", "print('staged')\n")
    repo.git("add", "src/app.py")
    repo.cp("save", "-m", "staged")
    repo.write("more.txt", "another\n")
    repo.cp("save", "-m", "more")
    one, staged, more = (checkpoint_parents(repo, f"cp_00{n}") for n in (1, 2, 3))
    assert one[1] != staged[1] and staged[2] == one[2]  # a new I, the same U
    assert more[1] == staged[1] and more[2] != staged[2]  # the same I, a new U
    repo.cp("restore", "cp_002")
    assert repo.git("diff", "--cached", "--name-only").split() == ["src/app.py"]
    assert not (repo.path / "more.txt").exists()


def test_a_new_base_makes_a_new_index_commit(repo: Repo) -> None:
    repo.cp("save", "-m", "one")
    repo.write("src/app.py", "print('committed')\n")
    repo.commit_all("next")
    repo.write("src/app.py", "print('edited')\n")
    repo.cp("save", "-m", "two")
    one, two = checkpoint_parents(repo, "cp_001"), checkpoint_parents(repo, "cp_002")
    assert one[0] != two[0] and one[1] != two[1]
    assert repo.git("rev-parse", f"{two[1]}^").strip() == two[0]  # I sits on its base
