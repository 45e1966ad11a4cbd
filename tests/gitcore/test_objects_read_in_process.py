"""gitcore/inprocess.py: in the command server's workers, objects are read through
libgit2 in the process. Every answer must be the one `git cat-file --batch` gives: by id,
by `<tree>:<path>` through hostile names, folders, links and submodules, for missing
objects and paths, for blobs streamed small, empty and big; and where libgit2 would
read otherwise than git (replacement objects, objects found through the environment),
git answers."""

from __future__ import annotations

import os
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from git_checkpoint.gitcore import inprocess
from git_checkpoint.gitcore.catfile import Objects
from git_checkpoint.gitcore.spawn import child_env

from ..conftest import Repo
from ..helpers import blob

NAMES = ["a b.txt", "colon:name", "ends.with.colon:", "tab\there", "uni\u00e9", "-dash", "x y"]
BIG = 5 << 20  # above inprocess.STREAM_MIN: git streams it


def answers(repo: Repo, specs: list[str], env: dict[str, str] | None = None) -> list[object]:
    objects = Objects(repo.path, child_env(env))
    try:
        return list(objects.read_specs(specs))
    finally:
        objects.close()


def streamed(repo: Repo, oids: list[str]) -> dict[int, bytes]:
    objects = Objects(repo.path, child_env())
    got: dict[int, bytes] = {}

    def sink(n: int, chunks: Iterator[bytes]) -> None:
        parts = list(chunks)
        assert all(len(p) <= 1 << 20 for p in parts)
        got[n] = b"".join(parts)

    try:
        objects.stream(oids, sink, missing_ok=True)
    finally:
        objects.close()
    return got


def both_ways(repo: Repo, run: object) -> tuple[object, object]:
    assert callable(run)
    inprocess.ENABLED = False
    from_git = run()
    inprocess.ENABLED = True
    return from_git, run()


def rich_repo(repo: Repo) -> dict[str, str]:
    for n, name in enumerate(NAMES):
        repo.write(f"dir/{name}", f"tracked {n}\n")
    repo.write("dir/deep/er/leaf.txt", "leaf\n")
    repo.write("empty", b"")
    repo.write("big.bin", os.urandom(BIG))
    os.symlink("dir/deep", repo.path / "link")
    repo.git("add", "-A")
    head = repo.git("rev-parse", "HEAD").strip()
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{head},module")
    repo.git("commit", "-q", "-m", "rich")
    return {
        "commit": repo.git("rev-parse", "HEAD").strip(),
        "tree": repo.git("rev-parse", "HEAD^{tree}").strip(),
    }


def test_every_answer_is_the_one_git_gives(repo: Repo, in_process: None) -> None:
    ids = rich_repo(repo)
    tree = ids["tree"]
    paths = [f"dir/{n}" for n in NAMES] + ["dir", "dir/deep", "dir/deep/er", "dir/deep/er/leaf.txt"]
    paths += ["empty", "big.bin", "link", "module", "README.md", "src/app.py"]
    paths += ["nothing", "dir/nothing", "empty/under", "link/er", "module/x", "dir/deep/"]
    specs = [ids["commit"], tree, "0" * 40, "HEAD", *(f"{tree}:{p}" for p in paths)]
    from_git, here = both_ways(repo, lambda: answers(repo, specs))
    assert here == from_git
    found = dict(zip(specs, here, strict=True))  # (and the answers are what they seem)
    assert found[f"{tree}:dir/deep/er/leaf.txt"] == ("blob", b"leaf\n")
    assert found[f"{tree}:dir/nothing"] is None and found["0" * 40] is None


def test_blobs_streamed_are_the_ones_git_streams(repo: Repo, in_process: None) -> None:
    rich_repo(repo)
    listing = repo.git("ls-tree", "-r", "-z", "HEAD").split("\0")
    oids = [row.split()[2] for row in listing if row and row.split()[1] == "blob"]
    oids += ["0" * 40, oids[0]]  # a missing one (skipped), one twice
    from_git, here = both_ways(repo, lambda: streamed(repo, oids))
    assert here == from_git
    assert any(len(data) == BIG for data in from_git.values())  # type: ignore[attr-defined]


def test_replacement_objects_are_read_as_git_reads_them(repo: Repo, in_process: None) -> None:
    old, new = blob(repo, b"before\n"), blob(repo, b"after\n")
    repo.git("replace", old, new)
    assert inprocess.open_odb(repo.path, child_env()) is None
    assert answers(repo, [old]) == [("blob", b"after\n")]
    repo.git("pack-refs", "--all")  # the replacement named in packed-refs only
    shutil.rmtree(repo.path / ".git/refs/replace", ignore_errors=True)
    assert "refs/replace/" in (repo.path / ".git/packed-refs").read_text()
    assert inprocess.open_odb(repo.path, child_env()) is None
    assert answers(repo, [old]) == [("blob", b"after\n")]


def test_objects_found_through_the_environment_are_read_by_git(
    repo: Repo, tmp_path: Path, in_process: None
) -> None:
    elsewhere = tmp_path / "elsewhere.git"
    repo.git("init", "-q", "--bare", str(elsewhere))
    oid = Repo(elsewhere).git("hash-object", "-w", "--stdin", input=b"only there\n").strip()
    env = {"GIT_ALTERNATE_OBJECT_DIRECTORIES": str(elsewhere / "objects")}
    assert inprocess.open_odb(repo.path, child_env(env)) is None
    assert answers(repo, [oid], env) == [("blob", b"only there\n")]
    assert answers(repo, [oid]) == [None]


def test_a_command_can_leave_every_read_to_git(repo: Repo, in_process: None) -> None:
    assert inprocess.open_odb(repo.path, child_env()) is not None
    assert inprocess.open_odb(repo.path, child_env({inprocess.OFF: "off"})) is None


def test_replacements_are_seen_from_a_linked_worktree(
    repo: Repo, tmp_path: Path, in_process: None
) -> None:
    old, new = blob(repo, b"before\n"), blob(repo, b"after\n")
    repo.git("replace", old, new)
    worktree = Repo(tmp_path / "linked")
    repo.git("worktree", "add", "-q", str(worktree.path))
    assert inprocess.open_odb(worktree.path, child_env()) is None
    assert answers(worktree, [old]) == [("blob", b"after\n")]


def raw_tree(repo: Repo, rows: list[tuple[str, str, str]]) -> str:
    """A tree written as given (mode, name, id), in that order, duplicates and all."""
    body = b"".join(
        f"{mode} {name}".encode() + b"\0" + bytes.fromhex(oid) for mode, name, oid in rows
    )
    return repo.git("hash-object", "-t", "tree", "--literally", "-w", "--stdin", input=body).strip()


def test_a_path_through_an_odd_tree_is_looked_up_as_git_looks_it_up(
    repo: Repo, in_process: None
) -> None:
    """Out of git's order, a name twice, a folder's tree under a file's mode: git's
    lookup stops at the first name sorting after the one it wants, takes the first of
    two, and goes down only through a folder's mode."""
    x, y = blob(repo, b"x\n"), blob(repo, b"y\n")
    inner = raw_tree(repo, [("100644", "x", x), ("100644", "y", y)])
    other = raw_tree(repo, [("100644", "z", x)])
    trees = [
        raw_tree(repo, [("40000", "b", other), ("40000", "a", inner)]),  # b before a
        raw_tree(repo, [("40000", "a", inner), ("40000", "a", other)]),  # a twice
        raw_tree(repo, [("100644", "a", inner)]),  # a tree under a file's mode
        raw_tree(repo, [("040000", "a", inner)]),  # a folder's mode, zero-padded
        raw_tree(repo, [("100644", "a", x), ("40000", "a", inner)]),  # a file and a folder
    ]
    specs = [f"{t}:{p}" for t in trees for p in ("a", "a/x", "a/y", "a/z", "b", "b/z")]
    # A mode that is no octal number after the name looked up (git never reads that far).
    odd = raw_tree(repo, [("100644", "a", x), ("100644", "b", y), ("8", "z", x)])
    specs += [f"{odd}:a"]
    from_git, here = both_ways(repo, lambda: answers(repo, specs))
    assert here == from_git


def test_a_path_git_reads_otherwise_than_as_names_is_left_to_git(
    repo: Repo, in_process: None
) -> None:
    """`.` and `..` in a path, a carriage return (git reads specs line by line), a NUL
    and an empty path (the tree of a commit, to git) are git's to read."""
    x = blob(repo, b"x\n")
    sub = raw_tree(repo, [("100644", "b", x)])
    tree = raw_tree(repo, [("100644", "a", x), ("40000", "d", sub)])
    commit = repo.git("commit-tree", tree, "-m", "odd").strip()
    paths = ["./a", "d/./b", "d/../a", "a\r", "d/b\r", "a\0x"]
    specs = [f"{tree}:{p}" for p in paths] + [f"{commit}:", f"{x}:", f"{commit}:d/b"]
    from_git, here = both_ways(repo, lambda: answers(repo, specs))
    assert here == from_git


class CountingOdb:
    """libgit2's object database, counting the objects read from it."""

    def __init__(self, odb: object) -> None:
        self.odb = odb
        self.reads: list[str] = []

    def read(self, oid: str) -> object:
        self.reads.append(oid)
        return self.odb.read(oid)  # type: ignore[attr-defined]

    def read_header(self, oid: str) -> object:
        return self.odb.read_header(oid)  # type: ignore[attr-defined]


def test_folders_on_the_way_to_many_paths_are_each_read_once(repo: Repo, in_process: None) -> None:
    """A graft asks for every folder on the way to each changed file: a request reads
    each tree it goes through once, however many of its specs pass through it."""
    folders = [f"src/pkg{i}/sub{j}" for i in range(4) for j in range(5)]
    for folder in folders:
        repo.write(f"{folder}/mod.py", f"{folder}\n")
    repo.git("add", "-A")
    repo.git("commit", "-q", "-m", "nested")
    tree = repo.git("rev-parse", "HEAD^{tree}").strip()
    asked = sorted({f.rsplit("/", k)[0] for f in folders for k in range(3)})
    specs = [f"{tree}:{f}" for f in asked]
    specs += [f"{tree}:{f}/mod.py" for f in folders] + [f"{tree}:src/pkg9/none"]
    from_git, _ = both_ways(repo, lambda: answers(repo, specs))
    objects = Objects(repo.path, child_env())
    try:
        odb = objects._here()
        assert odb is not None
        counting = CountingOdb(odb)
        objects._odb = counting
        here = objects.read_specs(specs)
    finally:
        objects.close()
    assert here == from_git
    answered = Counter(repo.git("rev-parse", f"{tree}:{f}").strip() for f in asked)
    reads = Counter(counting.reads)
    # Each tree once to look through it, and once more for each spec it answers.
    assert reads[tree] == 1
    assert all(reads[oid] <= 1 + n for oid, n in answered.items())
    assert sum(reads.values()) <= len(specs) + 1 + len(answered)
