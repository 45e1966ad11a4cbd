"""A task record that is not a regular file or not UTF-8 never hangs or crashes
`status` and `resume`."""

from __future__ import annotations

import time

import pytest

from ..conftest import Repo
from ..helpers import replace_with_endless


@pytest.mark.parametrize("kind", ["fifo", "symlink to /dev/zero"])
def test_task_record_that_is_not_a_regular_file_never_hangs(repo: Repo, kind: str) -> None:
    repo.cp("save", "--hypothesis", "h")
    record = repo.path / ".git" / "checkpoint" / "tasks" / "main.yaml"
    replace_with_endless(record, kind)
    started = time.monotonic()
    assert "task: main" in repo.cp("status", timeout=20).stdout
    repo.cp("resume", timeout=20)
    assert time.monotonic() - started < 10


def test_a_task_record_that_is_not_utf8_is_not_a_crash(repo: Repo) -> None:
    repo.cp("save")
    (repo.path / ".git/checkpoint/tasks").mkdir(parents=True, exist_ok=True)
    (repo.path / ".git/checkpoint/tasks/main.yaml").write_bytes(b"\xff\xfe hypothesis: x\n")
    repo.cp("status")
