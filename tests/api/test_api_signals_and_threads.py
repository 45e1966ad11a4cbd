"""The Python API in a program that lives on: a verify stopped by SIGTERM while it holds
the signals (`handle_signals=True`) gives the program its own handlers back; asking for
the signals from a thread other than the main one is a usage error before anything is
done; threads saving one repository at once each get a sound checkpoint."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest

from git_checkpoint import api

from ..conftest import Repo

STOPS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@pytest.fixture
def slow(repo: Repo) -> Repo:
    verifier = "{name: unit, command: 'touch started; sleep 30'}"
    repo.write(".checkpoint.yaml", f"verifiers:\n  - {verifier}\n")
    repo.write(".gitignore", "started\n")
    repo.commit_all("a verifier that waits")
    return repo


def _term_once_started(folder: Path) -> threading.Thread:
    def send() -> None:
        deadline = time.monotonic() + 30
        while not (folder / "started").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        os.kill(os.getpid(), signal.SIGTERM)

    thread = threading.Thread(target=send)
    thread.start()
    return thread


def test_a_stopped_verify_gives_the_program_its_handlers_back(slow: Repo) -> None:
    def own(signum: int, frame: object) -> None:
        raise AssertionError("the program's own handler ran")

    before = {sig: signal.getsignal(sig) for sig in STOPS}
    signal.signal(signal.SIGTERM, own)
    try:
        sender = _term_once_started(slow.path)
        with pytest.raises(KeyboardInterrupt):
            api.verify(repo=slow.path, handle_signals=True)
        sender.join()
        assert signal.getsignal(signal.SIGTERM) is own
        assert signal.getsignal(signal.SIGINT) is before[signal.SIGINT]
        assert signal.getsignal(signal.SIGHUP) is before[signal.SIGHUP]
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


def test_handle_signals_off_the_main_thread_is_a_usage_error(slow: Repo) -> None:
    slow.write("src/app.py", "changed\n")
    raised: list[BaseException] = []

    def call() -> None:
        try:
            api.verify(repo=slow.path, handle_signals=True)
        except BaseException as exc:
            raised.append(exc)

    thread = threading.Thread(target=call)
    thread.start()
    thread.join(60)
    assert len(raised) == 1 and isinstance(raised[0], api.UsageError), raised
    assert "main thread" in str(raised[0])
    assert api.list_checkpoints(repo=slow.path).checkpoints == []  # nothing saved


def test_threads_saving_at_once_each_get_a_sound_checkpoint(repo: Repo) -> None:
    failed: list[BaseException] = []

    def work(n: int) -> None:
        try:
            for round_ in range(4):
                repo.write(f"thread{n}.txt", f"round {round_}\n")
                api.save(repo.path, message=f"thread {n} round {round_}")
        except BaseException as exc:
            failed.append(exc)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    assert not failed, failed
    assert not api.save(repo.path).created  # the last save holds every thread's last round
    latest = api.list_checkpoints(repo=repo.path).checkpoints[-1].commit
    for n in range(4):  # untracked: in its overlay, parent 3
        assert repo.git("show", f"{latest}^3:thread{n}.txt") == "round 3\n"
    assert not repo.git("fsck", "--strict", "--no-dangling").strip()
