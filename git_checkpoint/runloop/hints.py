"""The commands `run` prints for the user to go on with: they name the run's task where a
bare name would find another one, and a restore is offered as it will be accepted, or,
when it would be refused now, with the reason and what to do first.
"""

from __future__ import annotations

from ..config.model import Config
from ..core.errors import CheckpointError, Refused
from ..gitcore.repo import Repo
from ..restore.run import restore_to
from ..storage.lock import locked
from ..storage.refs import Checkpoint, current_task

HINT_LOCK_WAIT = 2.0  # seconds: a hook's save may hold the checkpoint lock a moment


def _is_default(repo: Repo, config: Config, task: str) -> bool:
    """Whether `task` is the one a command run now without --task works on."""
    try:
        return current_task(repo) == task
    except CheckpointError:  # a CHECKPOINT_TASK of ours that is no task name
        return False


def checkpoint_name(repo: Repo, config: Config, task: str, checkpoint_id: str) -> str:
    """`cp_001` where a bare id finds it, else `task/cp_001`."""
    return checkpoint_id if _is_default(repo, config, task) else f"{task}/{checkpoint_id}"


def task_option(repo: Repo, config: Config, task: str) -> str:
    """` --task T` where a command without it would work on another task."""
    return "" if _is_default(repo, config, task) else f" --task {task}"


def rollback_hint(repo: Repo, config: Config, task: str, rollback: Checkpoint) -> str:
    """`rollback point: …` with the restore that goes back to it: `--move-head` only when
    HEAD has left its base; the reason instead when the restore would be refused now (an
    operation in progress, an interrupted restore, the overlay over its limit, another
    branch checked out). Asked of the restore itself, as a dry run."""
    name = checkpoint_name(repo, config, task, rollback.id)
    head, _ = repo.head()
    move_head = head != rollback.base
    command = f"git checkpoint restore {name}" + (" --move-head" if move_head else "")
    try:
        with locked(repo, HINT_LOCK_WAIT):
            refusal = _refusal(repo, config, task, rollback, move_head)
    except Refused:  # the lock held longer: the restore waits for it, and says so
        refusal = None
    if refusal:
        return f"rollback point: {name}  (`{command}` would be refused now: {refusal})"
    return f"rollback point: {name}  ({command})"


def _refusal(
    repo: Repo, config: Config, task: str, rollback: Checkpoint, move_head: bool
) -> str | None:
    try:
        restore_to(repo, config, task, rollback, dry_run=True, move_head=move_head)
    except Refused as exc:
        return str(exc)
    except (CheckpointError, OSError):
        pass  # not a refusal: the command itself will say what stops it
    return None
