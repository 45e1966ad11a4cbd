"""What every command starts from: the repository, its configuration and the task."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..config.model import Config, load_config
from ..core.errors import UsageError
from ..gitcore.repo import Repo
from ..storage.refs import task_from_branch, validate_task


@dataclass(frozen=True)
class Context:
    repo: Repo
    config: Config
    config_problem: str | None = None  # why the defaults stand in for a broken config

    def task(self, explicit: str | None = None) -> str:
        """The named task, else the one named after the current branch (or `detached`)."""
        if explicit is not None:
            return validate_task(explicit)
        inside_run = os.environ.get("CHECKPOINT_TASK")
        if inside_run:  # an agent inside `git checkpoint run` works on the loop's task
            return validate_task(inside_run)
        _, branch = self.repo.head()
        return task_from_branch(branch)


def load_context(
    cwd: str | Path | None = None, *, tolerant: bool = False, repo: Repo | None = None
) -> Context:
    """`tolerant`: a broken configuration falls back to the defaults (and says why in
    `config_problem`), so that `restore` and `undo` can still get out of it. `repo`:
    the repository of `cwd`, found already.
    """
    if repo is None:
        repo = Repo.discover(cwd)
    try:
        return Context(repo=repo, config=load_config(repo.root, repo.checkpoint_config()))
    except UsageError as exc:
        if not tolerant:
            raise
        return Context(repo=repo, config=Config(), config_problem=str(exc))
