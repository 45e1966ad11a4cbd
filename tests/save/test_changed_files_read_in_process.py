"""The secret scan's list of files a save adds or changes (secrets.changed_files_many)
is the same whether the trees are compared in the process, as the command server's
workers compare them, or by `git diff-tree`: regular files only, each with its blob
and its old blob when that was a regular file too, and the empty tree git knows
without storing it."""

from __future__ import annotations

import random

from git_checkpoint.gitcore import inprocess
from git_checkpoint.gitcore.formats import EMPTY_TREE
from git_checkpoint.gitcore.repo import Repo as GitRepo
from git_checkpoint.save import secrets

from ..conftest import Repo
from ..gitcore.conftest import in_process
from ..gitcore.test_tree_changes_in_process import git, random_tree

__all__ = ["in_process"]


def test_in_process_and_git_name_the_same_changed_files(repo: Repo, in_process: None) -> None:
    rng = random.Random(5)
    blobs = [git(repo, "hash-object", "-w", "--stdin", stdin=c).strip() for c in (b"x", b"y")]
    trees = [random_tree(repo, rng, blobs) for _ in range(24)] + [EMPTY_TREE]
    (repo.path / ".git" / "objects" / EMPTY_TREE[:2] / EMPTY_TREE[2:]).unlink(missing_ok=True)
    pairs = [(old, new) for old in trees for new in rng.sample(trees, 4)]
    pairs += [(EMPTY_TREE, trees[0]), (trees[0], EMPTY_TREE)]
    found = GitRepo.discover(repo.path)
    assert found.objects.tree_changes(EMPTY_TREE, trees[0]) is not None  # read here
    here = secrets.changed_files_many(found, pairs)
    inprocess.ENABLED = False
    found = GitRepo.discover(repo.path)
    by_git = secrets.changed_files_many(found, pairs)
    assert [sorted(p) for p in here] == [sorted(p) for p in by_git]
    assert sum(map(len, here)) > 100
    olds = [old for pair in here for _, _, old in pair]
    assert None in olds and any(olds)  # files added, and files changed
