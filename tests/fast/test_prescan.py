"""The early scan (fast/prescan): the installed command starts a save's, restore's or
undo's work-tree scan under the checkpoint lock before it loads the rest of the tool,
uses it once, and leaves nothing behind (no scratch folder, no held lock) when the
command does not use it or fails."""

from __future__ import annotations

import fcntl
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import Repo
from ..helpers import latest_ref, state
from ..launcher import (
    early_calls,
    launch_via_shell,
    lock_free,
    logged,
    look,
    no_traceback,
    scratch,
    scratch_left,
    traced,
)


def leftovers(repo: Repo) -> list[str]:
    return sorted(p.name for p in (repo.path / ".git").glob("checkpoint-*"))


def lock_is_free(repo: Repo) -> bool:
    with open(repo.path / ".git/checkpoint/lock", "a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True


def scans(children: list[list[str]]) -> list[list[str]]:
    return [a for a in children if "status" in a]


def test_a_save_scans_once_and_first(repo: Repo) -> None:
    repo.write("src/app.py", "print('changed')\n")
    repo.write("new.txt", "untracked\n")
    children = traced(repo, "save", "-m", "one")
    assert len(scans(children)) == 1
    # The early three come first (git's own start-up order among them varies).
    early = {c[2] for c in children[:3] if c[:2] == ["-C", str(repo.path)]}
    assert early == {"status", "write-tree", "ls-files"}, children
    assert leftovers(repo) == []
    shown = repo.git("show", "--stat", "--format=", "refs/checkpoints/main/cp_001")
    assert "src/app.py" in shown


def test_the_early_scan_runs_from_a_subfolder_at_the_top(repo: Repo) -> None:
    repo.write("src/app.py", "print('changed')\n")
    sub = repo.path / "src"
    trace = repo.path.parent / "trace2.txt"
    repo.cp("save", cwd=sub, env={"GIT_TRACE2": str(trace)})
    assert f"-C {repo.path} status" in trace.read_text()
    tree = repo.git("ls-tree", "-r", "--name-only", "refs/checkpoints/main/cp_001")
    assert "src/app.py" in tree.split()


def test_a_restore_takes_its_safety_checkpoint_from_the_early_scan(repo: Repo) -> None:
    repo.cp("save", "-m", "good")
    good = state(repo)
    repo.write("src/app.py", "print('broken')\n")
    repo.write("residue.tmp", "x\n")
    broken = state(repo)
    children = traced(repo, "restore", "cp_001")
    assert len(scans(children)) == 1 and "status" in {c[2] for c in children[:3]}
    assert state(repo) == good
    repo.cp("undo")
    assert state(repo) == broken
    assert leftovers(repo) == [] and lock_is_free(repo)


@pytest.mark.parametrize(
    ("args", "code"),
    [
        (("restore", "cp_042"), 2),  # unknown checkpoint: refused before any scan is used
        (("undo",), 2),  # nothing to undo
        (("save", "--no-such-flag"), 2),  # click refuses the command line
    ],
)
def test_an_early_scan_nobody_takes_leaves_nothing(
    repo: Repo, args: tuple[str, ...], code: int
) -> None:
    repo.cp("save")
    repo.write("src/app.py", "print('edited')\n")
    before = state(repo)
    children = traced(repo, *args, expect=code)
    assert len(scans(children)) == 1  # it did start
    assert state(repo) == before
    assert leftovers(repo) == []
    assert lock_is_free(repo)  # released at exit, not held by a child


def test_help_and_continue_start_nothing(repo: Repo) -> None:
    assert scans(traced(repo, "save", "--help")) == []
    assert scans(traced(repo, "restore", "--continue", expect=None)) == []


def test_a_held_lock_means_no_early_scan(repo: Repo) -> None:
    repo.cp("save")
    repo.git("config", "checkpoint.lockTimeout", "0.3")
    repo.write("src/app.py", "print('edited')\n")
    with open(repo.path / ".git/checkpoint/lock", "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        children = traced(repo, "save", expect=3)
    assert scans(children) == []  # it waited for the lock, and gave up before scanning
    assert leftovers(repo) == []


def test_an_unmerged_index_is_refused_as_before(repo: Repo) -> None:
    repo.git("checkout", "-q", "-b", "other")
    repo.write("src/app.py", "print('other')\n")
    repo.commit_all("other")
    repo.git("checkout", "-q", "main")
    repo.write("src/app.py", "print('main')\n")
    repo.commit_all("main side")
    repo.git("merge", "-q", "other", check=False)
    proc = repo.cp("save", expect=3)
    assert "unmerged" in proc.stderr and "Traceback" not in proc.stderr
    assert leftovers(repo) == [] and lock_is_free(repo)


def test_git_dir_in_the_environment_means_no_early_scan(repo: Repo, tmp_path: Path) -> None:
    repo.write("src/app.py", "print('edited')\n")
    trace = tmp_path / "t.txt"
    env = {
        **os.environ,
        "GIT_DIR": str(repo.path / ".git"),
        "GIT_WORK_TREE": str(repo.path),
        "GIT_TRACE2": str(trace),
    }
    subprocess.run(["git", "checkpoint", "save"], cwd=tmp_path, env=env, check=True)
    assert f"-C {repo.path} status" not in trace.read_text()
    assert "src/app.py" in repo.git("show", "--stat", "refs/checkpoints/main/cp_001")


@pytest.mark.parametrize("launcher", [True, False])
def test_the_users_index_is_never_written_through_its_link(repo: Repo, launcher: bool) -> None:
    """The scratch indexes are hard links to the user's index (gitcore/spawn.link_or_copy):
    git refreshing one writes a new file and renames it over the link, never into the
    shared file."""
    repo.write("src/app.py", "print('edited')\n")
    os.utime(repo.path / "README.md", ns=(1, 10**18))  # stat-dirty: status refreshes it
    index = repo.path / ".git/index"
    before = index.read_bytes(), index.stat().st_ino, index.stat().st_mtime_ns
    if launcher:
        repo.cp("save")
    else:  # the plain path: no early scan, gitcore/repo.temp_index links the same way
        subprocess.run([sys.executable, "-m", "git_checkpoint", "save"], cwd=repo.path, check=True)
    assert (index.read_bytes(), index.stat().st_ino, index.stat().st_mtime_ns) == before
    assert "src/app.py" in repo.git("show", "--stat", "refs/checkpoints/main/cp_001")


# --- counted through the launcher: the early scan's children ------------------------------


def test_a_save_through_git_checkpoint_starts_the_early_scan(repo: Repo) -> None:
    """`git checkpoint save` (as `Repo.cp` runs it: git finds the venv's launcher first on
    PATH) starts the early scan: its three children are among the git calls."""
    repo.write("src/app.py", "changed\n")
    calls = logged(repo, "save", "-m", "x")
    assert "refs/checkpoints/main/cp_001" in repo.git("for-each-ref", "refs/checkpoints/")
    assert len(early_calls(calls)) == 3, calls


def test_an_unmerged_index_is_refused_and_leaves_nothing(repo: Repo) -> None:
    repo.write("f", "base\n")
    repo.commit_all("f")
    repo.git("checkout", "-q", "-b", "other")
    repo.write("f", "other\n")
    repo.commit_all("other")
    repo.git("checkout", "-q", "main")
    repo.write("f", "mine\n")
    repo.commit_all("mine")
    repo.git("merge", "other", check=False)
    before = look(repo)
    for args in (("save", "-m", "x"), ("restore", "cp_001")):
        proc = repo.cp(*args, expect=None)
        assert proc.returncode in (2, 3), proc.stderr
        no_traceback(proc)
    assert look(repo) == before
    assert scratch_left(repo.path / ".git") == []
    assert lock_free(repo.path / ".git")


@pytest.mark.parametrize("var", ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"])
def test_git_variables_in_the_environment_mean_no_early_scan(repo: Repo, var: str) -> None:
    repo.write("src/app.py", "changed\n")
    value = {
        "GIT_DIR": str(repo.path / ".git"),
        "GIT_WORK_TREE": str(repo.path),
        "GIT_INDEX_FILE": str(repo.path / ".git/index"),
    }[var]
    calls = logged(repo, "save", "-m", "x", **{var: value})
    assert early_calls(calls) == []
    assert repo.git("show", f"{latest_ref(repo)}:src/app.py") == "changed\n"


def test_a_bad_config_after_the_early_scan_leaves_nothing(repo: Repo) -> None:
    """The scan starts before the configuration is read: a save that then finds it
    broken goes on with the defaults, with the scan's children, and leaves nothing."""
    repo.write(".checkpoint.yaml", "limits: {overlay_max_files: -4}\n")
    calls = logged(repo, "save", "-m", "x")
    assert "refs/checkpoints/main/cp_001" in repo.git("for-each-ref", "refs/checkpoints/")
    assert len(early_calls(calls)) == 3
    assert scratch_left(repo.path / ".git") == []
    assert lock_free(repo.path / ".git")


# --- the scratch folder, whatever the command ----------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("save", "-m", "x"),
        ("save", "--task", "a b"),  # refused after the scan started
        ("save", "--include", "missing"),
        ("save", "--bogus"),  # click's error, the scan started all the same
        ("restore", "cp_001"),
        ("restore", "cp_404"),
        ("undo",),
    ],
)
def test_no_scratch_folder_is_left(repo: Repo, args: tuple[str, ...]) -> None:
    repo.write("new.txt", "new\n")
    repo.cp("save", "-m", "one")
    repo.write("new.txt", "changed\n")
    repo.cp("restore", expect=None)
    repo.cp("undo", expect=None)
    proc = launch_via_shell(repo, *args)
    assert "Traceback" not in proc.stderr and not re.search("internal error", proc.stderr)
    assert scratch(repo) == []
