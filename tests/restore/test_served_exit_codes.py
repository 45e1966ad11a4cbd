"""How a served command ends when the whole command server goes: the server and the
worker running the command SIGKILLed together (an OOM kill of the server's cgroup, a
`kill -9` of every git-checkpoint process). The client can no longer hear how the
worker ended."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from ..conftest import make_repo
from ..fault_injection import REAL_GIT
from .served import SERVED_GIT, ServedRunner


@pytest.fixture(autouse=True)
def served(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GIT_CHECKPOINT_SERVER", raising=False)


@pytest.mark.parametrize("client", ["c", "py"])
def test_a_restore_whose_server_and_worker_are_killed_exits_as_a_killed_command(
    tmp_path: Path, client: str
) -> None:
    scratch = tmp_path / "runner"
    scratch.mkdir()
    runner = ServedRunner(scratch, target="server", client=client)
    runner.up(scratch)
    try:
        repo = make_repo(tmp_path / "work")
        repo.write("a.txt", "one\n")
        repo.commit_all("base")
        assert runner(repo.path, "save", "-m", "one", kill_at=None).code == 0
        repo.write("a.txt", "two\n")
        env = runner.env()
        env["PATH"] = f"{SERVED_GIT}{os.pathsep}{os.environ['PATH']}"
        env.update(FI_REAL_GIT=REAL_GIT, FI_COUNTER=str(scratch / "calls"), FI_MODE="before")
        env.update(FI_KILL_AT="8", FI_TARGET="server", FI_SERVER_LOCK=runner.lock)
        proc = subprocess.run(
            [runner.program, "restore", "cp_001"],
            cwd=repo.path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        # As the same command run in its own process and SIGKILLed: killed by signal 9.
        assert proc.returncode == -9, (proc.returncode, proc.stderr)
        assert "killed with the command server before it finished" in proc.stderr
        assert "Traceback" not in proc.stderr
        after = runner(repo.path, "status", kill_at=None)
        assert after.code == 0, after.line()
    finally:
        runner.close()
