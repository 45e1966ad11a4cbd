"""One run loop per worktree: a second `git checkpoint run` refuses while the first is
alive, saves nothing, and runs once the first is done."""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from ..conftest import Repo
from ..helpers import configure, one_line_of, verifier


def test_second_run_loop_on_one_worktree_refuses_while_the_first_is_alive(
    repo: Repo, tmp_path: Path
) -> None:
    configure(repo, verifier("unit", "true"))
    started, release = tmp_path / "started", tmp_path / "release"
    agent = tmp_path / "agent.sh"
    agent.write_text(
        f"echo attempt > work.txt; touch {started}\nwhile [ ! -f {release} ]; do sleep 0.05; done\n"
    )
    first = subprocess.Popen(
        ["git", "checkpoint", "run", "--attempts", "1", "--", "sh", str(agent)],
        cwd=repo.path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not started.exists():
            assert first.poll() is None, first.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.05)
        refs = repo.git("for-each-ref", "refs/checkpoints/")
        proc = repo.cp(
            "run", "--attempts", "1", "--", "sh", "-c", "echo other > other.txt", expect=3
        )
        assert "another `git checkpoint run`" in one_line_of(proc)
        assert not (repo.path / "other.txt").exists()
        assert repo.git("for-each-ref", "refs/checkpoints/") == refs  # nothing saved
    finally:
        release.touch()
        out, err = first.communicate(timeout=60)
    assert first.returncode == 0, out + err
    assert (repo.path / "work.txt").read_text() == "attempt\n"
    repo.cp("run", "--attempts", "1", "--", "true")  # the lock went with the first loop
