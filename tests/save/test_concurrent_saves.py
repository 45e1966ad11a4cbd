"""Saves running at once, from several worktrees, for one task or several: every
checkpoint whole, ids never shared, the store sound."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from ..conftest import Repo
from ..helpers import REF1, checkpoint_refs
from .conftest import assert_fsck_clean, blob, tree


def run_parallel(jobs: list[tuple[list[str], Path]]) -> list[subprocess.CompletedProcess[str]]:
    procs = [
        subprocess.Popen(
            ["git", "checkpoint", *argv],
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for argv, cwd in jobs
    ]
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=120)
        out.append(subprocess.CompletedProcess(p.args, p.returncode, stdout, stderr))
    return out


def test_concurrent_saves_from_eight_worktrees_same_task(repo: Repo, tmp_path: Path) -> None:
    worktrees = []
    for n in range(8):
        wt = tmp_path / f"wt{n}"
        repo.git("worktree", "add", "-q", "-b", f"b{n}", str(wt))
        (wt / "src" / "app.py").write_text(f"change {n}\n")
        (wt / f"only-{n}.txt").write_text(f"{n}\n")
        worktrees.append(wt)
    results = run_parallel([(["save", "--json", "--task", "shared"], wt) for wt in worktrees])
    for r in results:
        assert r.returncode == 0, r.stderr
    datas = [json.loads(r.stdout) for r in results]
    ids = [d["checkpoint_id"] for d in datas]
    assert sorted(ids) == [f"cp_{n:03d}" for n in range(1, 9)]
    assert all(d["created"] for d in datas)
    for n, d in enumerate(datas):
        assert blob(repo, d["ref"], "src/app.py") == f"change {n}\n".encode()
        assert set(tree(repo, f"{d['ref']}^3")) == {f"only-{n}.txt"}
    assert len(checkpoint_refs(repo)) == 8
    assert_fsck_clean(repo)


def test_concurrent_saves_distinct_tasks(repo: Repo) -> None:
    repo.write("src/app.py", "shared change\n")
    repo.write("u.txt", "u\n")
    results = run_parallel([(["save", "--json", "--task", f"t{n}"], repo.path) for n in range(8)])
    for r in results:
        assert r.returncode == 0, r.stderr
    refs = sorted(json.loads(r.stdout)["ref"] for r in results)
    assert refs == [f"refs/checkpoints/t{n}/cp_001" for n in range(8)]
    assert sorted(checkpoint_refs(repo)) == refs
    assert_fsck_clean(repo)


def test_concurrent_saves_same_task_same_state(repo: Repo) -> None:
    repo.write("src/app.py", "shared change\n")
    results = run_parallel([(["save", "--json"], repo.path) for _ in range(8)])
    for r in results:
        assert r.returncode == 0, r.stderr
    datas = [json.loads(r.stdout) for r in results]
    assert sum(d["created"] for d in datas) == 1
    assert {d["checkpoint_id"] for d in datas} == {"cp_001"}
    assert checkpoint_refs(repo) == [REF1]
    assert_fsck_clean(repo)
