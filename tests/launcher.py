"""Running the installed `git-checkpoint` as a person, a hook or an agent runs it, and
watching what it does: the git calls it makes (a `git` first on PATH that counts, edits
or waits), its checkpoint lock, and the scratch folders of its early scan.

`git checkpoint` puts git's exec path first on PATH, so a `git` wrapper in front of PATH
would see only that one call; these helpers run the launcher itself."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

from .conftest import BIN, Repo
from .helpers import fingerprint

REAL_GIT = os.path.realpath(shutil.which("git") or "/usr/bin/git")


FAULT_DIR = Path(__file__).parent / "fault_git"


LAUNCHER = os.path.join(BIN, "git-checkpoint")  # entry/launch.main: the early scan's entry


# --- running it -----------------------------------------------------------------------


def launch(
    repo: Repo,
    *args: str,
    expect: int | None = 0,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run the installed `git-checkpoint` (entry/launch.main) itself, as `git checkpoint` would,
    but without git in between: git puts its exec-path first on PATH, so a `git` wrapper
    in front of PATH would see only the `git checkpoint` call, not the tool's git calls."""
    proc = subprocess.run(
        [LAUNCHER, *args],
        cwd=cwd or repo.path,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    if expect is not None and proc.returncode != expect:
        raise AssertionError(
            f"git-checkpoint {' '.join(args)}: exit {proc.returncode}, wanted {expect}\n"
            f"stdout: {proc.stdout}\nstderr: {proc.stderr}"
        )
    return proc


def launch_via_shell(
    repo: Repo, *args: str, redirect: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The launcher with ARGS; `redirect` (e.g. `2>&-`) applied by a shell in between."""
    return subprocess.run(
        ["sh", "-c", f'exec "$@" {redirect}', "sh", LAUNCHER, *args],
        cwd=repo.path,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        errors="surrogateescape",
        check=False,
        timeout=120,
    )


def run_plain(
    repo: Repo, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`python -m git_checkpoint ARGS`: entry/cli.main without the launcher (no early scan),
    with `env` added."""
    return subprocess.run(
        [sys.executable, "-m", "git_checkpoint", *args],
        cwd=cwd or repo.path,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


# --- a `git` first on PATH ------------------------------------------------------------


def wrapper_env(tmp_path: Path, body: str, **variables: str) -> dict[str, str]:
    """A `git` first on PATH that runs the shell `body` ($1.. are git's arguments, `$*`
    holds `-C ROOT status …` for the early scan's status), then the real git."""
    folder = tmp_path / "wrap"
    folder.mkdir(exist_ok=True)
    (folder / "git").write_text(f'#!/bin/sh\n{body}\nexec "{REAL_GIT}" "$@"\n')
    (folder / "git").chmod(0o755)
    return {"PATH": f"{folder}{os.pathsep}{os.environ['PATH']}", **variables}


def git_wrapper_env(folder: Path, script: str, **variables: str) -> dict[str, str]:
    """`script` installed as `git` in `folder`, first on PATH, with `variables`."""
    folder.mkdir(exist_ok=True)
    wrapper = folder / "git"
    wrapper.write_text(script)
    wrapper.chmod(0o755)
    return {"PATH": f"{folder}{os.pathsep}{os.environ['PATH']}", **variables}


# A git that runs $EA_EDIT (a shell line, in the work tree) once the early scan's status
# (`git -C ROOT status ...`) has read the work tree, before handing its output over: a
# change made between the early scan and the rest of the command, at a fixed point.
EDIT_AFTER_SCAN = """#!/bin/sh
if [ "$1" = "-C" ] && [ "$3" = "status" ] && [ -n "$EA_EDIT" ]; then
    out="$2/.git/ea-status-out"
    "$EA_REAL" "$@" > "$out"
    rc=$?
    (cd "$2" && unset GIT_INDEX_FILE GIT_OPTIONAL_LOCKS && eval "$EA_EDIT")
    cat "$out"
    rm -f "$out"
    exit "$rc"
fi
exec "$EA_REAL" "$@"
"""


def edit_after_scan_env(tmp_path: Path, edit: str) -> dict[str, str]:
    return git_wrapper_env(tmp_path / "edit-git", EDIT_AFTER_SCAN, EA_REAL=REAL_GIT, EA_EDIT=edit)


# --- the git calls it made ------------------------------------------------------------


def traced(repo: Repo, *args: str, expect: int | None = 0) -> list[list[str]]:
    """Run `git checkpoint ARGS` with GIT_TRACE2; the argv of each git child (after
    `git`), in the order they started, `git checkpoint` itself left out."""
    trace = repo.path.parent / "trace2.txt"
    trace.unlink(missing_ok=True)
    repo.cp(*args, expect=expect, env={"GIT_TRACE2": str(trace)})
    started = []
    for line in trace.read_text().splitlines():
        # "20:53:42.212311 common-main.c:51    start git -C /x status --porcelain=v2 ..."
        _, sep, argv = line.partition(" start git ")
        if sep and not argv.startswith("checkpoint "):
            started.append(argv.split())
    return started


def logged(repo: Repo, *args: str, expect: int | None = 0, **kw: str) -> list[str]:
    """Run `git checkpoint ARGS` with tests/fault_git/git counting (never killing): the
    arguments of each git call it made."""
    counter = repo.path.parent / "ea-calls"
    counter.unlink(missing_ok=True)
    log = Path(f"{counter}.log")
    log.unlink(missing_ok=True)
    env = {
        "PATH": f"{FAULT_DIR}{os.pathsep}{os.environ['PATH']}",
        "FI_REAL_GIT": REAL_GIT,
        "FI_COUNTER": str(counter),
        "FI_KILL_AT": "0",
        "FI_MODE": "before",
        **kw,
    }
    launch(repo, *args, expect=expect, env=env)
    return log.read_text().splitlines() if log.exists() else []


def early_calls(calls: list[str]) -> list[str]:
    """The early scan's children: the only git calls made with `-C ROOT`."""
    return [c for c in calls if c.startswith("-C ")]


# --- what it leaves behind ------------------------------------------------------------


def scratch(repo: Repo) -> list[str]:
    """The early scan's scratch folders left in the repository's git dir."""
    return sorted(p.name for p in (repo.path / ".git").glob("checkpoint-*"))


def scratch_left(git_dir: Path) -> list[str]:
    """The early scan's scratch folders left in `git_dir`."""
    return sorted(p.name for p in git_dir.glob("checkpoint-*"))


def lock_free(common_dir: Path) -> bool:
    """Whether the checkpoint lock of `common_dir` can be taken now."""
    path = common_dir / "checkpoint" / "lock"
    if not path.exists():
        return True
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


def look(repo: Repo) -> tuple[object, str, str, str]:
    """Files (all of them, ignored ones too), the index with marks, status, HEAD."""
    return (
        fingerprint(repo.path),
        repo.git("ls-files", "-s", "-v"),
        repo.git("status", "--porcelain", "--untracked-files=all"),
        (repo.path / ".git" / "HEAD").read_text() + repo.git("rev-parse", "HEAD", check=False),
    )


def no_traceback(proc: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr
