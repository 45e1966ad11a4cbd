"""doctor's round trip: a real save -> mutate -> restore -> compare -> undo in a
temporary linked worktree (removed afterwards, always), under a task of its own that
leaves nothing behind: no refs, no task record, no line in the operation log.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from ..config.model import Config
from ..core.errors import CheckpointError
from ..fast.hook import GUARD as HOOK_GUARD
from ..gitcore.repo import Repo
from ..restore.run import restore_to
from ..restore.undo import undo
from ..save.session import SaveRequest, save_workspace
from ..storage import oplog
from ..storage.lock import locked
from ..storage.refs import REF_ROOT
from ..verify.worktree import temporary_worktree
from .checks import Check


def _files(root: Path) -> dict[str, bytes]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            full = Path(dirpath) / name
            if not full.is_symlink():
                out[str(full.relative_to(root))] = full.read_bytes()
    return out


def round_trip(repo: Repo, config: Config) -> Check:
    """Save, mutate, restore, compare, undo, compare, in a temporary worktree of `repo`,
    under a task of its own that is removed afterwards, as its refs are."""
    head, _ = repo.head()
    if head is None:
        return Check("round trip", "note", "skipped: no commit yet", "commit once, then rerun")
    task = f"doctor-probe-{os.getpid()}"
    started = time.monotonic()
    step = "creating the temporary worktree"
    hooks_were = os.environ.get(HOOK_GUARD)
    os.environ[HOOK_GUARD] = "1"  # our own git hooks must not auto-save the probe's steps
    try:
        with temporary_worktree(repo, "HEAD", prefix="checkpoint-doctor-") as path:
            wt = Repo.discover(path, user_env=False)
            (path / "doctor-probe.txt").write_text("saved by git checkpoint doctor\n")
            step = "save"
            request = SaveRequest(task, message="doctor", logged=False)
            probe = save_workspace(wt, config, request, maintain=False).checkpoint
            saved = _files(path)
            index = wt.git("ls-files", "-s")
            step = "mutate"
            tracked = [p for p in wt.git_lines("ls-files", "-z") if (path / p).is_file()]
            if tracked:
                (path / tracked[0]).write_bytes(b"changed by git checkpoint doctor\n")
            (path / "doctor-probe.txt").unlink()
            (path / "doctor-residue.txt").write_text("should be removed by the restore\n")
            mutated = _files(path)
            step = "restore"
            with locked(wt, config.lock_timeout):
                restore_to(wt, config, task, probe)
            step = "compare"
            if _files(path) != saved or wt.git("ls-files", "-s") != index:
                raise AssertionError("the restored workspace differs from the checkpoint")
            step = "undo"
            with locked(wt, config.lock_timeout):
                undo(wt, config, task)
            if _files(path) != mutated:
                raise AssertionError("undo did not bring the mutated workspace back")
    except (CheckpointError, AssertionError, OSError) as exc:
        return Check(
            "round trip",
            "fail",
            f"failed at {step}: {exc}",
            "rerun with GIT_CHECKPOINT_DEBUG=1 and report the output",
        )
    finally:
        if hooks_were is None:
            del os.environ[HOOK_GUARD]
        _forget(repo, task)
    elapsed = time.monotonic() - started
    return Check(
        "round trip",
        "ok",
        f"save, mutate, restore, compare, undo in a temporary worktree ({elapsed:.1f}s)",
    )


def _forget(repo: Repo, task: str) -> None:
    """Remove the probe's refs, task record and id mark: the doctor leaves nothing
    behind."""
    refs = repo.run(["for-each-ref", "--format=%(refname)", f"{REF_ROOT}{task}/"], check=False)
    for ref in refs.stdout.decode().split():
        repo.run(["update-ref", "-d", ref], check=False)
    for leftover in (repo.state_dir() / "tasks" / f"{task}.yaml",):
        leftover.unlink(missing_ok=True)
    oplog.forget_high_water(repo, task)
