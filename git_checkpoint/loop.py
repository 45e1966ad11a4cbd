"""The run loop (design.md §8): save, attempt, verify, promote or roll back, again.

Each failed attempt is kept (it is the safety checkpoint of the rollback, with the
verifier results and a `rejected` event on it), its lesson goes into the task record
and the feedback file, and the next attempt starts from the rollback point.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from . import state, tasks
from .config import Config
from .errors import UsageError
from .gitio import Repo
from .manifest import now_iso
from .notes import append_event, read_events
from .recovery import restore_to
from .store import resolve, save_checkpoint
from .verify import (
    VerifierResult,
    decide,
    record_results,
    required_failed,
    run_verifiers,
    select_verifiers,
)

Log = Callable[[str], None]


@dataclass(frozen=True)
class Attempt:
    number: int
    command_exit: int | None
    results: list[VerifierResult]
    passed: bool
    kept_as: str | None  # the checkpoint holding this attempt's workspace


@dataclass(frozen=True)
class RunOutcome:
    task: str
    rollback_point: str
    attempts: list[Attempt]
    promoted: str | None
    interrupted: bool
    exit_code: int

    def lines(self) -> list[str]:
        return []  # the loop prints its log as it goes


def feedback_path(repo: Repo, task: str) -> str:
    folder = repo.state_dir() / "feedback"
    folder.mkdir(parents=True, exist_ok=True)
    return str(folder / f"{task.replace('/', '__')}.json")


def write_feedback(repo: Repo, task: str, attempt: int, rollback: str) -> str:
    record = tasks.load_task(repo, task)
    failing = record.last_failing_verifier
    data = {
        "task": task,
        "attempt": attempt,
        "rollback_point": rollback,
        "last_failing_verifier": asdict(failing) if failing else None,
        "hypothesis": record.hypothesis,
        "next_move": record.next_move,
        "previous_attempts": list(record.history[-5:]),
    }
    path = feedback_path(repo, task)
    state.write_atomic(Path(path), json.dumps(data, indent=2).encode())
    return path


def _run_agent(argv: list[str], cwd: str, env: dict[str, str]) -> int:
    """Run the agent's command in the foreground; Ctrl-C reaches it and stops us too."""
    try:
        proc = subprocess.Popen(argv, cwd=cwd, env={**os.environ, **env})
    except OSError as exc:
        raise UsageError(f"cannot run {argv[0]!r}: {exc.strerror}") from None
    try:
        return proc.wait()
    except KeyboardInterrupt:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        raise


def _stop_on_sigterm(signum: int, frame: object) -> None:
    raise KeyboardInterrupt  # handled like Ctrl-C: the agent is stopped, the log says where


def run_loop(
    repo: Repo, config: Config, task: str, argv: list[str], attempts: int, log: Log
) -> RunOutcome:
    previous = signal.signal(signal.SIGTERM, _stop_on_sigterm)
    try:
        return _run_loop(repo, config, task, argv, attempts, log)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _run_loop(
    repo: Repo, config: Config, task: str, argv: list[str], attempts: int, log: Log
) -> RunOutcome:
    if attempts < 1:
        raise UsageError("--attempts must be at least 1")
    if not argv:
        raise UsageError("nothing to run: git checkpoint run -- CMD…")
    verifiers = select_verifiers(config)
    log(f"task: {task}")
    with state.locked(repo, config.lock_timeout):
        outcome = save_checkpoint(repo, config, task, message="rollback point before run")
    rollback = outcome.checkpoint
    log(
        f"checkpoint saved: {rollback.id}"
        if outcome.created
        else f"rollback point: {rollback.id} (unchanged since)"
    )
    tasks.update_task(repo, task, rollback_point=rollback.id)
    done: list[Attempt] = []
    for k in range(1, attempts + 1):
        feedback = write_feedback(repo, task, k, rollback.id)
        log(f"attempt {k}/{attempts}: {' '.join(argv)}")
        env = {
            "CHECKPOINT_TASK": task,
            "CHECKPOINT_ID": rollback.id,
            "CHECKPOINT_ATTEMPT": str(k),
            "CHECKPOINT_FEEDBACK": feedback,
        }
        try:
            code = _run_agent(argv, str(repo.root), env)
            if code != 0:
                log(f"agent exited with {code}")
            results = run_verifiers(verifiers, str(repo.root), on_result=lambda r: log(r.line()))
        except KeyboardInterrupt:
            log(f"interrupted during attempt {k}: the workspace holds the partial attempt")
            log(
                f"rollback point: {rollback.id}  (git checkpoint restore {rollback.id} --move-head)"
            )
            return RunOutcome(task, rollback.id, done, None, True, 130)
        failing = required_failed(config, results)
        record = tasks.load_task(repo, task)
        if failing is None:
            with state.locked(repo, config.lock_timeout):
                saved = save_checkpoint(
                    repo, config, task, message=f"attempt {k} passed", dedupe=False
                ).checkpoint
                record_results(repo, saved, results, "workspace")
                status = decide(repo, config, saved, read_events(repo, saved.commit))
            tasks.save_task(
                repo,
                replace(
                    record,
                    attempts=record.attempts + 1,
                    last_good_checkpoint=saved.id
                    if status == "promoted"
                    else record.last_good_checkpoint,
                    history=(*record.history, {"attempt": k, "result": "passed", "at": now_iso()}),
                ),
            )
            log(f"checkpoint saved: {saved.id}")
            log(f"promoted: {saved.id}" if status == "promoted" else f"status: {status}")
            done.append(Attempt(k, code, results, True, saved.id))
            state.log_event(repo, "run", task=task, attempt=k, result="passed", checkpoint=saved.id)
            return RunOutcome(task, rollback.id, done, saved.id, False, 0)

        tasks.note_verification(repo, task, rollback.id, failing, "rejected")
        record = tasks.load_task(repo, task)
        tasks.save_task(
            repo,
            replace(
                record,
                attempts=record.attempts + 1,
                history=(
                    *record.history,
                    {
                        "attempt": k,
                        "result": "failed",
                        "verifier": failing.name,
                        "exit_code": failing.exit_code,
                        "at": now_iso(),
                    },
                ),
            ),
        )
        with state.locked(repo, config.lock_timeout):
            report = restore_to(repo, config, task, rollback, move_head=True)
            kept = report.safety_checkpoint
            if kept:
                kept_cp = resolve(repo, kept, task)
                record_results(repo, kept_cp, results, "workspace")
                append_event(
                    repo,
                    kept_cp.commit,
                    {"event": "rejected", "rule": config.promotion_rule, "failed": [failing.name]},
                )
        state.log_event(repo, "run", task=task, attempt=k, result="failed", kept=kept)
        done.append(Attempt(k, code, results, False, kept))
        log(
            f"restored {rollback.id}: {len(report.brought_back)} written back, "
            f"{len(report.removed)} removed (failed attempt kept as {kept})"
        )
        log(f"workspace status: {report.workspace_status}")
        if k < attempts:
            log(
                f"next action: attempt {k + 1} with feedback: {failing.name} failed "
                f"(exit {failing.exit_code}); see $CHECKPOINT_FEEDBACK"
            )
        else:
            log(f"all {attempts} attempts failed; workspace is at {rollback.id}")
            hint = record.next_move or f"read `git checkpoint resume` and fix {failing.name}"
            log(f"next action: {hint}")
    return RunOutcome(task, rollback.id, done, None, False, 1)
