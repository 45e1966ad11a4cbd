#!/usr/bin/env python3
"""What push and fetch of many checkpoints cost, against git's own push and fetch of the
same refs in the same run: a repository with N checkpoints of one task (real checkpoint
commits: one saved with `git checkpoint save`, the others the same trees under their own
ids and manifests, written with pygit2), pushed to an empty bare remote over file://,
then fetched into a clone.

    python bench/bench_many.py [--checkpoints 10000] [--repeat 3]

Each timed run starts from the same state (the remote emptied, the clone's fetched refs
removed). Medians of --repeat runs; the target is ours within 2x git's.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path


def git(cwd: Path, *args: str, stdin: bytes | None = None) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, input=stdin, capture_output=True, check=True)
    return proc.stdout.decode()


def make(root: Path, count: int) -> Path:
    import pygit2

    work = root / "work"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    (work / "app.py").write_text("print('v0')\n")
    git(work, "add", "-A")
    git(work, "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "base")
    (work / "app.py").write_text("print('v1')\n")
    (work / "new.py").write_text("x = 1\n")
    subprocess.run(["git", "checkpoint", "save", "-m", "first"], cwd=work, check=True,
                   capture_output=True)  # fmt: skip
    repo = pygit2.Repository(str(work))
    first = repo.revparse_single("refs/checkpoints/main/cp_001")
    message = first.message
    lines = []
    for n in range(2, count + 1):
        cp = f"cp_{n:05d}"
        text = message.replace("cp_001", cp, 2)
        oid = repo.create_commit(
            None, first.author, first.committer, text, first.tree_id, list(first.parent_ids)
        )
        lines.append(f"create refs/checkpoints/main/{cp} {oid}\n")
    git(work, "update-ref", "--stdin", stdin="".join(lines).encode())
    git(work, "pack-refs", "--all")
    return work


def timed(fn) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--checkpoints", type=int, default=10000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bench-many-"))
    try:
        work = make(root, args.checkpoints)
        remote = root / "remote.git"
        git(root, "init", "-q", "--bare", str(remote))
        git(work, "remote", "add", "origin", remote.as_uri())
        git(work, "push", "-q", "origin", "main")
        clone = root / "clone"
        git(root, "clone", "-q", remote.as_uri(), str(clone))
        env = {**os.environ, "GIT_CHECKPOINT_DEBUG": "0"}
        rows: dict[str, list[float]] = {k: [] for k in ("git push", "push", "git fetch", "fetch")}
        refspec = "refs/checkpoints/*:refs/checkpoints/*"

        def empty_remote() -> None:
            out = git(remote, "for-each-ref", "--format=delete %(refname)", "refs/checkpoints")
            git(remote, "update-ref", "--stdin", stdin=out.encode())

        def empty_clone() -> None:
            out = git(clone, "for-each-ref", "--format=delete %(refname)", "refs/checkpoints")
            git(clone, "update-ref", "--stdin", stdin=out.encode())

        for _ in range(args.repeat):
            empty_remote()
            rows["git push"].append(timed(lambda: git(work, "push", "-q", "origin", refspec)))
            empty_remote()
            rows["push"].append(
                timed(lambda: subprocess.run(["git", "checkpoint", "push", "origin", "--all"],
                                             cwd=work, env=env, check=True, capture_output=True))
            )  # fmt: skip
            empty_clone()
            rows["git fetch"].append(
                timed(lambda: git(clone, "fetch", "-q", "origin",
                                  "+refs/checkpoints/*:refs/checkpoints/remotes/origin/*"))
            )  # fmt: skip
            empty_clone()
            rows["fetch"].append(
                timed(lambda: subprocess.run(["git", "checkpoint", "fetch", "origin"], cwd=clone,
                                             env=env, check=True, capture_output=True))
            )  # fmt: skip
        med = {k: statistics.median(v) for k, v in rows.items()}
        print(f"{args.checkpoints} checkpoints, medians of {args.repeat} (seconds)")
        print("| operation | git's own | git checkpoint | ratio | target |")
        print("|---|---:|---:|---:|---|")
        for ours, theirs in (("push", "git push"), ("fetch", "git fetch")):
            ratio = med[ours] / med[theirs]
            verdict = "met" if ratio <= 2.0 else "missed"
            print(
                f"| {ours} | {med[theirs]:.2f} | {med[ours]:.2f} | {ratio:.2f}x | <= 2x {verdict} |"
            )
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
