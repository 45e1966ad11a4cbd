"""A slow step says so on a terminal, and never in a pipe."""

from __future__ import annotations

import io
import time

import pytest

from git_checkpoint.entry.console import slow_notice


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_slow_step_says_so_on_a_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    err = FakeTerminal()
    monkeypatch.setattr("sys.stderr", err)
    with slow_notice("saving the workspace", after=0.05):
        time.sleep(0.3)
    assert "saving the workspace…" in err.getvalue()


def test_a_fast_step_says_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    err = FakeTerminal()
    monkeypatch.setattr("sys.stderr", err)
    with slow_notice("saving the workspace", after=5):
        pass
    time.sleep(0.05)
    assert err.getvalue() == ""


def test_never_in_a_pipe(monkeypatch: pytest.MonkeyPatch) -> None:
    err = io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    with slow_notice("saving the workspace", after=0.01):
        time.sleep(0.1)
    assert err.getvalue() == ""
