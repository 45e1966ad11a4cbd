"""The kill points of tests/restore/test_kill_points.py with the command server on: each
command handed to a server's worker by the compiled client, as installed. At each git
call of a restore, an undo and a `restore --continue`, the worker is killed, or the
client (the server then kills the worker), or the whole server with the worker; then
`restore --continue` and `undo`, served too, must recover as they do when each command
runs in its own process, no output may carry a traceback, and the server must go on
serving (served.py)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from .served import ServedRunner
from .test_kill_points import SCENARIOS, kill_points, summary

TARGETS = os.environ.get("FI_TARGETS", "worker,client,server").split(",")
# By default one scenario of each command, and the whole server killed only in a restore
# (it starts again at every kill point); FI_SCENARIOS=all, or a list, for those asked.
CHOSEN = os.environ.get("FI_SCENARIOS", "")
ONLY = SCENARIOS if CHOSEN == "all" else [s for s in CHOSEN.split(",") if s]
PLAIN = ["restore-plain", "undo-plain", "continue-plain"]
CASES = [
    (target, scenario)
    for target in TARGETS
    for scenario in ONLY or (PLAIN if target != "server" else PLAIN[:1])
]


@pytest.fixture(autouse=True)
def served(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GIT_CHECKPOINT_SERVER", raising=False)


@contextlib.contextmanager
def _runner(target: str, tmp_path: Path) -> Iterator[ServedRunner]:
    scratch = tmp_path / "runner"
    scratch.mkdir()
    runner = ServedRunner(scratch, target=target, client=os.environ.get("FI_CLIENT", "c"))
    runner.up(scratch)
    try:
        yield runner
    finally:
        runner.close()


@pytest.mark.parametrize(("target", "scenario"), CASES)
def test_every_kill_point_of_a_served_command_recovers(
    target: str, scenario: str, tmp_path: Path
) -> None:
    with _runner(target, tmp_path) as checkpoint:
        _sweep(checkpoint, scenario, tmp_path)


def _sweep(checkpoint: ServedRunner, scenario: str, tmp_path: Path) -> None:
    cost: dict[str, float] = {}
    prep, verdicts = kill_points(checkpoint, scenario, tmp_path / "sweep", cost)
    text = summary(scenario, prep, verdicts, cost)
    served = checkpoint.finish(tmp_path / "after")
    print(text)
    print(f"  runs: {dict(checkpoint.counts)}")
    for line in served:
        print(f"  SERVED {line}")
    assert all(v.ok for v in verdicts) and not served, text + "\n" + "\n".join(served)
