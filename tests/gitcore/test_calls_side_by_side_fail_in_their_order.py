"""Calls run side by side (gitcore.repo.concurrently) that fail raise the failure of the
first call in the order given, whichever failed first in time: what a command says when
two of its git children fail is the same on every run."""

from __future__ import annotations

import time

import pytest

from git_checkpoint.gitcore.repo import concurrently


def test_the_first_call_in_order_names_the_failure() -> None:
    def slow() -> None:
        time.sleep(0.3)
        raise ValueError("first in order")

    def fast() -> None:
        raise ValueError("first in time")

    for calls in ((slow, fast), (fast, slow)):
        with pytest.raises(ValueError) as raised:
            concurrently(*calls)
        assert str(raised.value) == ("first in order" if calls[0] is slow else "first in time")


def test_results_come_in_the_order_given() -> None:
    def late() -> str:
        time.sleep(0.2)
        return "a"

    assert concurrently(late, lambda: "b", lambda: "c") == ["a", "b", "c"]
