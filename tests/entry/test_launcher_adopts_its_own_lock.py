"""The launcher (entry/launch.py) takes the checkpoint lock before the tool is loaded
(fast/prescan.py) for every `save`, `restore` and `undo`; the command must adopt that
lock (Context.locked, save_workspace(prescan=...), restore_to(prescan=...)). A path
that takes the lock itself while the prescan holds it waits for itself and ends in
"another git-checkpoint is running (pid <own pid>)". Each form below runs through the
installed `git-checkpoint` with checkpoint.lockTimeout=1, so such a wait shows at once.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import BIN, Repo

LAUNCHER = os.path.join(BIN, "git-checkpoint")
SELF_WAIT = "another git-checkpoint is running"


def launch(repo: Repo, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [LAUNCHER, *args],
        cwd=cwd or repo.path,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


@pytest.fixture
def saved(repo: Repo) -> Repo:
    """One checkpoint (cp_001), then a change to restore over."""
    repo.git("config", "checkpoint.lockTimeout", "1")
    repo.write("src/app.py", "print('saved')\n")
    repo.write("notes.txt", "untracked\n")
    repo.cp("save", "-m", "first")
    repo.write("src/app.py", "print('changed')\n")
    return repo


def lock_is_free(repo: Repo) -> bool:
    import fcntl

    path = repo.path / ".git/checkpoint/lock"
    if not path.exists():
        return True
    with open(path, "a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
    return True


SAVE_FORMS = [
    ["save"],
    ["save", "-m", "plain"],
    ["save", "-mattached"],
    ["save", "--message=eq"],
    ["save", "--json"],
    ["save", "--task", "other"],
    ["save", "--include", "tmp/"],
    ["save", "--auto"],
    ["save", "--hypothesis", "h", "--next", "n"],
    ["save", "-m", "-starts-with-dash"],  # click's path: the fast reader gives up
    ["save", "--task", "t", "-m", "--json"],  # click's path, value looks like an option
    ["save", "--json", "-m", "x", "--include", "tmp/", "--task", "jt"],
]


@pytest.mark.parametrize("form", SAVE_FORMS, ids=lambda f: " ".join(f))
def test_every_save_form_adopts_the_launchers_lock(saved: Repo, form: list[str]) -> None:
    (saved.path / "tmp").mkdir(exist_ok=True)
    saved.write("tmp/x.log", "ignored but included\n")
    proc = launch(saved, *form)
    assert SELF_WAIT not in proc.stderr + proc.stdout, proc.stderr
    assert proc.returncode == 0, proc.stderr
    assert lock_is_free(saved)


RESTORE_FORMS = [
    (["restore"], 0),
    (["restore", "cp_001"], 0),
    (["restore", "@"], 0),
    (["restore", "--dry-run"], 0),
    (["restore", "cp_001", "--dry-run", "--json"], 0),
    (["restore", "--json"], 0),
    (["restore", "--keep-head", "cp_001"], 0),
    (["restore", "main/cp_001"], 0),
    (["restore", "cp_404"], 2),  # an unknown checkpoint: exit 2, not a wait
    (["restore", "--dry-run", "cp_404"], 2),
    (["restore", "--", "src/app.py"], None),  # click's path
    (["restore", "cp_001", "--", "src/app.py"], None),
]


@pytest.mark.parametrize(
    "form,code", RESTORE_FORMS, ids=lambda f: " ".join(f) if isinstance(f, list) else str(f)
)
def test_every_restore_form_adopts_the_launchers_lock(
    saved: Repo, form: list[str], code: int | None
) -> None:
    proc = launch(saved, *form)
    assert SELF_WAIT not in proc.stderr + proc.stdout, proc.stderr
    if code is not None:
        assert proc.returncode == code, proc.stderr
    assert lock_is_free(saved)


UNDO_FORMS = [
    (["undo"], 0),
    (["undo", "--json"], 0),
    (["undo", "--task", "main"], 0),
    (["undo", "--task=main", "--json"], 0),
    (["undo", "--keep-head"], 0),
    (["undo", "--task", "-x"], None),  # click's path
    (["undo", "--task", "nosuch"], None),
]


@pytest.mark.parametrize(
    "form,code", UNDO_FORMS, ids=lambda f: " ".join(f) if isinstance(f, list) else str(f)
)
def test_every_undo_form_adopts_the_launchers_lock(
    saved: Repo, form: list[str], code: int | None
) -> None:
    r = launch(saved, "restore", "cp_001")
    assert r.returncode == 0, r.stderr
    saved.write("src/app.py", "print('after the restore')\n")
    proc = launch(saved, *form)
    assert SELF_WAIT not in proc.stderr + proc.stdout, proc.stderr
    if code is not None:
        assert proc.returncode == code, proc.stderr
    assert lock_is_free(saved)


def test_a_broken_config_save_restore_undo_neither_wait_nor_hold(saved: Repo) -> None:
    saved.write(".checkpoint.yaml", "untracked: {include: 5}\nbogus: 1\n")
    proc = launch(saved, "save", "-m", "x")  # saved with the defaults, and said
    assert proc.returncode == 0 and "using the default settings" in proc.stderr, proc.stderr
    assert SELF_WAIT not in proc.stderr
    assert lock_is_free(saved)
    for form in (["restore", "--dry-run"], ["restore", "cp_001"], ["undo"]):
        proc = launch(saved, *form)
        assert SELF_WAIT not in proc.stderr + proc.stdout, (form, proc.stderr)
        assert lock_is_free(saved)


def test_from_a_subfolder_and_a_linked_worktree(saved: Repo, tmp_path: Path) -> None:
    proc = launch(saved, "save", "-m", "sub", cwd=saved.path / "src")
    assert proc.returncode == 0 and SELF_WAIT not in proc.stderr, proc.stderr
    wt = tmp_path / "linked"
    saved.git("worktree", "add", "-q", "-b", "side", str(wt))
    (wt / "extra.txt").write_text("in the linked worktree\n")
    for form in (["save", "-m", "wt"], ["restore", "--dry-run"], ["restore"], ["undo"]):
        proc = subprocess.run(
            [LAUNCHER, *form], cwd=wt, capture_output=True, text=True, check=False, timeout=60
        )
        assert SELF_WAIT not in proc.stderr, (form, proc.stderr)
        assert proc.returncode == 0, (form, proc.stderr)


@pytest.mark.parametrize(
    "entry",
    [
        [sys.executable, "-m", "git_checkpoint"],
        [sys.executable, "-c", "from git_checkpoint.launch import main; main()"],
        [sys.executable, "-c", "from git_checkpoint.entry.launch import main; main()"],
    ],
    ids=["python -m", "old launch:main", "entry.launch:main"],
)
def test_other_entries_save_restore_and_undo(saved: Repo, entry: list[str]) -> None:
    for form in (["save", "-m", "e"], ["restore", "cp_001"], ["undo"], ["save", "-m", "-x"]):
        proc = subprocess.run(
            [*entry, *form], cwd=saved.path, capture_output=True, text=True, check=False, timeout=60
        )
        assert SELF_WAIT not in proc.stderr, (form, proc.stderr)
        assert proc.returncode == 0, (form, proc.stderr)


SLOW_SCAN = """#!/bin/sh
if [ "$1" = "-C" ] && [ "$3" = "status" ]; then sleep 4; fi
exec "{real}" "$@"
"""


def test_a_command_that_times_out_names_the_live_holder(saved: Repo, tmp_path: Path) -> None:
    """A save held in its early scan (a slow `git status`) holds the lock; a second one
    gives up after checkpoint.lockTimeout naming the first one's pid, not its own."""
    import shutil
    import time

    folder = tmp_path / "slowgit"
    folder.mkdir()
    real = os.path.realpath(shutil.which("git") or "/usr/bin/git")
    (folder / "git").write_text(SLOW_SCAN.format(real=real))
    (folder / "git").chmod(0o755)
    env = {**os.environ, "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}
    saved.write("src/app.py", "print('held')\n")
    holder = subprocess.Popen(
        [LAUNCHER, "save", "-m", "slow"], cwd=saved.path, env=env,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        time.sleep(1.0)  # the holder is in its early scan, holding the lock
        proc = launch(saved, "save", "-m", "waiting")
        assert proc.returncode == 3, proc.stderr
        assert "another git-checkpoint is running" in proc.stderr
        assert f"(pid {holder.pid})" in proc.stderr or "(pid" not in proc.stderr, (
            holder.pid,
            proc.stderr,
        )
    finally:
        holder.communicate(timeout=60)
    assert holder.returncode == 0
