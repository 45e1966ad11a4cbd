"""The first checkpoint of a task where a verifier started failing (`git checkpoint
bisect`): a binary search over the task's checkpoints in id order (safety checkpoints
are not among them) between one where the verifier passes and a later one where it
fails, as `git bisect` searches commits.

A result recorded in the notes stands for the verifier when it ran the same command; the
others are asked of a judge, which runs the verifier and records what it finds, so that
the next search finds it recorded. Recorded results inside the range narrow it before
anything runs: to the last passing checkpoint before the failing end, then to the first
failing one after that (the regression closest to the failing end, where results go back
and forth).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..config.model import Verifier
from ..gitcore.repo import Repo
from ..storage.notes import read_events
from ..storage.refs import Checkpoint

PASSED = "passed"


@dataclass(frozen=True)
class Probe:
    """One checkpoint looked at, and what the verifier says of it."""

    checkpoint: str
    status: str  # passed | failed | error
    recorded: bool  # read from the notes; False: run for this search

    def line(self) -> str:
        return f"{self.checkpoint} {self.status}" + (" (recorded)" if self.recorded else "")


@dataclass(frozen=True)
class Search:
    """Where the verifier started failing: indexes into the sequence searched."""

    last_good: int | None
    first_bad: int | None
    probes: list[Probe]  # in the order they were looked at
    reason: str | None = None  # why there is no answer


def recorded_status(repo: Repo, cp: Checkpoint, verifier: Verifier) -> str | None:
    """The latest result the notes hold for `verifier` on `cp`, when it ran the same
    command (another command is another verifier, whatever its name)."""
    status = None
    for event in read_events(repo, cp.commit):
        if (
            event.get("event") == "verifier"
            and event.get("name") == verifier.name
            and event.get("command") == verifier.command
            and isinstance(event.get("status"), str)
        ):
            status = event["status"]
    return status


def search(
    sequence: list[Checkpoint],
    recorded: list[str | None],
    judge: Callable[[Checkpoint], str],
    *,
    good: int | None = None,
    bad: int | None = None,
) -> Search:
    """Search `sequence` (oldest first; `recorded[i]`: the recorded status of its i-th,
    or None). `bad`: default the last with a recorded failure (after `good`), else the
    last; `good`: default the last before `bad` with a recorded pass, else the first.
    `judge(cp)`: the verifier's status on a checkpoint with none recorded."""
    probes: list[Probe] = []
    looked: dict[int, str] = {}

    def status_at(i: int) -> str:
        if i not in looked:
            known = recorded[i]
            looked[i] = known if known is not None else judge(sequence[i])
            probes.append(Probe(sequence[i].name, looked[i], known is not None))
        return looked[i]

    after = -1 if good is None else good
    if good is not None and good == len(sequence) - 1:
        return Search(None, None, probes, f"no checkpoint after {sequence[good].name}")
    failing = [i for i, s in enumerate(recorded) if s is not None and s != PASSED and i > after]
    if bad is None:
        bad = failing[-1] if failing else len(sequence) - 1
    name = sequence[bad].name
    if status_at(bad) == PASSED:
        return Search(None, None, probes, f"it passes at {name}")
    if good is None:
        passing = [i for i in range(bad) if recorded[i] == PASSED]
        good = passing[-1] if passing else 0
    if good >= bad:  # (only a default can meet BAD: the task's first checkpoint)
        return Search(None, bad, probes, f"it fails at {name}, the task's first checkpoint")
    if status_at(good) != PASSED:
        return Search(None, bad, probes, f"it fails at {sequence[good].name} already")
    low, high = good, bad
    for i in range(low + 1, high):
        if recorded[i] == PASSED:
            low = i
    for i in range(high - 1, low, -1):
        if recorded[i] is not None and recorded[i] != PASSED:
            high = i
    while high - low > 1:
        middle = (low + high) // 2
        if status_at(middle) == PASSED:
            low = middle
        else:
            high = middle
    for end in (low, high):  # among the probes: recorded ones the range narrowed to
        status_at(end)
    return Search(low, high, probes)
