"""The run loop: save, attempt, verify, promote or roll back — with real agents; the
feedback each attempt reads, the residue each rollback sweeps, where the workspace
stands when a save stops the loop, and the loop's task for the agent's own saves."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from ..conftest import Repo
from ..helpers import configure, note_events, state, verifier

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


def test_run_loop_sweeps_residue_hidden_by_the_attempts_own_ignore_rule(repo: Repo) -> None:
    configure(repo, verifier("unit", "false"))
    before = state(repo)
    agent = repo.path.parent / "agent.sh"
    agent.write_text("echo '*.tmp' >> .gitignore; echo junk > junk.tmp\n")
    repo.cp("run", "--attempts", "1", "--", "sh", str(agent), expect=1)
    assert state(repo) == before


def test_run_json_keeps_stdout_for_the_json(repo: Repo) -> None:
    configure(repo, verifier("a", "true"))
    proc = repo.cp("run", "--json", "--attempts", "1", "--", "echo", "agent talking")
    data = json.loads(proc.stdout)
    assert data["promoted"] and "agent talking" in proc.stderr


def test_overlay_limit_mid_run_says_where_the_workspace_stands(repo: Repo) -> None:
    """What the limits leave out of an attempt is said, and left in place by the
    rollback (it is in no checkpoint): the log names it."""
    repo.write(
        ".checkpoint.yaml",
        "verifiers:\n  - {name: a, command: 'test -f fixed'}\nlimits: {overlay_max_files: 5}\n",
    )
    repo.commit_all("limits")
    agent = "for i in 1 2 3 4 5 6 7 8; do echo $i$i$i$i > g$i; done"
    proc = repo.cp("run", "--attempts", "1", "--", "sh", "-c", agent, expect=1)
    log = proc.stdout
    assert "checkpoint saved: cp_002 (attempt 1)\nleft out: g" in log
    assert "over overlay_max_files" in log
    assert log.count("left in place, in no checkpoint: g") == 3
    kept = sorted(p.name for p in repo.path.glob("g*"))
    assert len(kept) == 3  # in no checkpoint: never removed


def test_overlay_refused_mid_run_says_where_the_workspace_stands(repo: Repo) -> None:
    repo.write(
        ".checkpoint.yaml",
        "verifiers:\n  - {name: a, command: 'test -f fixed'}\n"
        "limits: {overlay_max_files: 5, on_exceed: refuse}\n",
    )
    repo.commit_all("limits")
    agent = "for i in 1 2 3 4 5 6 7 8; do echo $i > g$i; done"
    proc = repo.cp("run", "--attempts", "2", "--", "sh", "-c", agent, expect=3)
    assert "stopped at attempt 1" in proc.stdout and "rollback point: cp_001" in proc.stdout
    assert "overlay too large" in proc.stderr


def test_an_agent_saving_inside_run_saves_into_the_loops_task(repo: Repo) -> None:
    configure(repo, verifier("a", "true"))
    agent = "echo x > new.txt; git checkpoint save --hypothesis 'from the agent'"
    repo.cp("run", "--task", "feat/x", "--attempts", "1", "--", "sh", "-c", agent)
    assert repo.cp_json("resume", "--task", "feat/x")["hypothesis"] == "from the agent"
    assert repo.cp_json("list")["checkpoints"] == []  # nothing landed in task main


AGENT = """\
import os, pathlib, shutil, sys
attempt = os.environ["CHECKPOINT_ATTEMPT"]
shutil.copy(os.environ["CHECKPOINT_FEEDBACK"], sys.argv[1] + f"/feedback-{attempt}.json")
pathlib.Path("bad").write_text("lint will complain\\n")
if attempt == "2":
    pathlib.Path("good").write_text("fixed\\n")
"""


def test_run_feedback_carries_optional_failures_and_changed_files(
    repo: Repo, tmp_path: Path
) -> None:
    repo.write(
        ".checkpoint.yaml",
        "verifiers:\n"
        "  - {name: unit, command: 'test -f good'}\n"
        "  - {name: lint, command: 'test ! -f bad', required: false}\n",
    )
    repo.commit_all("verifiers")
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    repo.cp("run", "--attempts", "2", "--", "python3", str(agent), str(tmp_path))
    seen = json.loads((tmp_path / "feedback-2.json").read_text())  # what attempt 2 read
    assert [(f["name"], f["required"]) for f in seen["failed_verifiers"]] == [
        ("unit", True),
        ("lint", False),
    ]
    assert seen["changed_files"] == ["bad"]
    after = json.loads((repo.path / ".git/checkpoint/feedback/main.json").read_text())
    assert [f["name"] for f in after["failed_verifiers"]] == ["lint"]  # passed, lint did not
    assert after["changed_files"] == ["bad", "good"]
