"""The run loop (design.md §8): save, attempt, verify, promote or roll back, again.

Each attempt's workspace is saved as a checkpoint before its verifiers run, so the
evidence is about exactly that state: it is promoted, or marked rejected and kept while
the workspace is restored to the rollback point (that restore takes its own safety
checkpoint, as every restore does). The lesson goes into the task record and the
feedback file, and the next attempt starts from the rollback point.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import os
import signal
import sys
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Concatenate, ParamSpec, TypeVar

from ..config.model import Config
from ..core.errors import Refused, UsageError
from ..gitcore.repo import Repo
from ..restore.run import restore_to
from ..save.capture import capture_workspace
from ..storage import oplog as state
from ..storage import tasks
from ..storage.notes import read_events
from ..storage.oplog import now_iso
from ..storage.refs import Checkpoint, managed_tree, same_state, save_checkpoint
from ..verify.procgroup import ignore_further_stops, interruptible, run_job, stop_signal
from ..verify.verifiers import (
    VerifierResult,
    decide,
    record_results,
    required_failed,
    run_verifiers,
    select_verifiers,
)
from .hints import rollback_hint, task_option

Log = Callable[[str], None]
P = ParamSpec("P")
R = TypeVar("R")


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
    path = repo.state_dir() / "feedback" / f"{task}.json"  # task names are ref-safe
    path.parent.mkdir(parents=True, exist_ok=True)
    return str(path)


def write_feedback(repo: Repo, task: str, attempt: int, rollback: str) -> str:
    record = tasks.load_task(repo, task)
    failing = record.last_failing_verifier
    last = record.history[-1] if record.history else {}
    data = {
        "task": task,
        "attempt": attempt,
        "rollback_point": rollback,
        "last_failing_verifier": asdict(failing) if failing else None,
        "hypothesis": record.hypothesis,
        "next_move": record.next_move,
        "previous_attempts": list(record.history[-5:]),
        # The last attempt's failures (verifiers not required too) and the files it
        # changed: everything the next attempt should know it broke or touched.
        "failed_verifiers": list(last.get("failed_verifiers") or []),
        "changed_files": list(last.get("changed_files") or []),
    }
    path = feedback_path(repo, task)
    state.write_atomic(Path(path), json.dumps(data, indent=2).encode())
    return path


def changed_files(repo: Repo, before: Checkpoint, after: Checkpoint) -> list[str]:
    """The managed paths that differ between two checkpoints (overlay included)."""
    return repo.git_lines(
        "diff",
        "--no-renames",
        "--name-only",
        "-z",
        managed_tree(repo, before),
        managed_tree(repo, after),
    )


def _run_agent(argv: list[str], cwd: str, env: dict[str, str], to_stderr: bool, log: Log) -> int:
    """Run the agent's command as a job of its own (procgroup.run_job): a Ctrl-C, SIGTERM
    or SIGHUP stops it with all it started before the loop goes on, and so does its end:
    nothing it left running writes to the workspace after its attempt is saved."""
    stdout = sys.stderr if to_stderr else None
    try:
        code, left_running = run_job(argv, cwd=cwd, env={**os.environ, **env}, stdout=stdout)
    except OSError as exc:
        raise UsageError(f"cannot run {argv[0]!r}: {exc.strerror}") from None
    if left_running:
        log("the agent left processes running: stopped them")
    return code


@contextlib.contextmanager
def worktree_run_lock(repo: Repo) -> Iterator[None]:
    """One run loop per worktree: a second would save, verify and roll back over the
    first one's attempt. Held (flock) for the whole loop, released when the process ends
    however it ends; the agent does not inherit it.
    """
    folder = repo.git_dir / "checkpoint"  # this worktree's, like the restore journal
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "run.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip()
            raise Refused(
                f"another `git checkpoint run` is working in this worktree"
                f"{f' (pid {holder})' if holder else ''}: wait for it to finish, or stop it"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        yield
    finally:
        os.close(fd)


def _one_loop_per_worktree(
    fn: Callable[Concatenate[Repo, P], R],
) -> Callable[Concatenate[Repo, P], R]:
    @functools.wraps(fn)
    def wrapper(repo: Repo, /, *args: P.args, **kwargs: P.kwargs) -> R:
        with worktree_run_lock(repo):
            return fn(repo, *args, **kwargs)

    return wrapper


@interruptible()  # SIGTERM/SIGHUP stop the loop (and its agent) the way Ctrl-C does
@_one_loop_per_worktree
def run_loop(
    repo: Repo,
    config: Config,
    task: str,
    argv: list[str],
    attempts: int,
    log: Log,
    *,
    agent_to_stderr: bool = False,
) -> RunOutcome:
    """The loop; `agent_to_stderr` keeps stdout for the one JSON object under --json."""
    if attempts < 1:
        raise UsageError("--attempts must be at least 1")
    if not argv:
        raise UsageError("nothing to run: git checkpoint run -- CMD…")
    verifiers = select_verifiers(config)
    run_id = "run_" + now_iso().replace("-", "_").replace(":", "").replace("T", "_").rstrip("Z")
    log(f"task: {task}")
    with state.locked(repo, config.lock_timeout):
        outcome = save_checkpoint(
            repo, config, task, message="rollback point before run", run_id=run_id
        )
    rollback = outcome.checkpoint
    log(
        f"checkpoint saved: {rollback.id}"
        if outcome.created
        else f"rollback point: {rollback.id} (unchanged since)"
    )
    tasks.update_task(repo, task, rollback_point=rollback.id)

    def hint() -> str:
        return rollback_hint(repo, config, task, rollback)

    done: list[Attempt] = []
    for k in range(1, attempts + 1):
        feedback = write_feedback(repo, task, k, rollback.id)
        env = {
            "CHECKPOINT_TASK": task,
            "CHECKPOINT_ID": rollback.id,
            "CHECKPOINT_ATTEMPT": str(k),
            "CHECKPOINT_FEEDBACK": feedback,
        }
        try:
            log(f"attempt {k}/{attempts}: {' '.join(argv)}")
            code = _run_agent(argv, str(repo.root), env, agent_to_stderr, log)
            if code != 0:
                log(f"agent exited with {code}")
            # The state the verifiers see is saved first: that is what evidence is about.
            with _explained(log, k, hint), state.locked(repo, config.lock_timeout):
                attempt = save_checkpoint(
                    repo, config, task, message=f"attempt {k}", run_id=run_id
                ).checkpoint
            log(f"checkpoint saved: {attempt.id} (attempt {k})")
            results = run_verifiers(verifiers, str(repo.root), on_result=lambda r: log(r.line()))
        except KeyboardInterrupt as exc:
            ignore_further_stops()  # the agent is gone; what is left is to say where we are
            signum = stop_signal(exc)
            by = "" if signum == signal.SIGINT else f" by {signal.Signals(signum).name}"
            log(f"interrupted during attempt {k}{by}: the workspace holds the partial attempt")
            log(hint())
            return RunOutcome(task, rollback.id, done, None, True, 128 + signum)
        failing = required_failed(config, results)
        with state.locked(repo, config.lock_timeout):
            record_results(repo, attempt, results, "workspace")
            status = decide(repo, config, attempt, read_events(repo, attempt.commit))
            if not same_state(repo, capture_workspace(repo, config), attempt):
                log(f"warning: the verifiers changed the workspace; evidence is for {attempt.id}")
        tasks.note_verification(repo, task, attempt.id, failing, status)
        record = tasks.load_task(repo, task)
        entry: dict[str, object] = {
            "attempt": k,
            "agent_exit": code,
            "checkpoint": attempt.id,
            "failed_verifiers": [
                {
                    "name": r.name,
                    "required": r.required,
                    "status": r.status,
                    "exit_code": r.exit_code,
                    "output_tail": r.output_tail[-1000:],
                }
                for r in results
                if r.status != "passed"
            ],
            "changed_files": changed_files(repo, rollback, attempt),
        }
        if failing is None:
            entry.update(result="passed", at=now_iso())
            tasks.save_task(
                repo,
                replace(record, attempts=record.attempts + 1, history=(*record.history, entry)),
            )
            write_feedback(repo, task, k, rollback.id)  # after the run: what it left
            log(f"promoted: {attempt.id}" if status == "promoted" else f"status: {status}")
            done.append(Attempt(k, code, results, True, attempt.id))
            state.log_event(
                repo, "run", task=task, attempt=k, result="passed", checkpoint=attempt.id
            )
            promoted = attempt.id if status == "promoted" else None
            return RunOutcome(task, rollback.id, done, promoted, False, 0 if promoted else 1)

        entry.update(
            result="failed", verifier=failing.name, exit_code=failing.exit_code, at=now_iso()
        )
        tasks.save_task(
            repo, replace(record, attempts=record.attempts + 1, history=(*record.history, entry))
        )
        write_feedback(repo, task, k, rollback.id)
        with _explained(log, k, hint), state.locked(repo, config.lock_timeout):
            report = restore_to(repo, config, task, rollback, move_head=True)
        state.log_event(repo, "run", task=task, attempt=k, result="failed", kept=attempt.id)
        done.append(Attempt(k, code, results, False, attempt.id))
        log(
            f"restored {rollback.id}: {len(report.brought_back)} written back, "
            f"{len(report.removed)} removed (failed attempt kept as {attempt.id})"
        )
        log(f"workspace matches {rollback.id}")
        if k < attempts:
            log(
                f"next action: attempt {k + 1} with feedback: {failing.name} failed "
                f"(exit {failing.exit_code}); see $CHECKPOINT_FEEDBACK"
            )
        else:
            log(f"all {attempts} attempts failed; workspace is at {rollback.id}")
            resume = f"git checkpoint resume{task_option(repo, config, task)}"
            log(f"next action: {record.next_move or f'read `{resume}` and fix {failing.name}'}")
    return RunOutcome(task, rollback.id, done, None, False, 1)


@contextlib.contextmanager
def _explained(log: Log, attempt: int, hint: Callable[[], str]) -> Iterator[None]:
    """A refusal mid-loop (overlay over its limit, lock held) leaves the attempt in place."""
    try:
        yield
    except Refused:
        log(f"stopped at attempt {attempt}: the workspace holds that attempt")
        log(hint())
        raise
