"""A slow save says so on a terminal, and never in a pipe; the overlay guard refuses a
huge untracked tree without a stat of every file first."""

from __future__ import annotations

import io
import time

import pytest

from git_checkpoint.entry.console import slow_notice
from tests.conftest import Repo


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


def test_huge_untracked_tree_refused_quickly(repo: Repo) -> None:
    many = repo.path / "generated"
    many.mkdir()
    for i in range(6000):  # over the default limit of 5,000 files
        (many / f"f{i}.txt").write_bytes(b"x")
    start = time.monotonic()
    proc = repo.cp("save", expect=3)
    assert "overlay too large" in proc.stderr
    assert "generated/" in proc.stderr
    assert time.monotonic() - start < 30
