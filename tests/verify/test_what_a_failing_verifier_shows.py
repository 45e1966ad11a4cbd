"""A failing verifier is shown with its last lines of output, and with no empty heading
when it printed nothing."""

from __future__ import annotations

from ..conftest import Repo
from ..helpers import configure, verifier


def test_a_verifier_that_fails_silently_is_shown_without_a_heading_for_no_lines(
    repo: Repo,
) -> None:
    configure(repo, verifier("quiet", "exit 3"))
    proc = repo.cp("verify", expect=1)
    shown = [line for line in proc.stdout.splitlines() if "quiet" in line]
    assert shown and not any("its last lines" in line for line in shown), proc.stdout


def test_a_verifier_that_fails_aloud_is_shown_with_its_last_lines(repo: Repo) -> None:
    configure(repo, verifier("loud", "echo the reason; exit 3"))
    proc = repo.cp("verify", expect=1)
    assert "its last lines:" in proc.stdout and "  | the reason" in proc.stdout, proc.stdout
