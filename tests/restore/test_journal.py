"""The restore journal as `list`, `status`, `--continue` and `undo` read it: a restore
still running (its lock held) is in progress, not interrupted; a journal that cannot
be read is one line, and undo sets it aside."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from ..conftest import Repo
from .conftest import JOURNAL


def test_a_restore_in_progress_is_not_called_interrupted(two: Repo) -> None:
    (two.path / JOURNAL).parent.mkdir(parents=True, exist_ok=True)
    journal = {
        "target": "0" * 40,
        "target_name": "main/cp_001",
        "safety": "0" * 40,
        "safety_name": "main/cp_002",
        "head_from": None,
        "head_to": None,
        "move_head": False,
        "started_at": "2026-01-01T00:00:00Z",
        "pid": 1,
        "task": "main",
        "kind": "restore",
    }
    (two.path / JOURNAL).write_text(json.dumps(journal))
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl,os,sys,time; fd=os.open(sys.argv[1], os.O_RDWR|os.O_CREAT);"
            "fcntl.flock(fd, fcntl.LOCK_EX); os.write(fd, b'%d\\n' % os.getpid());"
            "print('held', flush=True); time.sleep(30)",
            str(two.path / ".git/checkpoint/lock"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        err = two.cp("list").stderr
        assert "interrupted" not in err  # (a command that waits for it says so then)
        assert f"in progress (pid {holder.pid})" in two.cp("status").stdout
    finally:
        holder.kill()
        holder.wait()
    assert "interrupted" in two.cp("list").stderr


@pytest.mark.parametrize(
    "field, value", [("pid", "abc"), ("move_head", "yes"), ("continued_from", [1]), ("x", 1)]
)
def test_a_journal_with_wrong_value_types_is_a_one_line_error(
    two: Repo, field: str, value: object
) -> None:
    two.cp("restore", "cp_001")
    journal = {
        "target": "0" * 40, "target_name": "main/cp_001", "safety": "0" * 40,
        "safety_name": "main/cp_002", "head_from": None, "head_to": None, "move_head": False,
        "started_at": "2026-01-01T00:00:00Z", "pid": 1, "task": "main", "kind": "restore",
    }  # fmt: skip
    journal[field] = value
    (two.path / JOURNAL).write_text(json.dumps(journal))
    proc = two.cp("restore", "--continue", expect=2)
    assert "unreadable" in proc.stderr and "Traceback" not in proc.stderr
    two.cp("undo")  # sets the journal aside and undoes the last finished restore
    assert (two.path / "a.txt").read_text() == "two\n"


def test_an_unreadable_journal_warns_and_undo_sets_it_aside(repo: Repo) -> None:
    repo.cp("save")
    repo.write("src/app.py", "work\n")
    repo.cp("restore")
    journal = repo.path / ".git/checkpoint/restore-journal.json"
    journal.write_text("[1]")
    listed = repo.cp("list")
    assert "unreadable" in listed.stderr
    repo.cp("undo")
    assert (repo.path / "src/app.py").read_text() == "work\n"
    assert not journal.exists()
