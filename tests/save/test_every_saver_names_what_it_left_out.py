"""Whatever a save leaves out is named on its normal output once, whichever command
saved: `save`, `verify` (which saves the workspace it verifies) and the run loop (its
rollback point and each attempt). An attempt that changed nothing is named as the
checkpoint it equals, not as a new one."""

from __future__ import annotations

import pytest

from ..conftest import Repo

SAID = "left out: .env (its name looks like a secret)"


@pytest.fixture
def configured(repo: Repo) -> Repo:
    repo.write(".checkpoint.yaml", "verifiers:\n  - {name: ok, command: 'true'}\n")
    repo.commit_all("verifier")
    repo.write(".env", "TOKEN=local\n")
    repo.write("src/app.py", "print('work')\n")
    return repo


def test_save_names_it(configured: Repo) -> None:
    proc = configured.cp("save", "-m", "x")
    assert SAID in proc.stdout


def test_verify_names_it(configured: Repo) -> None:
    proc = configured.cp("verify")
    out = proc.stdout + proc.stderr
    assert "checkpoint saved: cp_001" in out
    assert SAID in out


def test_run_names_it(configured: Repo) -> None:
    proc = configured.cp("run", "--", "true")
    assert SAID in proc.stdout


def test_run_says_unchanged_for_an_attempt_that_changed_nothing(configured: Repo) -> None:
    proc = configured.cp("run", "--", "true")
    out = proc.stdout
    assert "checkpoint saved: cp_001\n" in out
    assert "unchanged since cp_001" in out
    assert "checkpoint saved: cp_001 (attempt 1)" not in out, out
