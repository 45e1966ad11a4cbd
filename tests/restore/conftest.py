"""Shared by the restore tests: a workspace's full state, git-checkpoint run directly
with a `git` first on PATH that kills it, fails or edits the work tree at a chosen call,
git's own checkout as the oracle of the bytes a restore writes, and the workspaces
several files start from."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from ..conftest import BIN, Repo
from ..helpers import fingerprint, state
from ..launcher import REAL_GIT

CP = shutil.which("git-checkpoint", path=BIN)  # the one `git checkpoint` runs in tests


needs_cp = pytest.mark.skipif(CP is None or REAL_GIT is None, reason="needs git-checkpoint")


JOURNAL = ".git/checkpoint/restore-journal.json"


# --- a workspace as a restore must leave it -------------------------------------------


def full_state(repo: Repo) -> tuple[object, ...]:
    """Work tree, index, and what git says of it (intent-to-add and ignored included)."""
    fp, index = state(repo)
    status = repo.git("status", "--porcelain=v2", "--untracked-files=all", "--ignored")
    return fp, index, status


def copy_repo(repo: Repo, to: Path) -> Repo:
    shutil.copytree(repo.path, to, symlinks=True)
    return Repo(to)


# --- git-checkpoint run directly, a `git` first on PATH that acts at a chosen call ----


def git_wrapper(tmp_path: Path, body: str) -> Path:
    """A folder holding a `git` that runs the shell `body`, then the real git."""
    folder = tmp_path / "wrap"
    folder.mkdir(exist_ok=True)
    script = folder / "git"
    script.write_text(f'#!/bin/sh\n{body}\nexec {REAL_GIT} "$@"\n')
    script.chmod(0o755)
    return folder


def run_with_git(
    repo: Repo, wrapper: Path, *args: str, cwd: Path | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    """git-checkpoint ARGS with `wrapper` (a folder holding a `git`) first on PATH."""
    assert CP is not None
    full = {**os.environ, **env, "PATH": f"{wrapper}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(
        [CP, *args], cwd=cwd or repo.path, env=full, capture_output=True, text=True, check=False
    )


WRAPPER = """#!/bin/sh
# Acts at the $TRAP_NTH-th call whose arguments contain $TRAP_ON (real index only) while
# the shell condition $TRAP_WHEN holds.
if [ -z "$GIT_INDEX_FILE" ]; then
  case " $* " in
    *"$TRAP_ON"*)
      sh -c "${TRAP_WHEN:-true}" || exec "$REAL_GIT" "$@"
      n=0; [ -f "$TRAP_COUNT" ] && read -r n < "$TRAP_COUNT"; n=$((n + 1))
      echo "$n" > "$TRAP_COUNT"
      if [ "$n" = "${TRAP_NTH:-1}" ]; then
        case "$TRAP_DO" in
          kill) kill -KILL "$PPID"; exit 137 ;;
          fail) echo "fatal: injected failure" >&2; exit 128 ;;
          *) sh -c "$TRAP_DO" ;;
        esac
      fi ;;
  esac
fi
exec "$REAL_GIT" "$@"
"""


WRAPPER_STAGING = WRAPPER.replace('if [ -z "$GIT_INDEX_FILE" ]; then', "if true; then")


def trapped(
    repo: Repo,
    tmp: Path,
    on: str,
    do: str,
    nth: int = 1,
    any_index: bool = False,
    when: str = "true",
) -> dict[str, str]:
    folder = tmp / f"trap-{time.monotonic_ns()}"
    folder.mkdir()
    script = folder / "git"
    script.write_text(WRAPPER_STAGING if any_index else WRAPPER)
    script.chmod(0o755)
    return {
        "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}",
        "REAL_GIT": REAL_GIT,
        "TRAP_ON": on,
        "TRAP_DO": do,
        "TRAP_NTH": str(nth),
        "TRAP_COUNT": str(folder / "count"),
        "TRAP_WHEN": when,
    }


def direct(repo: Repo, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`git-checkpoint ARGS` without git in front: git would put its own exec path first
    on PATH, and the trap's `git` would not be the one found.
    """
    return subprocess.run(
        [shutil.which("git-checkpoint") or "git-checkpoint", *args],
        cwd=repo.path,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        check=False,
    )


def interrupted(repo: Repo, tmp: Path, *args: str, on: str, when: str = "true") -> None:
    """Run `git checkpoint ARGS` and kill it at the matching git call."""
    proc = direct(repo, *args, env=trapped(repo, tmp, on, "kill", when=when))
    assert proc.returncode != 0, proc.stdout
    assert (repo.path / JOURNAL).exists(), "the kill came too early or too late"


# --- git's own checkout: the bytes a restore must write -------------------------------


def cp_commit(repo: Repo, name: str) -> str:
    return repo.git("rev-parse", f"refs/checkpoints/main/{name}").strip()


def fresh_checkout(repo: Repo, commit: str, where: Path) -> dict[str, tuple[str, bytes, bool]]:
    """What `git checkout` of `commit` writes: a fresh detached worktree's files, without
    its `.git` file."""
    repo.git("worktree", "add", "-q", "--detach", str(where), commit)
    try:
        found = fingerprint(where)
    finally:
        repo.git("worktree", "remove", "--force", str(where))
    found.pop(".git", None)
    return found


def checkout_files(repo: Repo, commit: str, where: Path) -> dict[str, tuple[str, bytes, bool]]:
    """What `git checkout` of `commit` writes: a fresh detached worktree's files, its
    `.git` file included."""
    repo.git("worktree", "add", "-q", "--detach", str(where), commit)
    try:
        return fingerprint(where)
    finally:
        repo.git("worktree", "remove", "--force", str(where))


def same_as_checkout(repo: Repo, name: str, tmp_path: Path, only: list[str] | None = None) -> None:
    """Every file of checkpoint `name`'s tracked tree (or those in `only`: what the
    restore wrote) is on disk as git writes it."""
    wanted = checkout_files(repo, cp_commit(repo, name), tmp_path / "oracle")
    wanted.pop(".git", None)
    if only is not None:
        wanted = {p: wanted[p] for p in only}
    got = fingerprint(repo.path)
    assert {p: got.get(p) for p in wanted} == wanted


def staging_empty(repo: Repo) -> None:
    stage = repo.path / ".git" / "checkpoint" / "staging"
    assert not stage.exists() or list(stage.iterdir()) == []
    assert not [p for p in (repo.path / ".git").iterdir() if p.name.startswith("checkpoint-")]
    assert not [p for p in repo.path.rglob(".checkpoint-*")]


# --- workspaces the tests start from --------------------------------------------------


@pytest.fixture
def two(repo: Repo) -> Repo:
    """cp_001 with a.txt 'one'; then the workspace has a.txt 'two' and b.txt."""
    repo.write("a.txt", "one\n")
    repo.commit_all("a")
    repo.cp("save", "-m", "one")
    repo.write("a.txt", "two\n")
    repo.write("b.txt", "new\n")
    return repo


def hidden_and_edited(repo: Repo) -> None:
    """cp_001 holds notes/todo.txt; then a new rule hides it and the attempt edits it."""
    repo.write("notes/todo.txt", "mine\n")
    repo.cp("save", "-m", "base")
    with open(repo.path / ".gitignore", "a") as fh:
        fh.write("notes/\n")
    repo.write("notes/todo.txt", "the attempt's edit\n")


def marked_then_deleted(repo: Repo, path: str, force: bool = False) -> None:
    """`git add -N` of `path`, then the file and its emptied folders removed."""
    repo.write(path, "x\n")
    repo.git("add", "-N", *(["-f"] if force else []), "--", path)
    (repo.path / path).unlink()
    folder = (repo.path / path).parent
    while folder != repo.path and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent
