"""An attempt's verifier results are recorded on the attempt's checkpoint. When every
change an attempt made was left out of its checkpoint (over a limit), the verifiers ran
on a workspace that is not the rollback point: their failure is not the rollback
point's evidence, and the rollback point is not "the failed attempt"."""

from __future__ import annotations

from ..conftest import Repo
from ..helpers import configure, verifier


def _small_overlay(repo: Repo, check: str) -> None:
    configure(repo, verifier("unit", check), commit=False)
    with (repo.path / ".checkpoint.yaml").open("a") as f:
        f.write("limits:\n  overlay_max_bytes: 1KiB\n")
    repo.commit_all("a verifier, a small overlay")


def test_an_attempt_of_left_out_changes_leaves_the_rollback_points_evidence_alone(
    repo: Repo,
) -> None:
    _small_overlay(repo, "test -f model.bin && grep -q fixed src/app.py")
    agent = "head -c 3000 /dev/zero > model.bin"
    proc = repo.cp("run", "--attempts", "1", "--", "sh", "-c", agent, expect=1)
    assert "failed attempt kept as cp_001" not in proc.stdout, proc.stdout
    notes = repo.git(
        "notes", "--ref=checkpoints", "show", "refs/checkpoints/main/cp_001", check=False
    )
    assert notes == "", notes
    listed = {c["id"]: c for c in repo.cp_json("list")["checkpoints"]}
    assert listed["cp_001"]["status"] == "candidate"


def test_an_attempt_of_left_out_changes_that_passes_promotes_nothing(repo: Repo) -> None:
    _small_overlay(repo, "test -f model.bin")
    agent = "head -c 3000 /dev/zero > model.bin"
    proc = repo.cp("run", "--attempts", "2", "--", "sh", "-c", agent, expect=1)
    assert "recorded on no checkpoint" in proc.stdout, proc.stdout
    assert "nothing promoted" in proc.stdout, proc.stdout
    listed = {c["id"]: c for c in repo.cp_json("list")["checkpoints"]}
    assert listed["cp_001"]["status"] == "candidate"
    assert (repo.path / "model.bin").stat().st_size == 3000  # in no checkpoint: left alone
