"""The trees a save keeps for the next one (the state folder's `trees` file, the quick
state): read instead of asking git, each naming its commit's real tree, and never
trusted when they are broken or tampered with. Only a save takes trees from the quick
state; a restore asks git what the checkpoint holds."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from ..conftest import Repo
from ..helpers import checkpoint_parents
from ..helpers import checkpoint_parents as parents
from ..launcher import no_traceback, traced

# --- a tampered quick state -----------------------------------------------------------


def _saved_with_quick_state(repo: Repo) -> Path:
    repo.write("src/app.py", "staged\n")
    repo.git("add", "src/app.py")
    repo.write("src/app.py", "unstaged\n")
    time.sleep(1.1)  # nothing racy: the save keeps its quick state
    repo.cp("save", "-m", "one")
    path = repo.path / ".git/checkpoint/quick/state.json"
    assert path.exists()
    return path


def _tamper(path: Path, trees: object) -> None:
    data = json.loads(path.read_text())
    data["trees"] = trees
    path.write_text(json.dumps(data))


@pytest.mark.parametrize(
    "bad",
    [
        "x",
        [1, 2],
        None,
        {"index": 5, "overlay": []},
        {"index": "zzz", "overlay": None},
        {"index": "", "overlay": None},
        {"index": "4b825dc642cb6eb9a060e54bf8d69288fbee4904", "overlay": "not-a-tree"},
    ],
)
def test_garbage_trees_in_the_quick_state_do_not_crash(repo: Repo, bad: object) -> None:
    path = _saved_with_quick_state(repo)
    _tamper(path, bad)
    proc = repo.cp("save", "-m", "again", expect=None)
    no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    repo.write("src/app.py", "elsewhere\n")
    proc = repo.cp("restore", "cp_001", expect=None)
    no_traceback(proc)
    assert proc.returncode in (0, 3), proc.stderr


def test_a_malformed_tree_in_the_quick_state_does_not_reach_a_restore(repo: Repo) -> None:
    """Only a save takes trees from the quick state (storage/commits.save_trees_of); a restore
    asks git what the checkpoint holds."""
    path = _saved_with_quick_state(repo)
    staged = repo.git("ls-files", "-s")
    _tamper(path, {"index": "zzz", "overlay": None})
    repo.write("src/app.py", "elsewhere\n")
    repo.cp("restore", "cp_001")
    assert repo.git("ls-files", "-s") == staged


def test_a_wrong_tree_in_the_quick_state_does_not_steer_a_restore(repo: Repo) -> None:
    path = _saved_with_quick_state(repo)
    staged = repo.git("ls-files", "-s")
    _tamper(path, {"index": "4b825dc642cb6eb9a060e54bf8d69288fbee4904", "overlay": None})
    repo.write("src/app.py", "elsewhere\n")
    repo.cp("restore", "cp_001", expect=None)
    assert repo.git("ls-files", "-s") == staged


def test_the_trees_of_recent_checkpoints_need_no_git(repo: Repo) -> None:
    """A save writes the tree of each I and U commit to the state folder's `trees`; the
    next save, and a restore of a recent checkpoint, read them there, not with rev-parse."""
    repo.write(".checkpoint.yaml", "secrets: {on_save: warn}\n")
    repo.write("notes.txt", "untracked\n")
    repo.cp("save", "-m", "one")
    index_commit, overlay_commit = parents(repo, "cp_001")[1:]
    kept = (repo.path / ".git/checkpoint/trees").read_text().splitlines()
    for commit in (index_commit, overlay_commit):
        assert f"{commit} {repo.git('rev-parse', commit + '^{tree}').strip()}" in kept
    repo.write("src/app.py", "print('two')\n")
    calls = traced(repo, "save", "-m", "two")
    assert not [c for c in calls if any("^{tree}" in a for a in c)], calls
    calls = traced(repo, "restore", "cp_001")
    assert not [c for c in calls if any("^{tree}" in a for a in c)], calls
    assert repo.path.joinpath("src/app.py").read_text() != "print('two')\n"


def test_a_broken_trees_file_is_no_cache(repo: Repo) -> None:
    """Lines that are not `commit tree` are ignored (git answers); a trees file that cannot
    be written never fails a save."""
    trees = repo.path / ".git/checkpoint/trees"
    repo.cp("save", "-m", "one")
    trees.write_bytes(b"\xff\xfe garbage\nnot two ids\n" + b"a" * 40 + b"\n")
    repo.write("src/app.py", "print('two')\n")
    repo.cp("save", "-m", "two")
    repo.cp("restore", "cp_001")
    assert trees.read_text().count("\n") >= 1 and "garbage" not in trees.read_text()
    trees.unlink()
    trees.mkdir()  # cannot be replaced by a file
    repo.write("src/app.py", "print('three')\n")
    repo.cp("save", "-m", "three")
    repo.cp("restore", "cp_002")
    assert repo.path.joinpath("src/app.py").read_text() == "print('two')\n"


def test_the_last_saves_trees_come_from_its_kept_state(repo: Repo) -> None:
    """The I and U trees of the checkpoint a save compares with come from what the last
    save kept for the quick auto-save (quickstate), not from git, when that state holds."""
    import time

    repo.write(".checkpoint.yaml", "secrets: {on_save: ignore}\n")  # its scan asks git
    repo.write("notes.txt", "untracked\n")
    repo.write("src/app.py", "print('one')\n")
    time.sleep(1.1)  # older than a second: the kept state vouches for these files
    repo.cp("save", "-m", "one")
    assert (repo.path / ".git/checkpoint/quick/state.json").exists()
    repo.write("src/app.py", "print('two')\n")
    trace = repo.path.parent / "trace2.txt"
    repo.cp("save", "-m", "two", env={"GIT_TRACE2": str(trace)})
    assert "^{tree}" not in trace.read_text()
    first, second = checkpoint_parents(repo, "cp_001"), checkpoint_parents(repo, "cp_002")
    assert first[1:] == second[1:]  # still the same I and U commits


def test_the_trees_file_names_each_checkpoint_with_its_worktree_tree(repo: Repo) -> None:
    repo.write("src/app.py", "print('edited')\n")
    repo.cp("save", "-m", "one")
    commit = repo.git("rev-parse", "refs/checkpoints/main/cp_001").strip()
    tree = repo.git("rev-parse", f"{commit}^{{tree}}").strip()
    kept = (repo.path / ".git" / "checkpoint" / "trees").read_text().split("\n")
    assert f"{commit} {tree} ours" in kept
    for line in filter(None, kept):  # every commit the file names maps to its real tree
        named, real, *_ = line.split(" ")
        assert repo.git("rev-parse", f"{named}^{{tree}}").strip() == real
    assert sum(line.endswith(" ours") for line in kept) == 1  # the I commit is not
