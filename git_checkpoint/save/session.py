"""The one save sequence. Every checkpoint a user, the guard, an agent's or git's hook,
the run loop, `verify` or the MCP server saves goes through `save_workspace`:

    lock -> capture (or build on the quick check's scan) -> policies: the excludes, the
    secret names and the limits (in the capture), the secret scan -> store -> keep what
    the next quick check needs -> log -> retention -> release the lock -> git's auto
    maintenance, when the caller wants it (never for a hook: it must not hold up the
    agent's tool call).

A restore's safety checkpoint is not a save: it stores the snapshot its restore took,
whatever the policies say of it (restore/run.py calls store_checkpoint itself).
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..config.model import Config
from ..config.parse import load_repo_config
from ..core.anytype import Any
from ..core.errors import CheckpointError, Refused, UsageError
from ..core.records import write_atomic
from ..core.text import clip, kept
from ..fast.prescan import Prescan
from ..fast.quickcheck import Found
from ..gitcore import maintenance
from ..gitcore.repo import Repo, concurrently
from ..storage import oplog, tasks
from ..storage.commits import MESSAGE_MAX, NOTE_MAX, Labels, StoreOutcome, store_checkpoint
from ..storage.lock import lock_path, locked
from ..storage.refs import Checkpoint, current_task, recent_checkpoints
from . import keep
from .capture import Snapshot, capture_workspace, start_listing
from .overlay import SECRET_NAME, LeftOut, Overlay, refusal
from .secrets import redact, scan_snapshot


@dataclass(frozen=True)
class SaveRequest:
    """What to save the workspace as."""

    task: str
    message: str = ""
    hypothesis: str | None = None  # new ones for the task record (None: as it is)
    next_move: str | None = None
    auto: bool = False  # saved by a hook or the guard, not asked for by name
    run_id: str | None = None
    logged: bool = True  # in the operation log (doctor's probe leaves none behind)
    session: dict[str, Any] | None = None  # the agent session a hook saves for


@dataclass(frozen=True)
class Saved:
    """What a save did."""

    checkpoint: Checkpoint
    created: bool  # False: the workspace equals `checkpoint`, nothing was written
    snapshot: Snapshot
    pruned: list[str] = field(default_factory=list)  # retention.auto: what went after it
    prune_problem: str | None = None
    secret_findings: list[str] = field(default_factory=list)  # secrets.on_save: warn
    scan_problem: str | None = None  # the warn-mode scan could not run
    # What the save left out that no save said before (or that changed since): named
    # on the save's normal output once, until it changes.
    newly_left_out: tuple[LeftOut, ...] = ()
    # An automatic save's broken .checkpoint.yaml, the first time it is met: the save
    # went on with the default settings.
    config_problem: str | None = None
    # What the save changed in its message, hypothesis or next move before writing
    # them: secrets redacted, text cut to what every reader accepts.
    cut: tuple[str, ...] = ()


def save_workspace(
    repo: Repo,
    config: Config,
    request: SaveRequest,
    *,
    lock_wait: float | None = None,
    prescan: Prescan | None = None,
    found: Found | None = None,
    maintain: bool = True,
) -> Saved:
    """Save the workspace as `request.task`'s next checkpoint, unless it equals the
    latest one. `lock_wait`: wait at most this long for another git-checkpoint's lock
    (at most checkpoint.lockTimeout); `prescan`: the launcher's early lock and scan;
    `found`: the hook's quick check, to build on; `maintain`: run git's auto
    maintenance once done."""
    wait = config.lock_timeout if lock_wait is None else min(lock_wait, config.lock_timeout)
    adopt = prescan.take_lock(lock_path(repo)) if prescan is not None else None
    with locked(repo, wait, adopt=adopt):
        saved = _save_locked(repo, config, request, prescan=prescan, found=found)
    if maintain:
        maintenance.after(repo)
    return saved


def auto_save(
    cwd: str,
    message: str,
    *,
    found: Found | None,
    lock_wait: float,
    maintain: bool = False,
    agent_session: dict[str, Any] | None = None,
) -> Saved:
    """An automatic checkpoint of the workspace of `cwd` (a hook's, the guard's), in the
    current task. `found`: the quick check that found a change; `maintain`: never for
    an agent's hook (see above); `agent_session`: recorded in the manifest."""
    if found is not None:  # the check found the repository and read our config already
        where = found.paths
        repo = Repo(Path(where.root), Path(where.git_dir), Path(where.common_dir))
        repo.remember_config(found.config)
    else:
        repo = Repo.discover(cwd)
    problem = None
    try:
        config = load_repo_config(repo)
    except UsageError as exc:  # the net stays on: the defaults stand in for a broken file
        config, problem = Config(), _once(repo, str(exc))
    request = SaveRequest(
        task=current_task(repo), message=message, auto=True, session=agent_session
    )
    saved = save_workspace(
        repo, config, request, lock_wait=lock_wait, found=found, maintain=maintain
    )
    return replace(saved, config_problem=problem)


CONFIG_PROBLEM = "config-problem"  # <git dir>/checkpoint/: the last one an auto-save named


def _once(repo: Repo, problem: str) -> str | None:
    """`problem`, unless the auto-saves of this worktree named it already."""
    path = repo.git_dir / "checkpoint" / CONFIG_PROBLEM
    try:
        if path.read_text(encoding="utf-8") == problem:
            return None
    except (OSError, ValueError):
        pass
    with contextlib.suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, problem.encode(), durable=False)
    return problem


def _save_locked(
    repo: Repo,
    config: Config,
    request: SaveRequest,
    *,
    prescan: Prescan | None,
    found: Found | None,
) -> Saved:
    task = request.task
    request, cut = clean_request(request, config.secrets_allow)
    record = tasks.load_task(repo, task)
    if request.hypothesis is not None or request.next_move is not None:
        record = tasks.update_task(
            repo,
            task,
            hypothesis=request.hypothesis if request.hypothesis is not None else record.hypothesis,
            next_move=request.next_move if request.next_move is not None else record.next_move,
        )
    mode = config.secrets_on_save
    # Under `warn` an automatic save never scans (push scans again anyway).
    scanning = mode == "block" or (mode == "warn" and not request.auto)
    snapshot, existing = _capture(repo, config, task, prescan=prescan, found=found)
    refused = refusal(
        Overlay(snapshot.overlay_files, snapshot.overlay_bytes, snapshot.left_out), config
    )
    if refused is not None:  # (the policies are the save's: a capture takes what is there)
        keep.discard(snapshot.seed)
        raise refused
    left_out = said_left_out(config, snapshot.left_out)
    labels = Labels(
        message=request.message,
        hypothesis=record.hypothesis,
        next_move=record.next_move,
        auto=request.auto,
        run_id=request.run_id,
        session=request.session,
        **left_out_fields(left_out),
    )

    def store() -> StoreOutcome:
        return store_checkpoint(repo, config, task, snapshot, labels, existing=existing)

    findings: list[str] = []
    scan_problem: str | None = None
    try:
        if scanning and mode == "block":
            _refuse_secrets(repo, config, snapshot, task, existing)
            stored = store()
        elif scanning:  # warn: scanned while the checkpoint is written
            (findings, scan_problem), stored = concurrently(
                lambda: _warnings(repo, config, snapshot, task, existing), store
            )
        else:
            stored = store()
    except BaseException:
        keep.discard(snapshot.seed)
        raise
    cp = stored.checkpoint
    _remember(repo, snapshot, cp, kept=not config.one_off_include)
    pruned: list[str] = []
    prune_problem: str | None = None
    if stored.created and request.logged:
        oplog.log_event(
            repo, "save", task=task, checkpoint=cp.id, commit=cp.commit, auto=request.auto
        )
    if stored.created and config.retention.auto:
        from ..storage.retention import auto_prune  # here: a save rarely needs it

        pruned, prune_problem = auto_prune(repo, config.retention, task)
    return Saved(
        checkpoint=cp,
        created=stored.created,
        snapshot=snapshot,
        pruned=pruned,
        prune_problem=prune_problem,
        secret_findings=findings if stored.created else [],
        scan_problem=scan_problem if stored.created else None,
        newly_left_out=_newly_said(repo, left_out) if request.logged else (),
        cut=(*cut, *stored.cut) if stored.created else (),
    )


# An automatic save's message is named after a command line or a prompt: this many
# characters of it are read for secrets, and this many kept.
AUTO_MESSAGE_READ = 1000
AUTO_MESSAGE_WIDTH = 88


def clean_request(request: SaveRequest, allow: tuple[str, ...]) -> tuple[SaveRequest, list[str]]:
    """The request with its free text as the checkpoint will keep it (kept_text), an
    automatic save's message on one line, and what was changed, said."""
    said: list[str] = []
    changes: dict[str, Any] = {}
    for name in ("message", "hypothesis", "next_move"):
        value = getattr(request, name)
        if not value:
            continue
        auto_message = request.auto and name == "message"
        limit = MESSAGE_MAX if name == "message" else NOTE_MAX
        limit = AUTO_MESSAGE_READ if auto_message else limit
        text, notes = kept_text(value, limit, allow)
        said += [f"{name.replace('_', ' ')}: {note}" for note in notes]
        if auto_message:
            text = clip(text, AUTO_MESSAGE_WIDTH)
        if text != value:
            changes[name] = text
    return (replace(request, **changes) if changes else request), said


def kept_text(value: str, limit: int, allow: tuple[str, ...]) -> tuple[str, list[str]]:
    """Free text as a checkpoint, a record or a note keeps it: what the secret scan finds
    redacted before it is written anywhere, then fitted (core.text.kept); and what was
    changed."""
    text, kinds = redact(value[: limit + 1], allow)  # (never more than it could keep)
    text, note = kept(text, limit)
    said = [f"secret redacted ({', '.join(kinds)})"] if kinds else []
    return text, [*said, note] if note else said


def said_of(saved: Saved) -> list[str]:
    """What a save has to say besides its name, as every saver says it: what it newly
    left out, what it changed in its text, the secrets its scan warns of."""
    out = (
        [left_out_line([o.describe() for o in saved.newly_left_out])]
        if saved.newly_left_out
        else []
    )
    out += [f"note: {note}" for note in saved.cut]
    found = secret_warnings(saved.secret_findings, saved.checkpoint.name)
    return out + [f"warning: {line}" for line in found]


SECRETS_SHOWN = 5  # secret findings a save names; `scan` lists every one


def secret_warnings(findings: list[str], checkpoint: str) -> list[str]:
    """A save's secret findings as said: the first few, then how many more and where."""
    out = [f"possible secret saved: {f}" for f in findings[:SECRETS_SHOWN]]
    more = len(findings) - SECRETS_SHOWN
    if more > 0:
        out.append(
            f"possible secret saved: and {more} more (`git checkpoint scan {checkpoint}` "
            "lists every one)"
        )
    return out


def left_out_line(described: list[str], shown: int = 5) -> str:
    """`left out: a (why), b (why) and N more (git checkpoint show)`."""
    more = len(described) - shown
    tail = f" and {more} more (git checkpoint show @)" if more > 0 else ""
    return f"left out: {', '.join(described[:shown])}{tail}"


# How many of what a save left out its manifest names (it counts them all).
LEFT_OUT_KEPT = 100
SAID = "left-out.json"  # <git dir>/checkpoint/: what the saves of this worktree named


def said_left_out(config: Config, left_out: tuple[LeftOut, ...]) -> tuple[LeftOut, ...]:
    """What a checkpoint says it left out: all of it, but the secret-looking files when
    the configuration asks for no word of them."""
    if config.secrets_on_save == "ignore":
        return tuple(o for o in left_out if o.why != SECRET_NAME)
    return left_out


def left_out_fields(left_out: tuple[LeftOut, ...]) -> dict[str, Any]:
    """Labels' `left_out` and `left_out_total` (the manifest keeps the first ones)."""
    return {
        "left_out": tuple(_recorded(o) for o in left_out[:LEFT_OUT_KEPT]),
        "left_out_total": len(left_out),
    }


def _recorded(item: LeftOut) -> dict[str, object]:
    entry: dict[str, object] = {"path": item.path[:300], "why": item.why}
    if item.files != 1:
        entry["files"] = item.files
    if item.size:
        entry["bytes"] = item.size
    return entry


def _newly_said(repo: Repo, left_out: tuple[LeftOut, ...]) -> tuple[LeftOut, ...]:
    """What no save of this worktree named before, or named otherwise (its reason, its
    count or size changed); the record then holds what this save left out."""
    path = repo.git_dir / "checkpoint" / SAID
    try:
        before = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(before, dict):
            before = {}
    except (OSError, ValueError):
        before = {}
    now = {o.path: f"{o.why}:{o.files}:{o.size}" for o in left_out}
    new = tuple(o for o in left_out if before.get(o.path) != now[o.path])
    if now != before:
        with contextlib.suppress(OSError):
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, json.dumps(now, ensure_ascii=False).encode(), durable=False)
    return new


def _capture(
    repo: Repo,
    config: Config,
    task: str,
    *,
    prescan: Prescan | None,
    found: Found | None,
) -> tuple[Snapshot, list[Checkpoint]]:
    """The workspace as a snapshot (built on the quick check's scan when it holds), and
    the task's latest checkpoints (recent_checkpoints: what the store and the secret
    scan compare with), listed beside the capture."""
    if found is not None and found.saved["task"] == task:
        from .quickbuild import build_on

        snapshot = build_on(repo, config, found)
        if snapshot is not None:
            return snapshot, recent_checkpoints(repo, task)
    listing = start_listing(repo, config)  # beside the listing of the task
    try:
        existing = recent_checkpoints(repo, task)
        snapshot = capture_workspace(repo, config, keep=True, listing=listing, prescan=prescan)
    finally:
        if listing is not None:
            listing.child.finish()  # waited for, whatever became of the capture
    return snapshot, existing


def _remember(repo: Repo, snapshot: Snapshot, cp: Checkpoint, *, kept: bool) -> None:
    """Keep what the quick auto-save needs, now that `cp` is the task's latest; unless
    the save was not one an auto-save would make (`kept` False: one command's includes),
    and then nothing holds from the last save either."""
    if snapshot.seed is None:
        return
    if not kept:
        keep.discard(snapshot.seed)
        keep.forget(repo)
        return
    trees = {
        "base": snapshot.base,
        "worktree": snapshot.worktree_tree,
        "index": snapshot.index_tree,
        "overlay": snapshot.overlay_tree,
    }
    keep.record(repo, snapshot.seed, task=cp.task, ref=cp.ref, commit=cp.commit, trees=trees)


def _findings(
    repo: Repo, config: Config, snapshot: Snapshot, task: str, existing: list[Checkpoint]
) -> list[str]:
    """The secrets in what is new in the workspace (secrets.on_save)."""
    done = [c for c in existing if not c.is_safety]
    found = scan_snapshot(repo, snapshot, task, config.secrets_allow, done)
    return [f.describe() for f in found]


def _refuse_secrets(
    repo: Repo, config: Config, snapshot: Snapshot, task: str, existing: list[Checkpoint]
) -> None:
    """secrets.on_save: block: nothing is saved while a secret is in the workspace."""
    found = _findings(repo, config, snapshot, task, existing)
    if found:
        raise Refused(
            f"secrets in the workspace, nothing saved (secrets.on_save: block): "
            f"{'; '.join(found[:5])}; list false positives under secrets.allow"
        )


def _warnings(
    repo: Repo, config: Config, snapshot: Snapshot, task: str, existing: list[Checkpoint]
) -> tuple[list[str], str | None]:
    """secrets.on_save: warn: the findings to name after the save, or why there are none
    (a scan that fails never fails the save it only comments on)."""
    try:
        return _findings(repo, config, snapshot, task, existing), None
    except CheckpointError as exc:
        return [], f"secret scan failed: {exc}"
