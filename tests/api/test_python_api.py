"""The Python API (`git_checkpoint.api`), called in this process as an agent harness
calls it: the same dataclasses `--json` prints, errors raised (never SystemExit), and
nothing left behind between calls (signal handlers, the current folder, a subreaper)."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from git_checkpoint import api

from ..conftest import Repo
from ..helpers import fingerprint

EXAMPLE = Path(__file__).parents[2] / "examples" / "agent_loop.py"
HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGCONT)


def handlers() -> dict[int, object]:
    return {sig: signal.getsignal(sig) for sig in HANDLED}


@pytest.fixture
def project(repo: Repo) -> Repo:
    repo.write("src/app.py", "print('good')\n")
    repo.write(
        ".checkpoint.yaml", "verifiers:\n  - {name: unit, command: 'grep -q good src/app.py'}\n"
    )
    repo.commit_all("project")
    return repo


def test_the_api_answers_as_json_does(project: Repo) -> None:
    project.write("src/app.py", "print('good, changed')\n")
    saved = api.save(project.path, message="by the api")
    assert dataclasses.is_dataclass(saved) and saved.created and saved.checkpoint_id == "cp_001"
    listed = dataclasses.asdict(api.list_checkpoints(repo=project.path))
    as_json = project.cp_json("list")
    for answer in (listed, as_json):  # each says the age at its own moment
        for row in answer["checkpoints"]:
            assert row.pop("age").endswith("s")
    assert listed == as_json
    shown = api.show("cp_001", repo=project.path)
    as_json = project.cp_json("show", "cp_001")
    assert dataclasses.asdict(shown)["commit"] == as_json["commit"] == saved.commit
    assert api.status(repo=project.path).latest == "cp_001"
    assert api.diff("cp_001", repo=project.path, name_only=True).files == []


def test_a_no_is_an_answer_and_a_bad_input_an_exception(project: Repo) -> None:
    project.write("src/app.py", "print('broken')\n")
    result = api.verify(repo=project.path)
    assert (result.status, result.exit_code) == ("rejected", 1)
    assert result.results[0].output_tail == "" and result.results[0].exit_code == 1
    with pytest.raises(api.UsageError, match="unknown checkpoint"):
        api.restore("cp_099", repo=project.path)
    with pytest.raises(api.UsageError):
        api.promote("cp_001", repo=project.path, force=True)  # --force needs a reason
    with pytest.raises(api.CheckpointError) as caught:
        api.status(repo=project.path.parent)  # not a repository
    assert caught.value.exit_code == 2


def test_restore_and_undo_round_trip(project: Repo) -> None:
    project.write("notes.txt", "untracked work\n")
    api.save(project.path, message="before")
    before = fingerprint(project.path)
    project.write("src/app.py", "print('agent')\n")
    (project.path / "notes.txt").unlink()
    report = api.restore("cp_001", repo=project.path)
    assert report.workspace_status == "matches" and fingerprint(project.path) == before
    api.undo(repo=project.path)
    assert (project.path / "src/app.py").read_text() == "print('agent')\n"
    dry = api.restore("cp_001", repo=project.path, dry_run=True)
    assert dry.dry_run and dry.safety_checkpoint is None


def test_nothing_is_left_behind_between_calls(project: Repo) -> None:
    before, cwd = handlers(), os.getcwd()
    project.write("src/app.py", "print('good 2')\n")
    for _ in range(3):
        api.save(project.path)
        api.verify(repo=project.path, progress=lambda line: None)
        project.write("src/app.py", "no\n")
        api.verify(repo=project.path)
        api.restore("cp_001", repo=project.path)
    assert handlers() == before and os.getcwd() == cwd
    # No process became this one's to reap (a subreaper keeps orphans' zombies here).
    status = Path("/proc/self/status").read_text()
    assert "PR_SET_CHILD_SUBREAPER" not in status  # (the flag shows in prctl only)
    import ctypes

    got = ctypes.c_int(0)
    ctypes.CDLL(None).prctl(37, ctypes.byref(got), 0, 0, 0)  # PR_GET_CHILD_SUBREAPER
    assert got.value == 0


def test_handle_signals_holds_them_only_while_verify_runs(project: Repo) -> None:
    before = handlers()
    api.verify(repo=project.path, handle_signals=True)
    assert handlers() == before


def test_the_example_agent_loop_rolls_back_then_promotes(project: Repo) -> None:
    # The "agent": the first attempt breaks the code and leaves residue; the second reads
    # the feedback and fixes it.
    agent = (
        'if [ -z "$FEEDBACK" ]; then echo "print(1/0)" > src/app.py; touch residue.tmp; '
        "else echo \"print('good')  # fixed\" > src/app.py; fi"
    )
    proc = subprocess.run(
        [sys.executable, str(EXAMPLE), str(project.path), agent, "3"],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("attempt 1: cp_002 rejected")
    assert lines[1].startswith("rolled back to main/cp_001")
    assert lines[2].startswith("attempt 2: cp_00") and lines[2].endswith("promoted")
    assert not (project.path / "residue.tmp").exists()
    assert "fixed" in (project.path / "src/app.py").read_text()
    assert project.cp_json("list")["checkpoints"][-1]["status"] == "promoted"


def test_evidence_and_bisect_through_the_api(project: Repo) -> None:
    project.write("src/extra.py", "x = 1\n")
    api.save(project.path, message="good")
    api.verify(repo=project.path)  # cp_001 passes
    for n in range(3):
        project.write("src/app.py", f"print('bad {n}')\n")
        api.save(project.path, message=f"bad {n}")
    found = api.bisect(repo=project.path)
    assert (found.last_good, found.first_bad, found.exit_code) == ("main/cp_001", "main/cp_002", 0)
    again = project.cp_json("bisect")  # recorded by the API's run: nothing runs again
    assert (again["first_bad"], again["runs"]) == (found.first_bad, 0)
    project.cp("restore", "cp_001")
    project.git("add", "-A")
    project.git("commit", "-qm", "from the verified checkpoint")
    shown = api.evidence(repo=project.path)
    assert dataclasses.asdict(shown) == project.cp_json("evidence")
