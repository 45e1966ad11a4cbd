"""The run loop (design.md §8): save, attempt, verify, promote or roll back, again.

Each attempt's workspace is saved as a checkpoint before its verifiers run, so the
evidence is about exactly that state: it is promoted, or marked rejected and kept while
the workspace is restored to the rollback point (that restore takes its own safety
checkpoint, as every restore does). The lesson goes into the task record and the
feedback file, and the next attempt starts from the rollback point.
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import signal
import sys
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from ..config.model import Config, Verifier
from ..core.errors import Refused, UsageError
from ..core.lock import FileLock, holder
from ..core.records import now_iso, write_atomic
from ..fast import quickstate
from ..gitcore.formats import ZERO_OID
from ..gitcore.repo import Repo
from ..restore.run import restore_to
from ..save.capture import capture_workspace
from ..save.overlay import OVER_BYTES, OVER_FILES
from ..save.session import Saved, SaveRequest, said_of, save_workspace
from ..storage import oplog, tasks
from ..storage.commits import managed_tree, same_state
from ..storage.lock import locked
from ..storage.notes import read_events
from ..storage.refs import Checkpoint
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


@dataclass(frozen=True)
class RunRequest:
    """What `git checkpoint run` was asked to do."""

    task: str
    argv: list[str]  # the agent's command
    attempts: int
    agent_to_stderr: bool = False  # keep stdout for the one JSON object under --json
    adopt: bool = True  # become the reaper of what the agent leaves (procgroup)


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
    write_atomic(Path(path), json.dumps(data, indent=2).encode())
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


@contextlib.contextmanager
def worktree_run_lock(repo: Repo) -> Iterator[None]:
    """One run loop per worktree: a second would save, verify and roll back over the
    first one's attempt. Held for the whole loop, released when the process ends however
    it ends; the agent does not inherit it.
    """
    folder = repo.git_dir / "checkpoint"  # this worktree's, like the restore journal
    folder.mkdir(parents=True, exist_ok=True)
    path = str(folder / "run.lock")
    lock = FileLock.try_take(path)
    if lock is None:
        pid = holder(path)
        raise Refused(
            f"another `git checkpoint run` is working in this worktree"
            f"{f' (pid {pid})' if pid else ''}: wait for it to finish, or stop it"
        )
    try:
        lock.mark()
        yield
    finally:
        lock.release()


def run_loop(repo: Repo, config: Config, request: RunRequest, log: Log) -> RunOutcome:
    """The loop: one run per worktree at a time; SIGTERM and SIGHUP stop it (and its
    agent) the way Ctrl-C does."""
    if request.attempts < 1:
        raise UsageError("--attempts must be at least 1")
    if not request.argv:
        raise UsageError("nothing to run: git checkpoint run -- CMD…")
    with interruptible(), worktree_run_lock(repo):
        return _Loop.start(repo, config, request, log).run()


@dataclass(frozen=True)
class _Tried:
    """An attempt whose verifiers have run: what the loop records and reports of it."""

    number: int
    code: int  # the agent's exit code
    attempt: Checkpoint  # the checkpoint of its workspace
    results: list[VerifierResult]
    entry: dict[str, object]  # its entry in the task record's history


@dataclass
class _Loop:
    repo: Repo
    config: Config
    request: RunRequest
    log: Log
    verifiers: tuple[Verifier, ...]
    run_id: str
    rollback: Checkpoint
    done: list[Attempt]
    # The checkpoints this run verified: id -> (the attempt, its results). An attempt
    # that leaves the workspace as an earlier one did is that checkpoint again: its
    # evidence stands, and is not recorded twice.
    verified: dict[str, tuple[int, list[VerifierResult]]]
    # The stat data of what the rollback point's save left out over a limit: an attempt
    # that changes it changes what no checkpoint holds (_beside_left_out).
    left_out_seen: dict[str, list[int] | None]

    @classmethod
    def start(cls, repo: Repo, config: Config, request: RunRequest, log: Log) -> _Loop:
        """Save the rollback point (unless the workspace equals the latest checkpoint)."""
        verifiers = select_verifiers(config)
        run_id = "run_" + now_iso().replace("-", "_").replace(":", "").replace("T", "_")
        run_id = run_id.rstrip("Z")
        log(f"task: {request.task}")
        saved = save_workspace(
            repo,
            config,
            SaveRequest(request.task, message="rollback point before run", run_id=run_id),
            maintain=False,
        )
        rollback = saved.checkpoint
        log(
            f"checkpoint saved: {rollback.id}"
            if saved.created
            else f"rollback point: {rollback.id} (unchanged since)"
        )
        for line in said_of(saved):
            log(line)
        tasks.update_task(repo, request.task, rollback_point=rollback.id)
        seen = _over_limits(repo, saved)
        return cls(repo, config, request, log, verifiers, run_id, rollback, [], {}, seen)

    def run(self) -> RunOutcome:
        for k in range(1, self.request.attempts + 1):
            finished = self.attempt(k)
            if finished is not None:
                return finished
        return self._outcome(promoted=None, interrupted=False, exit_code=1)

    def _outcome(self, *, promoted: str | None, interrupted: bool, exit_code: int) -> RunOutcome:
        return RunOutcome(
            self.request.task, self.rollback.id, self.done, promoted, interrupted, exit_code
        )

    def hint(self) -> str:
        return rollback_hint(self.repo, self.config, self.request.task, self.rollback)

    def attempt(self, k: int) -> RunOutcome | None:
        """Attempt k: run the agent, save what it left, verify exactly that; the outcome
        when the loop ends here (a pass, a Ctrl-C), None to go on."""
        repo, config, task, log = self.repo, self.config, self.request.task, self.log
        feedback = write_feedback(repo, task, k, self.rollback.id)
        env = {
            "CHECKPOINT_TASK": task,
            "CHECKPOINT_ID": self.rollback.id,
            "CHECKPOINT_ATTEMPT": str(k),
            "CHECKPOINT_FEEDBACK": feedback,
        }
        try:
            log(f"attempt {k}/{self.request.attempts}: {shlex.join(self.request.argv)}")
            code = self._run_agent(env)
            if code != 0:
                log(f"agent exited with {code}")
            # The state the verifiers see is saved first: that is what evidence is about.
            with _explained(log, k, self.hint):
                request = SaveRequest(task, message=f"attempt {k}", run_id=self.run_id)
                saved = save_workspace(repo, config, request, maintain=False)
            attempt = saved.checkpoint
            log(
                f"checkpoint saved: {attempt.id} (attempt {k})"
                if saved.created
                else f"unchanged since {attempt.id}"
            )
            for line in said_of(saved):
                log(line)
            if attempt.id in self.verified:
                return self._repeated(k, code, attempt)
            results = run_verifiers(
                self.verifiers,
                str(repo.root),
                on_result=lambda r: log(r.line()),
                adopt=self.request.adopt,
            )
            if attempt.id == self.rollback.id and self._beside_left_out(saved):
                return self._unrecorded(k, code, attempt, results)
        except KeyboardInterrupt as exc:
            ignore_further_stops()  # the agent is gone; what is left is to say where we are
            signum = stop_signal(exc)
            by = "" if signum == signal.SIGINT else f" by {signal.Signals(signum).name}"
            log(f"interrupted during attempt {k}{by}: the workspace holds the partial attempt")
            log(self.hint())
            return self._outcome(promoted=None, interrupted=True, exit_code=128 + signum)
        failing, status = self._judge(attempt, results)
        self.verified[attempt.id] = (k, results)
        tried = _Tried(k, code, attempt, results, self._history_entry(k, code, attempt, results))
        if failing is None:
            return self._passed(tried, status)
        self._failed(tried, failing)
        return None

    def _beside_left_out(self, saved: Saved) -> bool:
        """Whether an attempt's save left out what the attempt changed: files it names
        for the first time, or others over a limit since the rollback point's save."""
        return bool(saved.newly_left_out) or _over_limits(self.repo, saved) != self.left_out_seen

    def _unrecorded(
        self, k: int, code: int, attempt: Checkpoint, results: list[VerifierResult]
    ) -> RunOutcome | None:
        """Attempt k changed nothing a checkpoint holds, only files checkpoints leave
        out (_beside_left_out): the verifiers ran on a workspace no checkpoint holds, so
        their results are evidence about none and are recorded on none, the rollback
        point's least of all. A pass promotes nothing."""
        self.log(
            f"attempt {k} changed only files that checkpoints leave out: its results are "
            "recorded on no checkpoint"
        )
        failing = required_failed(self.config, results)
        tried = _Tried(k, code, attempt, results, self._history_entry(k, code, attempt, results))
        if failing is not None:
            self._failed(tried, failing)
            return None
        tried.entry.update(result="passed, in no checkpoint", at=now_iso())
        self._record_attempt(tried.entry)
        self.done.append(Attempt(k, code, results, True, None))
        self.log(
            f"done: the verifiers passed on files no checkpoint holds; nothing promoted, "
            f"{self.rollback.id} stays as it was"
        )
        return self._outcome(promoted=None, interrupted=False, exit_code=1)

    def _repeated(self, k: int, code: int, attempt: Checkpoint) -> RunOutcome | None:
        """Attempt k left the workspace as attempt `first` did: that attempt's evidence
        stands (it failed, or the loop would have ended there). Nothing is recorded
        again; the workspace goes back to the rollback point for the next attempt."""
        first, results = self.verified[attempt.id]
        failing = required_failed(self.config, results)
        assert failing is not None  # a pass ends the loop at the attempt that passed
        self.log(
            f"attempt {k} changed nothing that attempt {first} had not: its evidence stands "
            f"({failing.name} failed), not verified again"
        )
        self._roll_back(k, attempt, failing)
        self.done.append(Attempt(k, code, results, False, attempt.id))
        return None

    def _run_agent(self, env: dict[str, str]) -> int:
        """Run the agent's command as a job of its own (procgroup.run_job): a Ctrl-C,
        SIGTERM or SIGHUP stops it with all it started before the loop goes on, and so
        does its end: nothing it left running writes to the workspace after its attempt
        is saved."""
        argv = self.request.argv
        stdout = sys.stderr if self.request.agent_to_stderr else None
        try:
            code, left_running = run_job(
                argv,
                cwd=str(self.repo.root),
                env={**os.environ, **env},
                stdout=stdout,
                adopt=self.request.adopt,
            )
        except OSError as exc:
            raise UsageError(f"cannot run {argv[0]!r}: {exc.strerror}") from None
        if left_running:
            self.log("the agent left processes running: stopped them")
        return code

    def _judge(
        self, attempt: Checkpoint, results: list[VerifierResult]
    ) -> tuple[VerifierResult | None, str]:
        """Record the evidence on the attempt's checkpoint and decide by the rule."""
        repo, config = self.repo, self.config
        failing = required_failed(config, results)
        with locked(repo, config.lock_timeout):
            record_results(repo, attempt, results, "workspace", config.secrets_allow)
            status = decide(repo, config, attempt, read_events(repo, attempt.commit))
            if not same_state(repo, capture_workspace(repo, config), attempt):
                self.log(
                    f"warning: the verifiers changed the workspace; evidence is for {attempt.id}"
                )
        tasks.note_verification(repo, self.request.task, attempt.id, failing, status)
        return failing, status

    def _history_entry(
        self, k: int, code: int, attempt: Checkpoint, results: list[VerifierResult]
    ) -> dict[str, object]:
        return {
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
            "changed_files": changed_files(self.repo, self.rollback, attempt),
        }

    def _record_attempt(self, entry: dict[str, object]) -> None:
        record = tasks.load_task(self.repo, self.request.task)
        tasks.save_task(
            self.repo,
            replace(record, attempts=record.attempts + 1, history=(*record.history, entry)),
        )

    def _passed(self, tried: _Tried, status: str) -> RunOutcome:
        repo, task = self.repo, self.request.task
        k, code, attempt, results = tried.number, tried.code, tried.attempt, tried.results
        tried.entry.update(result="passed", at=now_iso())
        self._record_attempt(tried.entry)
        write_feedback(repo, task, k, self.rollback.id)  # after the run: what it left
        self.log(f"promoted: {attempt.id}" if status == "promoted" else f"status: {status}")
        self.done.append(Attempt(k, code, results, True, attempt.id))
        oplog.log_event(repo, "run", task=task, attempt=k, result="passed", checkpoint=attempt.id)
        promoted = attempt.id if status == "promoted" else None
        tries = f"{k} attempt{'s' if k != 1 else ''}"
        if promoted:
            self.log(f"done: {attempt.id} promoted after {tries}; the workspace is {attempt.id}")
        else:
            self.log(f"done: {attempt.id} passed after {tries} but is {status}; not promoted")
        return self._outcome(promoted=promoted, interrupted=False, exit_code=0 if promoted else 1)

    def _failed(self, tried: _Tried, failing: VerifierResult) -> None:
        repo, task = self.repo, self.request.task
        k, code, attempt, results = tried.number, tried.code, tried.attempt, tried.results
        tried.entry.update(
            result="failed", verifier=failing.name, exit_code=failing.exit_code, at=now_iso()
        )
        self._record_attempt(tried.entry)
        oplog.log_event(repo, "run", task=task, attempt=k, result="failed", kept=attempt.id)
        self.done.append(Attempt(k, code, results, False, attempt.id))
        self._roll_back(k, attempt, failing)

    def _roll_back(self, k: int, attempt: Checkpoint, failing: VerifierResult) -> None:
        """Back to the rollback point after failed attempt k, saying what the restore did:
        files, the branch moved back (and where its commits are kept), files in no
        checkpoint left in place; then the next action."""
        repo, config, task, log = self.repo, self.config, self.request.task, self.log
        rollback = self.rollback
        feedback = write_feedback(repo, task, k, rollback.id)
        with _explained(log, k, self.hint), locked(repo, config.lock_timeout):
            left = self._back_on_its_branch()
            report = restore_to(repo, config, task, rollback, move_head=True)
            oplog.log_event(
                repo,
                "rollback",
                task=task,
                attempt=k,
                checkpoint=rollback.id,
                safety=report.safety_checkpoint,
                written=len(report.brought_back),
                removed=len(report.removed),
            )
        kept = (
            f"failed attempt kept as {attempt.id}"
            if attempt.id != rollback.id
            else "the failed attempt changed nothing a checkpoint holds"
        )
        log(
            f"restored {rollback.id}: {len(report.brought_back)} written back, "
            f"{len(report.removed)} removed ({kept})"
        )
        if left is not None:
            kept = (
                f"(the attempt's commits are kept in {attempt.id})"
                if left == "a detached HEAD"
                else "which keeps any commits the attempt made there"
            )
            back_on = rollback.manifest.get("branch") or "a detached HEAD"
            log(f"head: back on {back_on} from {left}, {kept}")
        head = report.head
        if head is not None and head.old != head.new:
            commits = ", ".join(c[:12] for c in head.left_behind[:5])
            more = f" and {len(head.left_behind) - 5} more" if len(head.left_behind) > 5 else ""
            log(
                f"head: moved {head.ref.removeprefix('refs/heads/')} back from "
                f"{(head.old or '')[:12]} to {head.new[:12]}; the attempt's commits "
                f"({commits}{more}) are kept in {attempt.id}"
            )
        for described in report.beyond_limits:
            log(f"left in place, in no checkpoint: {described}")
        log(f"workspace matches {rollback.id}")
        attempts = self.request.attempts
        if k < attempts:
            log(
                f"next action: attempt {k + 1} with feedback: {failing.name} failed "
                f"(exit {failing.exit_code}); see {feedback}"
            )
        else:
            failed = "the attempt" if attempts == 1 else f"all {attempts} attempts"
            log(f"{failed} failed; workspace is at {rollback.id}")
            resume = f"git checkpoint resume{task_option(repo, config, task)}"
            record = tasks.load_task(repo, task)
            log(f"next action: {record.next_move or f'read `{resume}` and fix {failing.name}'}")

    def _back_on_its_branch(self) -> str | None:
        """HEAD on the branch the rollback point was saved on again, when the attempt
        switched to another one (which keeps whatever the attempt committed there), or
        made again where the rollback point had it when the attempt deleted it; the
        restore then moves that branch back if the attempt committed on it too. Returns
        where HEAD was ("a detached HEAD" for none), or None when it had not moved."""
        repo, rollback = self.repo, self.rollback
        saved_on = rollback.manifest.get("branch")
        head, branch = repo.head()
        if branch == saved_on:
            return None
        reason = f"checkpoint: rollback to {rollback.id}"
        if isinstance(saved_on, str) and saved_on:
            ref = f"refs/heads/{saved_on}"
            if repo.resolve_ref(ref) is None:
                if rollback.base is None:
                    return None  # (an unborn branch: nothing to make it at)
                repo.update_ref(ref, rollback.base, ZERO_OID, reason)
            repo.git("symbolic-ref", "-m", reason, "HEAD", ref)
        else:  # saved on a detached HEAD: detached again (the restore moves it back)
            at = head or rollback.base
            if at is None:
                return None
            repo.git("update-ref", "--no-deref", "-m", reason, "HEAD", at)
        return branch or "a detached HEAD"


def _over_limits(repo: Repo, saved: Saved) -> dict[str, list[int] | None]:
    """The stat data of what a save left out over a limit (no save sees their content)."""
    limits = (OVER_FILES, OVER_BYTES)
    paths = [o.path.rstrip("/") for o in saved.snapshot.left_out if o.why in limits]
    return quickstate.overlay_stats(repo.root, paths)


@contextlib.contextmanager
def _explained(log: Log, attempt: int, hint: Callable[[], str]) -> Iterator[None]:
    """A refusal mid-loop (overlay over its limit, lock held) leaves the attempt in place."""
    try:
        yield
    except Refused:
        log(f"stopped at attempt {attempt}: the workspace holds that attempt")
        log(hint())
        raise
