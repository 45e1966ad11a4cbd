"""The run loop: save, attempt, verify, promote or roll back — with real agents."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from .conftest import Repo
from .helpers import state
from .test_verify import configure, note_events, verifier

AGENT_FAILS_ONCE = """
import json, os, pathlib, sys
attempt = int(os.environ["CHECKPOINT_ATTEMPT"])
feedback = json.loads(pathlib.Path(os.environ["CHECKPOINT_FEEDBACK"]).read_text())
log = pathlib.Path(sys.argv[1])
log.write_text(log.read_text() + json.dumps({"attempt": attempt, "feedback": feedback,
    "task": os.environ["CHECKPOINT_TASK"], "id": os.environ["CHECKPOINT_ID"]}) + "\\n")
pathlib.Path("residue").mkdir(exist_ok=True)
pathlib.Path(f"residue/attempt-{attempt}.tmp").write_text("junk")
if attempt == 1:
    pathlib.Path("src/app.py").write_text("print('wrong')\\n")
else:
    pathlib.Path("src/app.py").write_text("print('right')\\n")
    os.remove("residue/attempt-2.tmp")
"""

AGENT_ALWAYS_WRONG = """
import os, pathlib, subprocess
k = os.environ["CHECKPOINT_ATTEMPT"]
pathlib.Path("src/app.py").write_text(f"print('wrong {k}')\\n")
pathlib.Path(f"generated-{k}.txt").write_text("residue")
os.remove("README.md")
subprocess.run(["git", "commit", "-qam", f"agent commit {k}"], check=True)
"""


def agent(repo: Repo, source: str) -> list[str]:
    path = repo.path.parent / "agent.py"
    path.write_text(source)
    log = repo.path.parent / "agent.log"
    log.write_text("")
    return [sys.executable, str(path), str(log)]


def agent_log(repo: Repo) -> list[dict[str, object]]:
    text = (repo.path.parent / "agent.log").read_text()
    return [json.loads(line) for line in text.splitlines()]


def test_fails_once_then_passes(repo: Repo) -> None:
    configure(repo, verifier("unit", "grep -q right src/app.py"))
    repo.cp("task", "set", "--task", "fix", "--hypothesis", "app prints the wrong word")
    proc = repo.cp("run", "--task", "fix", "--attempts", "3", "--", *agent(repo, AGENT_FAILS_ONCE))
    out = proc.stdout
    assert "checkpoint saved: cp_001" in out
    assert "attempt 1/3" in out and "attempt 2/3" in out and "attempt 3/3" not in out
    assert "workspace matches" in out
    assert "next action:" in out
    # cp_002 is attempt 1 as verified (rejected), cp_003 the safety checkpoint of the rollback
    assert "promoted: cp_004" in out
    runs = agent_log(repo)
    assert runs[0]["feedback"]["last_failing_verifier"] is None  # type: ignore[index]
    second = runs[1]["feedback"]
    assert second["last_failing_verifier"]["name"] == "unit"  # type: ignore[index]
    assert runs[1]["task"] == "fix" and runs[1]["id"] == "cp_001"
    # the rollback removed attempt 1's residue before attempt 2 ran
    assert not (repo.path / "residue/attempt-1.tmp").exists()
    assert (repo.path / "src/app.py").read_text() == "print('right')\n"
    listed = {c["id"]: c for c in repo.cp_json("list", "--task", "fix")["checkpoints"]}
    assert listed["cp_004"]["status"] == "promoted"
    assert listed["cp_002"]["status"] == "rejected" and not listed["cp_002"]["safety"]
    assert listed["cp_003"]["safety"]
    failed_attempt = repo.git("show", "refs/checkpoints/fix/cp_002:src/app.py")
    assert failed_attempt == "print('wrong')\n"
    brief = repo.cp_json("resume", "--task", "fix")
    assert brief["attempts"] == 2
    assert brief["last_good_checkpoint"] == "cp_004"
    assert brief["last_failing_verifier"]["checkpoint"] == "cp_002"  # where the evidence is
    assert brief["hypothesis"] == "app prints the wrong word"


def test_all_attempts_fail_and_workspace_is_the_rollback_point(repo: Repo) -> None:
    configure(repo, verifier("unit", "echo 'assertion failed: 1 != 2'; exit 1"))
    repo.write("notes.txt", "untracked work the agent must not lose\n")
    repo.write("debug.log", "ignored\n")
    before = state(repo)
    head = repo.git("rev-parse", "HEAD").strip()
    proc = repo.cp("run", "--attempts", "2", "--", *agent(repo, AGENT_ALWAYS_WRONG), expect=1)
    assert "all 2 attempts failed" in proc.stdout
    assert state(repo) == before
    assert repo.git("rev-parse", "HEAD").strip() == head  # the agent's commits were moved off
    # ...but they stay reachable through the kept attempts
    kept = repo.git("log", "--format=%s", "refs/checkpoints/main/cp_002^1")
    assert "agent commit 1" in kept
    brief = repo.cp("resume").stdout
    assert "last failing verifier: unit (exit 1)" in brief
    assert "assertion failed: 1 != 2" in brief
    events = note_events(repo, "refs/checkpoints/main/cp_004")  # attempt 2
    assert events[-1]["event"] == "rejected"


def test_ctrl_c_stops_the_loop_cleanly(repo: Repo) -> None:
    configure(repo, verifier("unit", "true"))
    slow = repo.path.parent / "slow.py"
    slow.write_text(
        "import time, pathlib\npathlib.Path('partial.txt').write_text('x')\ntime.sleep(60)\n"
    )
    proc = subprocess.Popen(
        ["git-checkpoint", "run", "--", sys.executable, str(slow)],
        cwd=repo.path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    deadline = time.monotonic() + 30
    while not (repo.path / "partial.txt").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert "interrupted during attempt 1" in out
    assert "rollback point: cp_001" in out
    assert "git_checkpoint/" not in err  # the agent's own traceback may show; ours must not


def test_agent_that_cannot_start(repo: Repo) -> None:
    configure(repo, verifier("unit", "true"))
    proc = repo.cp("run", "--", "/nonexistent/agent", expect=2)
    assert "cannot run" in proc.stderr


def test_run_without_verifiers_is_bad_usage(repo: Repo, tmp_path: Path) -> None:
    proc = repo.cp("run", "--", "true", expect=2)
    assert "no verifiers configured" in proc.stderr
