"""Shared by the tests of restores that change `.gitattributes`: git itself as the
oracle of the bytes a restore writes, git-checkpoint run directly, and a `git` that
kills it or edits the work tree at a chosen call."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from .conftest import Repo
from .helpers import fingerprint

FAULT_DIR = Path(__file__).parent / "fault_git"
REAL_GIT = os.path.realpath(shutil.which("git") or "/usr/bin/git")
Files = dict[str, tuple[str, bytes, bool]]


def cp_tree(repo: Repo, name: str) -> str:
    """The tracked tree of checkpoint `name` of the current task."""
    return repo.git("rev-parse", f"refs/checkpoints/main/{name}^{{tree}}").strip()


def read_tree_oracle(repo: Repo, tree: str, where: Path) -> Files:
    """What git writes when it moves the repository as it stands to `tree`: a copy of
    it, then `git read-tree -u --reset` (git's checkout: removes, then writes)."""
    shutil.copytree(repo.path, where, symlinks=True)
    # (the copy's stat data is new: refreshed, git rewrites only what the tree changes)
    subprocess.run(["git", "update-index", "-q", "--refresh"], cwd=where, check=False)
    subprocess.run(["git", "read-tree", "-u", "--reset", tree], cwd=where, check=True)
    return fingerprint(where)


def same_as(repo: Repo, wanted: Files, paths: list[str]) -> None:
    got = fingerprint(repo.path)
    assert {p: got.get(p) for p in paths} == {p: wanted.get(p) for p in paths}


def as_git_writes(repo: Repo) -> None:
    """Every tracked file rewritten from the index as git checks it out (a checkpoint
    keeps content through the clean filters, so only such bytes come back by undo)."""
    for path in repo.git("ls-files", "-z").split("\0"):
        if path and not path.endswith(".gitattributes"):
            (repo.path / path).unlink()
    repo.git("checkout", "--", ".")


def run_cp(repo: Repo, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """git-checkpoint run directly (`git checkpoint` would put git's exec path first)."""
    return subprocess.run(
        [shutil.which("git-checkpoint") or "git-checkpoint", *args],
        cwd=repo.path, env={**os.environ, **env}, capture_output=True, text=True,
        stdin=subprocess.DEVNULL, check=False, timeout=120,
    )  # fmt: skip


def killed_run(path: Path, scratch: Path, kill_at: int, *args: str) -> tuple[int, list[str]]:
    """`git-checkpoint ARGS` in `path`, SIGKILLed before its `kill_at`-th git call (0:
    never); its exit code and the git calls it made."""
    counter = scratch / "calls"
    counter.unlink(missing_ok=True)
    Path(f"{counter}.log").unlink(missing_ok=True)
    env = {"PATH": f"{FAULT_DIR}{os.pathsep}{os.environ['PATH']}", "FI_REAL_GIT": REAL_GIT}
    env.update(FI_COUNTER=str(counter), FI_MODE="before", FI_KILL_AT=str(kill_at))
    proc = run_cp(Repo(path), env, *args)
    log = Path(f"{counter}.log")
    return proc.returncode, log.read_text().splitlines() if log.exists() else []


def edit_at(tmp_path: Path, match: str, script: str, after: bool = False) -> dict[str, str]:
    """A `git` first on PATH that runs `script` (sh, in the work tree) once, right before
    the first call whose arguments contain `match` (`after`: right after that call has
    run, as just after git read a file): an edit made during the restore."""
    folder = tmp_path / ("edit_after_git" if after else "edit_git")
    folder.mkdir(exist_ok=True)
    marker = tmp_path / ("edited_after" if after else "edited")  # (the tests look for it)
    edit = (
        f'case "$*" in *{match}*) if [ ! -e "{marker}" ]; then\n'
        f'  : > "{marker}"; {script}\nfi;; esac\n'
    )
    run = (
        f'"{REAL_GIT}" "$@"\nrc=$?\n{edit}exit "$rc"\n'
        if after
        else f'{edit}exec "{REAL_GIT}" "$@"\n'
    )
    (folder / "git").write_text("#!/bin/sh\n" + run)
    (folder / "git").chmod(0o755)
    return {"PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}
