"""A folder's refs read from git's files (locate.refs_in_folder, a save's and a
restore's listing of the task) are what `git for-each-ref` lists: loose refs, packed
ones, a loose ref over its packed copy, a lock file left out, other tasks' folders
below left out; and anything git reads its own way (a symref, broken content, a name
the caller would not take, a reftable) is left to git."""

from __future__ import annotations

import random

import pytest

from git_checkpoint.gitcore.locate import refs_in_folder
from git_checkpoint.storage.refs import TaskListing, _plain_id

from ..conftest import Repo

FOLDER = "refs/checkpoints/main/"


def for_each_ref(repo: Repo, folder: str) -> dict[str, str]:
    out = repo.git("for-each-ref", "--format=%(refname) %(objectname)", folder)
    listed = dict(line.split(" ") for line in out.splitlines())
    return {ref: oid for ref, oid in listed.items() if "/" not in ref[len(folder) :]}


def commits(repo: Repo, n: int) -> list[str]:
    found = []
    for i in range(n):
        repo.write("f.txt", f"{i}\n")
        repo.commit_all(f"c{i}")
        found.append(repo.git("rev-parse", "HEAD").strip())
    return found


def test_loose_and_packed_refs_are_listed_as_git_lists_them(repo: Repo) -> None:
    rng = random.Random(3)
    ids = commits(repo, 4)
    for round in range(12):
        for n in rng.sample(range(1, 30), rng.randint(1, 8)):
            ref = f"{FOLDER}cp_{n:03d}"
            if rng.random() < 0.3:
                repo.git("update-ref", "-d", ref)
            else:
                repo.git("update-ref", ref, rng.choice(ids))
        for other in ("refs/checkpoints/main/sub/cp_001", "refs/checkpoints/mainline/cp_002"):
            repo.git("update-ref", other, rng.choice(ids))
        if round % 3 == 1:
            repo.git("pack-refs", "--all")  # then some loose again over their packed copy
        here = refs_in_folder(repo.path / ".git", FOLDER, _plain_id)
        assert here == for_each_ref(repo, FOLDER), round
    assert (repo.path / ".git" / "packed-refs").read_text().count(FOLDER) > 3


def test_a_lock_file_is_not_a_ref(repo: Repo) -> None:
    (oid,) = commits(repo, 1)
    repo.git("update-ref", f"{FOLDER}cp_001", oid)
    (repo.path / ".git" / FOLDER / "cp_002.lock").write_text(oid + "\n")
    assert refs_in_folder(repo.path / ".git", FOLDER, _plain_id) == {f"{FOLDER}cp_001": oid}
    assert for_each_ref(repo, FOLDER) == {f"{FOLDER}cp_001": oid}


@pytest.mark.parametrize(
    "name, content",
    [
        ("cp_002", "ref: refs/heads/main\n"),  # a symref: git resolves it
        ("cp_002", "not an id\n"),  # git ignores it, with a warning
        ("cp_\u0661\u0662\u0663", None),  # digits git takes and int() reads
        ("cp_002\n", None),  # a name git refuses, a pattern with `$` takes
        ("cp_002", " {oid}\n"),  # whitespace before the id: a broken ref to git
        ("cp_002", "\t{oid}\n"),
        ("cp_002", "\r\n{oid}\n"),
        ("cp_002", "{oid}x\n"),  # the id run on: broken too
    ],
)
def test_what_git_reads_its_own_way_is_left_to_git(
    repo: Repo, name: str, content: str | None
) -> None:
    (oid,) = commits(repo, 1)
    repo.git("update-ref", f"{FOLDER}cp_001", oid)
    (repo.path / ".git" / FOLDER / name).write_text((content or "{oid}\n").format(oid=oid))
    assert refs_in_folder(repo.path / ".git", FOLDER, _plain_id) is None


def test_a_reftable_is_left_to_git(repo: Repo) -> None:
    (oid,) = commits(repo, 1)
    repo.git("update-ref", f"{FOLDER}cp_001", oid)
    (repo.path / ".git" / "reftable").mkdir()
    assert refs_in_folder(repo.path / ".git", FOLDER, _plain_id) is None


def test_a_task_with_odd_refs_is_listed_by_git_as_before(repo: Repo) -> None:
    """The listing a save compares with is the same, read from files or from git."""
    repo.cp("save", "-m", "one")
    repo.write("f.txt", "two\n")
    repo.cp("save", "-m", "two")
    from git_checkpoint.gitcore.repo import Repo as GitRepo

    task = repo.git("symbolic-ref", "--short", "HEAD").strip()
    found = GitRepo.discover(repo.path)
    from_files = [c.id for c in TaskListing(found, task).recent()]
    (repo.path / ".git" / "refs" / "checkpoints" / task / "cp_\u0661").write_text("x\n")
    from_git = [c.id for c in TaskListing(GitRepo.discover(repo.path), task).recent()]
    assert from_files == from_git == ["cp_002"]


def test_an_id_followed_by_anything_after_whitespace_is_read_as_git_reads_it(
    repo: Repo,
) -> None:
    (oid,) = commits(repo, 1)
    (repo.path / ".git" / FOLDER).mkdir(parents=True)
    (repo.path / ".git" / FOLDER / "cp_001").write_text(f"{oid} what git ignores\n")
    here = refs_in_folder(repo.path / ".git", FOLDER, _plain_id)
    assert here == for_each_ref(repo, FOLDER) == {f"{FOLDER}cp_001": oid}


def test_a_ref_packed_twice_is_left_to_git(repo: Repo) -> None:
    """git never writes such a file (another tool or a hand may); for-each-ref then
    takes one line or the other."""
    first, second = commits(repo, 2)
    packed = repo.path / ".git" / "packed-refs"
    packed.write_text(f"{first} {FOLDER}cp_001\n{second} {FOLDER}cp_001\n")
    assert refs_in_folder(repo.path / ".git", FOLDER, _plain_id) is None


def test_restore_does_not_reach_a_checkpoint_list_leaves_out(repo: Repo) -> None:
    """A broken ref (whitespace before its id) is no checkpoint to `list`, and none to
    `restore` either."""
    repo.cp("save", "-m", "one")
    repo.write("f.txt", "two\n")
    repo.cp("save", "-m", "two")
    task = repo.git("symbolic-ref", "--short", "HEAD").strip()
    ref = repo.path / ".git" / "refs" / "checkpoints" / task / "cp_002"
    ref.write_text(" " + ref.read_text())
    assert "cp_002" not in repo.cp("list").stdout
    restored = repo.cp("restore", "cp_002", expect=None)
    assert restored.returncode == 2, restored.stdout
    assert "unknown checkpoint 'cp_002'" in restored.stderr
    assert (repo.path / "f.txt").read_text() == "two\n"
