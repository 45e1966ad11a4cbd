"""The search under `git checkpoint bisect`, on its own: recorded results narrow the range
before anything runs, the answer is always a passing checkpoint right before a failing
one, and the defaults of GOOD and BAD follow what is recorded."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from git_checkpoint.storage.refs import Checkpoint
from git_checkpoint.verify.bisect import search

P, F = "passed", "failed"


def checkpoints(count: int) -> list[Checkpoint]:
    return [
        Checkpoint(
            task="t",
            id=f"cp_{n:03d}",
            ref=f"refs/checkpoints/t/cp_{n:03d}",
            commit=f"{n:040x}",
            worktree_tree="",
            base=None,
            index_commit="",
            overlay_commit=None,
            message="",
            manifest={},
        )
        for n in range(1, count + 1)
    ]


def judged(truth: list[str], asked: list[int]) -> Callable[[Checkpoint], str]:
    """A judge that answers from `truth` and notes which checkpoint it was asked about."""

    def judge(cp: Checkpoint) -> str:
        asked.append(cp.number)
        return truth[cp.number - 1]

    return judge


def test_recorded_results_narrow_to_the_failure_closest_to_the_failing_end() -> None:
    truth = [P, P, F, P, P, P, F, F, F, F]
    recorded = [P, None, F, None, P, None, None, None, None, F]
    asked: list[int] = []
    found = search(checkpoints(10), recorded, judged(truth, asked))
    assert (found.last_good, found.first_bad) == (5, 6)  # cp_006 passes, cp_007 fails
    assert asked == [7, 6]  # only between cp_005 (recorded pass) and cp_010 (recorded fail)


def test_with_nothing_recorded_the_ends_are_the_first_and_the_latest() -> None:
    truth = [P, P, P, P, F, F, F, F]
    asked: list[int] = []
    found = search(checkpoints(8), [None] * 8, judged(truth, asked))
    assert (found.last_good, found.first_bad) == (3, 4)
    assert asked[:2] == [8, 1]


@pytest.mark.parametrize("seed", range(40))
def test_the_answer_is_always_a_pass_right_before_a_failure(seed: int) -> None:
    rng = random.Random(seed)
    count = rng.randint(2, 12)
    truth = [P] + [rng.choice([P, F]) for _ in range(count - 2)] + [F]
    recorded = [t if rng.random() < 0.3 else None for t in truth]
    found = search(checkpoints(count), recorded, judged(truth, []))
    assert found.first_bad is not None and found.last_good == found.first_bad - 1
    assert (truth[found.last_good], truth[found.first_bad]) == (P, F)


def test_a_named_good_looks_for_the_failing_end_after_it() -> None:
    truth = [P, F, P, P, P, F]
    recorded = [None, F, None, None, None, None]
    found = search(checkpoints(6), recorded, judged(truth, []), good=2)
    assert (found.last_good, found.first_bad) == (4, 5)


def test_no_answer_says_why() -> None:
    assert search(checkpoints(3), [P, P, P], judged([], [])).reason == "it passes at t/cp_003"
    failing = search(checkpoints(3), [F, None, F], judged([F, F, F], []))
    assert failing.reason == "it fails at t/cp_001 already"
    single = search(checkpoints(1), [F], judged([], []))
    assert single.reason == "it fails at t/cp_001, the task's first checkpoint"
    last = search(checkpoints(3), [None] * 3, judged([], []), good=2)
    assert last.reason == "no checkpoint after t/cp_003"
