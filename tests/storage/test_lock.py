"""The checkpoint lock: a command that cannot take it within checkpoint.lockTimeout
starts nothing and says so in one line, and a checkpoint asked for from a git hook
inside a save waits no longer than that."""

from __future__ import annotations

import subprocess
import sys
import time

from ..conftest import Repo
from ..helpers import REF1, REF2, checkpoint_refs, one_line_error
from ..launcher import early_calls, lock_free, logged, look, scratch_left


def test_a_nested_checkpoint_from_a_git_hook_waits_no_longer_than_lock_timeout(
    repo: Repo,
) -> None:
    """A reference-transaction hook that runs `git checkpoint save` while the outer save
    (holding the lock the launcher took) creates its ref: the inner one gives up after
    checkpoint.lockTimeout, the outer one finishes."""
    repo.git("config", "checkpoint.lockTimeout", "1")
    log = repo.path.parent / "inner.log"
    hook = repo.path / ".git/hooks/reference-transaction"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(
        "#!/bin/sh\n"
        'case "$1" in committed) ;; *) exit 0 ;; esac\n'
        f"git checkpoint save -m inner >> '{log}' 2>&1\n"
        f"echo \"inner exit $?\" >> '{log}'\n"
        "exit 0\n"
    )
    hook.chmod(0o755)
    repo.write("src/app.py", "changed\n")
    started = time.monotonic()
    proc = repo.cp("save", "-m", "outer", timeout=60)
    took = time.monotonic() - started
    assert "cp_001" in proc.stdout
    text = log.read_text()
    assert "another git-checkpoint is running" in text and "inner exit 3" in text, text
    assert took < 15, took
    assert lock_free(repo.path / ".git")


def test_a_lock_held_elsewhere_starts_nothing_and_times_out_cleanly(repo: Repo) -> None:
    repo.git("config", "checkpoint.lockTimeout", "1")
    state_dir = repo.path / ".git/checkpoint"
    state_dir.mkdir(exist_ok=True)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, sys, time; f = open(sys.argv[1], 'a'); "
            "fcntl.flock(f, fcntl.LOCK_EX); print('held', flush=True); time.sleep(30)",
            str(state_dir / "lock"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        before = look(repo)
        calls = logged(repo, "save", "-m", "x", expect=3)
        assert early_calls(calls) == []
        assert look(repo) == before
        assert scratch_left(repo.path / ".git") == []
    finally:
        holder.kill()
        holder.wait()


def test_lock_held_past_its_wait_is_refused(repo: Repo) -> None:
    import fcntl

    repo.cp("save")
    repo.git("config", "checkpoint.lockTimeout", "0.5")
    repo.write("README.md", "changed\n")
    lock = repo.path / ".git" / "checkpoint" / "lock"
    with lock.open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        started = time.monotonic()
        proc = repo.cp("save", expect=3)
        assert time.monotonic() - started < 20
        waited, _, error = proc.stderr.partition("\n")
        assert waited.startswith("note: waiting for another git-checkpoint")  # said as it waits
        assert "lock" in one_line_error(error).lower() or "running" in error
    assert checkpoint_refs(repo) == [REF1]
    repo.cp("save")  # and once it is free, the save goes through
    assert checkpoint_refs(repo) == [REF1, REF2]
