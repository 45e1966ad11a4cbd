"""Verifiers: run the configured commands, keep bounded evidence, apply the promotion rule.

A verifier runs through the user's shell in its own process group, so a timeout (or
Ctrl-C) kills it with all its children. Output is read as it comes and only a bounded
tail is kept, however much the command prints.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

from ..config.model import Config, Verifier
from ..core.errors import UsageError
from ..core.text import escape_text, printable
from ..gitcore.repo import Repo
from ..save.secrets import redact
from ..storage.notes import append_event, derive_status, latest_results
from ..storage.refs import Checkpoint
from .procgroup import adopt_orphans, ignore_further_stops, stop_group

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    from typing import Any

TAIL_BYTES = 4000  # of output kept in the note (the task record keeps the last 2000)


@dataclass(frozen=True)
class VerifierResult:
    """One verifier's run: its status, exit code, time and the tail of its output."""

    name: str
    command: str
    required: bool
    status: str  # passed | failed | error
    exit_code: int | None
    duration_s: float
    output_tail: str
    error: str | None = None  # "timeout", or why it could not run

    def line(self) -> str:
        detail = ""
        if self.status == "failed":
            detail = f" (exit {self.exit_code})"
        elif self.error:
            detail = f" ({self.error})"
        return verifier_line(self.name, self.status + detail)


def verifier_line(name: str, status: str) -> str:
    """The seed's log line: `verifier: unit .......... passed`. Names and statuses may
    come from another machine's notes: shown printable, never raw."""
    name, status = printable(name, 60), printable(status, 200)
    return f"verifier: {name} {'.' * max(2, 24 - len(name))} {status}"


def tail_lines(output: str, count: int = 15) -> list[str]:
    """A verifier's last lines of output, as a failure is shown: `  | …`, escaped."""
    return [f"  | {escape_text(line)}" for line in output.rstrip().splitlines()[-count:]]


class _Tail:
    """Drains a pipe into a bounded buffer on a thread."""

    def __init__(self, stream: Any, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()
        self.total = 0
        self.thread = threading.Thread(target=self._drain, args=(stream,), daemon=True)
        self.thread.start()

    def _drain(self, stream: Any) -> None:
        while chunk := stream.read(65536):
            self.total += len(chunk)
            self.data += chunk
            if len(self.data) > 2 * self.limit:
                del self.data[: len(self.data) - self.limit]
        stream.close()

    def text(self) -> str:
        self.thread.join(timeout=5)
        tail = bytes(self.data[-self.limit :]).decode("utf-8", "replace")
        if self.total > self.limit:
            tail = f"[… {self.total - self.limit} bytes cut …]\n" + tail
        return tail


def user_shell() -> str:
    shell = os.environ.get("SHELL", "")
    # fish and friends are not POSIX: commands in .checkpoint.yaml are written for sh.
    if os.path.basename(shell) in ("bash", "sh", "zsh", "dash", "ksh"):
        return shell
    return "/bin/sh"


def run_verifier(verifier: Verifier, cwd: str, *, adopt: bool = True) -> VerifierResult:
    """Run one verifier in `cwd`; `adopt`: become the reaper of what it leaves
    (procgroup.adopt_orphans), unless this process lives on."""
    started = time.monotonic()
    if adopt:
        adopt_orphans()
    try:
        proc = subprocess.Popen(
            [user_shell(), "-c", verifier.command],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as exc:
        return VerifierResult(
            verifier.name, verifier.command, verifier.required, "error", None, 0.0, "", str(exc)
        )
    tail = _Tail(proc.stdout, TAIL_BYTES)
    error = None
    try:
        code: int | None = proc.wait(timeout=verifier.timeout)
    except subprocess.TimeoutExpired:
        stop_group(proc)
        code, error = None, "timeout"
    except KeyboardInterrupt:  # Ctrl-C: never leave a verifier running behind us
        ignore_further_stops()
        stop_group(proc)
        raise
    except BaseException:
        stop_group(proc)
        raise
    else:
        stop_group(proc)  # stray children left in the group
    duration = round(time.monotonic() - started, 3)
    status = "error" if error is not None else ("passed" if code == 0 else "failed")
    return VerifierResult(
        verifier.name,
        verifier.command,
        verifier.required,
        status,
        code,
        duration,
        tail.text(),
        error,
    )


def run_verifiers(
    verifiers: tuple[Verifier, ...],
    cwd: str,
    on_result: Callable[[VerifierResult], None] | None = None,
    *,
    adopt: bool = True,
) -> list[VerifierResult]:
    results = []
    for verifier in verifiers:
        result = run_verifier(verifier, cwd, adopt=adopt)
        results.append(result)
        if on_result:
            on_result(result)
    return results


def select_verifiers(config: Config, names: tuple[str, ...] = ()) -> tuple[Verifier, ...]:
    if not config.verifiers:
        where = config.source or ".checkpoint.yaml"
        raise UsageError(f"no verifiers configured: add a `verifiers:` list to {where}")
    if not names:
        return config.verifiers
    known = {v.name: v for v in config.verifiers}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise UsageError(f"unknown verifier {unknown[0]!r} (configured: {', '.join(known)})")
    return tuple(known[n] for n in dict.fromkeys(names))


# --- the promotion rule ----------------------------------------------------------------


def missing_evidence(config: Config, events: list[dict[str, Any]]) -> list[str]:
    """What stands between a checkpoint and promotion; empty when the rule is met."""
    latest = latest_results(events)
    wanted = [v for v in config.verifiers if config.counts_for_promotion(v)]
    if not wanted:
        return ["no required verifiers are configured"]
    missing = []
    for v in wanted:
        got = latest.get(v.name)
        if got is None:
            missing.append(f"{v.name} (not run)")
        elif got.get("status") != "passed":
            missing.append(f"{v.name} ({got.get('status')})")
    return missing


def required_failed(config: Config, results: list[VerifierResult]) -> VerifierResult | None:
    for r in results:
        if r.status != "passed" and config.counts_for_promotion(
            Verifier(r.name, r.command, r.required)
        ):
            return r
    return None


def record_results(
    repo: Repo,
    cp: Checkpoint,
    results: list[VerifierResult],
    where: str,
    allow: tuple[str, ...] = (),
) -> None:
    """The results as events in the checkpoint's notes, which a push shares: what the
    secret scan finds in an output tail is redacted first (`allow`: secrets.allow). Each
    says who ran it (git's identity, as a notes commit does): a review of evidence merged
    from several machines tells their runs apart."""
    by = repo.user_ident() if results else "unknown"
    for result in results:
        tail, _ = redact(result.output_tail, allow)
        event = {"event": "verifier", "where": where, **asdict(result)}
        if by != "unknown":
            event["by"] = by
        append_event(repo, cp.commit, {**event, "output_tail": tail})


def decide(repo: Repo, config: Config, cp: Checkpoint, events: list[dict[str, Any]]) -> str:
    """Append `promoted` or `rejected` when the evidence decides; return the status."""
    missing = missing_evidence(config, events)
    latest = latest_results(events)
    counted = {v.name for v in config.verifiers if config.counts_for_promotion(v)}
    failed = [n for n, e in latest.items() if e.get("status") != "passed" and n in counted]
    if not missing:
        append_event(repo, cp.commit, {"event": "promoted", "rule": config.promotion_rule})
        return "promoted"
    if failed:
        append_event(
            repo, cp.commit, {"event": "rejected", "rule": config.promotion_rule, "failed": failed}
        )
        return "rejected"
    return derive_status(events)
