"""`drop` and `prune` killed at each of their git calls (before and after it) and at
each of their own file system calls: every checkpoint is either still there or named,
with its commit, in the operation log (`git checkpoint log`), which is how it comes
back. Nothing disappears without a word."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ..conftest import Repo
from ..fault_injection import Runner, git
from ..fault_injection import checkpoint as checkpoint  # the fixture


def _checkpoints(path: Path) -> dict[str, str]:
    out = git(path, "for-each-ref", "--format=%(refname) %(objectname)", "refs/checkpoints/")
    return dict(line.split() for line in out.splitlines())


def _named_in_the_log(checkpoint: Runner, path: Path) -> set[str]:
    run = checkpoint(path, "log", "--json", kill_at=None)
    assert run.code == 0, run.line()
    events = json.loads(run.out)["events"]
    return {e.get("commit", "") for e in events if e.get("op") in ("drop", "prune")}


def _sweep(checkpoint: Runner, template: Path, args: tuple[str, ...], tmp: Path) -> int:
    """Kill `args` at every point; return how many kill points were checked."""
    before = _checkpoints(template)
    counted = checkpoint(_copy(template, tmp / "count"), *args)
    assert counted.code == 0, counted.line()
    points = [(n, mode) for n in range(1, len(counted.calls) + 1) for mode in ("before", "after")]
    points += [(n, "fs") for n in range(1, len(counted.fs) + 1)]
    for n, mode in points:
        where = _copy(template, tmp / f"{mode}-{n}")
        checkpoint(where, *args, kill_at=n, mode=mode)
        left = _checkpoints(where)
        gone = {ref: commit for ref, commit in before.items() if ref not in left}
        unnamed = set(gone.values()) - _named_in_the_log(checkpoint, where)
        assert not unnamed, f"{args} killed {mode} call {n}: gone with no word: {gone}"
        assert all(left[ref] == before[ref] for ref in left), f"{mode} {n}: a ref moved"
    return len(points)


def _copy(template: Path, where: Path) -> Path:
    shutil.copytree(template, where, symlinks=True)
    return where


@pytest.fixture
def saved(repo: Repo) -> Repo:
    for i in range(4):
        repo.write("work.txt", f"attempt {i}\n")
        repo.cp("save", "-m", f"attempt {i}")
    return repo


def test_a_killed_drop_leaves_each_checkpoint_or_its_log_line(
    checkpoint: Runner, saved: Repo, tmp_path: Path
) -> None:
    assert _sweep(checkpoint, saved.path, ("drop", "cp_002", "cp_003"), tmp_path) > 4


def test_a_killed_prune_leaves_each_checkpoint_or_its_log_line(
    checkpoint: Runner, saved: Repo, tmp_path: Path
) -> None:
    saved.write(".checkpoint.yaml", "retention: {keep_last: 1, keep_promoted: false}\n")
    assert _sweep(checkpoint, saved.path, ("prune",), tmp_path) > 4
