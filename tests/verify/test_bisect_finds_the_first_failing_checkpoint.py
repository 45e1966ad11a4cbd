"""`git checkpoint bisect` finds the first checkpoint of a task where a verifier started
failing: recorded results are reused, the others verified in temporary worktrees and
recorded (a second search runs nothing), safety checkpoints are not searched, and the
answer comes with what changed since the last passing checkpoint."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..conftest import Repo
from ..helpers import configure, note_events, verifier


@pytest.fixture
def runs(tmp_path: Path) -> Path:
    """The file each run of the unit verifier appends a line to, outside the repository."""
    return tmp_path / "verifier-runs"


def eight_checkpoints(repo: Repo, runs: Path, failing_from: int | None) -> None:
    """Eight steps saved, the unit verifier failing from step `failing_from` on; after
    step 4, two restores add two safety checkpoints. Steps 1-4 are cp_001-cp_004, the
    safety checkpoints cp_005 and cp_006, steps 5-8 cp_007-cp_010."""
    check = f"echo run >> '{runs}'; ! grep -q broken src/app.py"
    configure(repo, verifier("unit", check), verifier("lint", "true", required=False))
    for n in range(1, 9):
        broken = failing_from is not None and n >= failing_from
        repo.write("src/app.py", f"print({n})  # {'broken' if broken else 'fine'}\n")
        repo.write(f"notes/step{n}.txt", f"step {n}\n")  # untracked: in the overlay
        repo.cp("save", "-m", f"step {n}")
        if n == 4:
            repo.cp("restore", "cp_003")
            repo.cp("restore", "cp_004")
    safety = [line for line in repo.cp("list").stdout.splitlines() if "safety" in line]
    assert [line.split()[0] for line in safety] == ["cp_005", "cp_006"]


def run_count(runs: Path) -> int:
    return len(runs.read_text().splitlines()) if runs.exists() else 0


def test_the_first_failing_of_eight_reusing_two_recorded_results(repo: Repo, runs: Path) -> None:
    eight_checkpoints(repo, runs, failing_from=6)
    repo.cp("verify", "cp_002")
    repo.cp("verify", "cp_010", expect=1)
    runs.unlink()
    out = repo.cp("bisect").stdout
    assert run_count(runs) == 2  # cp_007 and cp_008, between the two recorded
    assert "first failing checkpoint: main/cp_008 (unit passes at main/cp_007" in out, out
    assert "  M src/app.py" in out and "  A notes/step6.txt" in out
    assert "2 run now, 2 recorded" in out
    data = repo.cp_json("bisect")
    assert run_count(runs) == 2  # what it ran the first time was recorded
    assert (data["first_bad"], data["last_good"], data["runs"]) == ("main/cp_008", "main/cp_007", 0)
    assert all(probe["recorded"] for probe in data["probes"])
    recorded = note_events(repo, "refs/checkpoints/main/cp_008")
    assert [(e["event"], e.get("status")) for e in recorded] == [
        ("verifier", "failed"),
        ("rejected", None),
    ]


def test_good_and_bad_named(repo: Repo, runs: Path) -> None:
    eight_checkpoints(repo, runs, failing_from=3)
    data = repo.cp_json("bisect", "--verifier", "unit", "main/cp_001", "cp_004")
    assert (data["last_good"], data["first_bad"]) == ("main/cp_002", "main/cp_003")
    assert data["runs"] == run_count(runs) == 4  # cp_004, cp_001, then cp_002, cp_003


def test_no_transition_says_why_and_exits_1(repo: Repo, runs: Path) -> None:
    eight_checkpoints(repo, runs, failing_from=None)
    out = repo.cp("bisect", expect=1).stdout
    assert "no checkpoint where unit started failing: it passes at main/cp_010" in out
    assert run_count(runs) == 1
    assert "it passes at main/cp_004" in repo.cp("bisect", "cp_001", "cp_004", expect=1).stdout


def test_a_verifier_failing_from_the_first_checkpoint_has_no_transition(
    repo: Repo, runs: Path
) -> None:
    eight_checkpoints(repo, runs, failing_from=1)
    assert "it fails at main/cp_001 already" in repo.cp("bisect", expect=1).stdout


def test_a_result_of_another_command_is_not_reused(repo: Repo, runs: Path) -> None:
    eight_checkpoints(repo, runs, failing_from=6)
    repo.cp("verify", "cp_010", expect=1)
    configure(repo, verifier("unit", f"echo run >> '{runs}'; true"), commit=False)
    runs.unlink()
    assert "it passes at main/cp_010" in repo.cp("bisect", expect=1).stdout
    assert run_count(runs) == 1


def test_bad_input_exits_2(repo: Repo, runs: Path) -> None:
    eight_checkpoints(repo, runs, failing_from=6)
    assert "is not before" in repo.cp("bisect", "cp_004", "cp_002", expect=2).stderr
    assert "unknown verifier" in repo.cp("bisect", "--verifier", "nope", expect=2).stderr
    assert "safety checkpoint" in repo.cp("bisect", "cp_005", "cp_008", expect=2).stderr
    assert "unknown checkpoint" in repo.cp("bisect", "cp_099", expect=2).stderr
    configure(repo, verifier("lint", "true", required=False), commit=False)
    assert "no required verifier" in repo.cp("bisect", expect=2).stderr
    assert run_count(runs) == 0
