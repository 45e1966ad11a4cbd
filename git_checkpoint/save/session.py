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

from dataclasses import dataclass, field
from pathlib import Path

from ..config.model import Config
from ..config.parse import load_config
from ..core import preload
from ..core.errors import CheckpointError, Refused
from ..fast.prescan import Prescan
from ..fast.quickcheck import Found
from ..gitcore import maintenance
from ..gitcore.repo import Repo, concurrently
from ..storage import oplog, tasks
from ..storage.commits import Labels, StoreOutcome, store_checkpoint
from ..storage.lock import lock_path, locked
from ..storage.refs import Checkpoint, current_task, task_checkpoints
from . import keep
from .capture import Snapshot, capture_workspace, start_listing


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
) -> str | None:
    """An automatic checkpoint of the workspace of `cwd` (a hook's, the guard's), in the
    current task; its name, or None when nothing changed. `found`: the quick check that
    found a change; `maintain`: never for an agent's hook (see above)."""
    if found is not None:  # the check found the repository and read our config already
        where = found.paths
        repo = Repo(Path(where.root), Path(where.git_dir), Path(where.common_dir))
        repo.remember_config(found.config)
    else:
        repo = Repo.discover(cwd)
    config = load_config(repo.root, repo.checkpoint_config())
    request = SaveRequest(task=current_task(repo), message=message, auto=True)
    saved = save_workspace(
        repo, config, request, lock_wait=lock_wait, found=found, maintain=maintain
    )
    return saved.checkpoint.id if saved.created else None


def _save_locked(
    repo: Repo,
    config: Config,
    request: SaveRequest,
    *,
    prescan: Prescan | None,
    found: Found | None,
) -> Saved:
    task = request.task
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
    if mode == "warn" and scanning:  # the scan starts beside the store, at the end
        preload.start(f"{__package__}.secrets")
    snapshot, existing = _capture(repo, config, task, prescan=prescan, found=found)
    labels = Labels(
        message=request.message,
        hypothesis=record.hypothesis,
        next_move=record.next_move,
        auto=request.auto,
        run_id=request.run_id,
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
    _remember(repo, snapshot, cp)
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
    )


def _capture(
    repo: Repo,
    config: Config,
    task: str,
    *,
    prescan: Prescan | None,
    found: Found | None,
) -> tuple[Snapshot, list[Checkpoint]]:
    """The workspace as a snapshot (built on the quick check's scan when it holds), and
    the task's checkpoints, listed beside the capture."""
    if found is not None and found.saved["task"] == task:
        from .quickbuild import build_on

        snapshot = build_on(repo, config, found)
        if snapshot is not None:
            return snapshot, task_checkpoints(repo, task)
    listing = start_listing(repo, config)  # beside the listing of the task
    try:
        existing = task_checkpoints(repo, task)
        snapshot = capture_workspace(repo, config, keep=True, listing=listing, prescan=prescan)
    finally:
        if listing is not None:
            listing.child.finish()  # waited for, whatever became of the capture
    return snapshot, existing


def _remember(repo: Repo, snapshot: Snapshot, cp: Checkpoint) -> None:
    """Keep what the quick auto-save needs, now that `cp` is the task's latest."""
    if snapshot.seed is None:
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
    from .secrets import scan_snapshot  # here: on the scanning thread, beside the save

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
