"""A checkpoint is a stash: `git stash apply --index` in a clone brings the workspace
back, staged and unstaged apart."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from ..conftest import Repo
from ..helpers import REF1, workspace_files


def apply_in_clone(repo: Repo, tmp_path: Path, ref: str) -> Repo:
    clone = tmp_path / "clone"
    subprocess.run(
        ["git", "clone", "-q", "--no-local", str(repo.path), str(clone)],
        check=True,
        capture_output=True,
    )
    c = Repo(clone)
    c.git("fetch", "-q", "origin", f"+{ref}:{ref}")
    c.git("stash", "apply", "--index", ref)
    return c


def test_stash_apply_round_trip(repo: Repo, tmp_path: Path) -> None:
    repo.write("bin.dat", os.urandom(500))
    repo.write("run.sh", "#!/bin/sh\n", mode=0o755)
    repo.write("old.txt", "old\n")
    repo.write("dir/deleted-staged.txt", "x\n")
    os.symlink("README.md", repo.path / "link")
    repo.commit_all("base")
    repo.write("bin.dat", os.urandom(400))
    repo.git("add", "bin.dat")
    repo.write("src/app.py", "staged\n")
    repo.git("add", "src/app.py")
    repo.write("src/app.py", "unstaged\n")
    repo.write("README.md", "readme\n", mode=0o755)
    (repo.path / "old.txt").unlink()
    repo.git("rm", "-q", "dir/deleted-staged.txt")
    (repo.path / "link").unlink()
    os.symlink("src/app.py", repo.path / "link")
    repo.write("added.txt", "added\n")
    repo.git("add", "added.txt")
    repo.write("ünïcode dir/fïle.txt", "u\n")
    repo.write("untracked/deep/a/b/c.sh", "#!/bin/sh\n", mode=0o755)
    repo.write("untracked/empty", b"")
    os.symlink("../README.md", repo.path / "untracked" / "ln")
    repo.cp("save")

    want_files = workspace_files(repo.path)
    want_index = repo.git("ls-files", "-s", "-z")
    want_cached = repo.git("diff", "--cached", "--binary")
    want_status = repo.git("status", "--porcelain=v1", "-z", "--untracked-files=all")

    c = apply_in_clone(repo, tmp_path, REF1)
    assert workspace_files(c.path) == want_files
    assert c.git("ls-files", "-s", "-z") == want_index
    assert c.git("diff", "--cached", "--binary") == want_cached
    assert c.git("status", "--porcelain=v1", "-z", "--untracked-files=all") == want_status


def test_stash_apply_in_reset_clone(repo: Repo, tmp_path: Path) -> None:
    """The other route: a clone that moved on, reset hard to the base and cleaned."""
    base = repo.git("rev-parse", "HEAD").strip()
    repo.write("src/app.py", "work\n")
    repo.write("u.txt", "u\n")
    repo.cp("save")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo.path), str(clone)], check=True)
    c = Repo(clone)
    c.write("junk.txt", "junk\n")
    c.write("src/app.py", "junk\n")
    c.git("fetch", "-q", "origin", f"+{REF1}:{REF1}")
    c.git("reset", "-q", "--hard", base)
    c.git("clean", "-fdxq")
    c.git("stash", "apply", "--index", REF1)
    assert (clone / "src" / "app.py").read_text() == "work\n"
    assert (clone / "u.txt").read_text() == "u\n"
    assert not (clone / "junk.txt").exists()
