"""A save compares with its task's latest checkpoint and takes the next id: it reads the
task's checkpoints from the newest down to the latest one that is no safety checkpoint
(refs.recent_checkpoints), the same checkpoints, parsed the same, as the end of the
whole listing, however the newest ones are made (safety checkpoints, refs that are no
checkpoint, a subtask's refs under the same prefix), and whether the objects are read
through git or in the process. A restore reads the one its name needs (refs.TaskListing):
every task-local name resolves to what the whole listing resolves it to, or fails the
same way."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from git_checkpoint.core.errors import UsageError
from git_checkpoint.gitcore import inprocess, locate
from git_checkpoint.gitcore.repo import Repo as GitRepo
from git_checkpoint.storage.refs import (
    Checkpoint,
    TaskListing,
    _plain_id,
    recent_checkpoints,
    resolve,
    task_checkpoints,
)

from ..conftest import Repo
from ..helpers import blob


@pytest.fixture(params=["git", "in process"])
def reading(request: pytest.FixtureRequest) -> Iterator[None]:
    before = inprocess.ENABLED
    if request.param == "in process":
        pytest.importorskip("pygit2")
    inprocess.ENABLED = request.param == "in process"
    yield
    inprocess.ENABLED = before


def whole(cp: Checkpoint) -> tuple[object, ...]:
    return (cp, cp.manifest, cp.problem, cp.message, cp.is_safety)


def same_end(repo: Repo, task: str = "main") -> list[Checkpoint]:
    git_repo = GitRepo.discover(str(repo.path))
    recent = recent_checkpoints(git_repo, task)
    listed = task_checkpoints(GitRepo.discover(str(repo.path)), task)
    assert [whole(c) for c in recent] == [whole(c) for c in listed[len(listed) - len(recent) :]]
    normal = [c for c in listed if not c.is_safety]
    assert recent[: 1 if normal else None] == (normal[-1:] or listed)
    return recent


def saves(repo: Repo, count: int, task: str = "main") -> None:
    for n in range(count):
        repo.write("src/app.py", f"print({n!r}, {task!r})\n")
        repo.cp("save", "--task", task, "-m", f"save {n}")


def no_checkpoints(repo: Repo, *names: str) -> None:
    """Refs under the task's prefix that name no checkpoint: a commit without parents,
    a blob, a name that is no id."""
    head = repo.git("rev-parse", "HEAD").strip()
    orphan = repo.git("commit-tree", f"{head}^{{tree}}", "-m", "no parents").strip()
    for name, oid in zip(names, [orphan, blob(repo, b"a blob\n"), head], strict=False):
        repo.git("update-ref", f"refs/checkpoints/main/{name}", oid)


def test_the_newest_checkpoint_alone_when_it_is_a_normal_one(repo: Repo, reading: None) -> None:
    saves(repo, 5)
    assert [c.id for c in same_end(repo)] == ["cp_005"]


def test_safety_checkpoints_after_the_latest_normal_one_come_with_it(
    repo: Repo, reading: None
) -> None:
    saves(repo, 3)
    for name in ("cp_001", "cp_002"):  # each restore takes a safety checkpoint first
        repo.write("src/app.py", f"print('edited before {name}')\n")
        repo.cp("restore", name)
    recent = same_end(repo)
    assert [c.id for c in recent] == ["cp_003", "cp_004", "cp_005"]
    assert [c.is_safety for c in recent] == [False, True, True]
    repo.write("src/app.py", "print('after')\n")
    saved = repo.cp_json("save", "-m", "after the restores")
    assert saved["checkpoint_id"] == "cp_006"


def test_refs_that_are_no_checkpoint_and_a_subtask_are_passed_over(
    repo: Repo, reading: None
) -> None:
    saves(repo, 2)
    saves(repo, 1, task="main/sub")  # a task under main/
    no_checkpoints(repo, "cp_007", "cp_008", "notanid")
    assert [c.id for c in same_end(repo)] == ["cp_002"]
    assert [c.id for c in same_end(repo, "main/sub")] == ["cp_001"]


def test_only_safety_checkpoints_are_all_there_is(repo: Repo, reading: None) -> None:
    repo.write("src/app.py", "print(1)\n")
    repo.cp("save", "-m", "one")
    repo.write("src/app.py", "print(2)\n")
    repo.cp("restore", "cp_001")
    repo.git("update-ref", "-d", "refs/checkpoints/main/cp_001")
    assert [(c.id, c.is_safety) for c in same_end(repo)] == [("cp_002", True)]
    assert same_end(repo, "no-such-task") == []


def resolved(repo: Repo, name: str, listed: object) -> object:
    git_repo = GitRepo.discover(str(repo.path))
    source = listed(git_repo) if callable(listed) else None
    try:
        return whole(resolve(git_repo, name, "main", source))
    except UsageError as exc:
        return str(exc)


def test_every_task_local_name_resolves_as_the_whole_listing_resolves_it(
    repo: Repo, reading: None
) -> None:
    saves(repo, 4)
    repo.write("src/app.py", "print('edited')\n")
    repo.cp("restore", "cp_002")  # cp_005, a safety checkpoint
    repo.write("src/app.py", "print(5)\n")
    repo.cp("save", "-m", "save 5")
    no_checkpoints(repo, "cp_009")
    names = ["@", "@~1", "@~3", "@~4", "@~5", "@~9", "cp_001", "cp_005", "cp_006"]
    names += ["cp_007", "cp_009", "cp_1"]
    for name in names:
        whole_list = resolved(repo, name, lambda r: task_checkpoints(r, "main"))
        assert resolved(repo, name, lambda r: TaskListing(r, "main")) == whole_list, name
        assert resolved(repo, name, None) == whole_list, name
    assert resolved(repo, "@~1", None) == resolved(repo, "cp_004", None)
    assert "no checkpoint @~9 in task 'main' (5 checkpoints)" in str(resolved(repo, "@~9", None))


def test_parents_are_those_git_reads(repo: Repo, reading: None) -> None:
    """Parent lines past the author's are no parents to git, and a shallow repository's
    boundary commits have none: such checkpoints are none to a save, a restore and a
    listing alike."""
    saves(repo, 3)
    raw = repo.git("cat-file", "commit", "refs/checkpoints/main/cp_002")
    header, _, message = raw.partition("\n\n")
    lines = header.split("\n")
    parents = [x for x in lines if x.startswith("parent ")]
    late = [lines[0], *(x for x in lines[1:] if x not in parents), *parents]
    crafted = ("\n".join(late) + "\n\n" + message).encode()
    moved = repo.git("hash-object", "-t", "commit", "-w", "--stdin", input=crafted).strip()
    repo.git("update-ref", "refs/checkpoints/main/cp_004", moved)
    assert [c.id for c in same_end(repo)] == ["cp_003"]
    assert resolved(repo, "cp_004", None) == resolved(repo, "cp_004", lambda r: [])
    shallow = repo.git("rev-parse", "refs/checkpoints/main/cp_003").strip()
    (repo.path / ".git/shallow").write_text(shallow + "\n")
    assert [c.id for c in same_end(repo)] == ["cp_002"]
    assert resolved(repo, "@", None) == resolved(repo, "cp_002", None)


def copies_of_the_latest(repo: Repo, count: int) -> None:
    """`count` more refs in the task, each naming the latest checkpoint's commit."""
    latest = repo.git("rev-parse", "refs/checkpoints/main/cp_001").strip()
    lines = "".join(
        f"create refs/checkpoints/main/cp_{n:03d} {latest}\n" for n in range(2, count + 2)
    )
    repo.git("update-ref", "--stdin", input=lines.encode())


def test_a_save_opens_the_ref_files_of_the_checkpoints_it_reads_and_no_other(
    repo: Repo, reading: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    saves(repo, 1)
    copies_of_the_latest(repo, 60)
    opened: list[str] = []

    def counted(path: str, *args: object, **kwargs: object) -> object:
        if "refs/checkpoints" in str(path):
            opened.append(str(path))
        return open(path, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(locate, "open", counted, raising=False)
    assert [c.id for c in same_end(repo)] == ["cp_061"]
    assert 0 < len(opened) <= 2, opened  # (the whole listing goes through git)


def test_a_ref_packed_or_deleted_after_the_listing_is_read_where_it_went(repo: Repo) -> None:
    saves(repo, 3)
    folder = locate.RefFolder.listed(repo.path / ".git", "refs/checkpoints/main/", _plain_id)
    assert folder is not None
    first = repo.git("rev-parse", "refs/checkpoints/main/cp_001").strip()
    repo.git("pack-refs", "--all")  # the loose files go: packed-refs has them
    assert folder.id_of("refs/checkpoints/main/cp_001") == first
    repo.git("update-ref", "-d", "refs/checkpoints/main/cp_002")
    assert folder.id_of("refs/checkpoints/main/cp_002") == ""


def test_a_broken_ref_met_late_leaves_the_listing_to_git(repo: Repo, reading: None) -> None:
    """An id with whitespace before it is a broken ref to git, which lists the others."""
    saves(repo, 3)
    newest = repo.path / ".git/refs/checkpoints/main/cp_003"
    newest.write_text(" " + newest.read_text())
    assert [c.id for c in same_end(repo)] == ["cp_002"]
    git_repo = GitRepo.discover(str(repo.path))
    assert TaskListing(git_repo, "main").by_id("cp_003") is None
    assert whole(TaskListing(git_repo, "main").by_id("cp_001")) == whole(  # type: ignore[arg-type]
        task_checkpoints(git_repo, "main")[0]
    )
