"""What every command starts from: the repository, its configuration and the task."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .config import Config, load_config
from .gitio import Repo
from .store import task_from_branch, validate_task


@dataclass(frozen=True)
class Context:
    repo: Repo
    config: Config

    def task(self, explicit: str | None = None) -> str:
        """The named task, else the one named after the current branch (or `detached`)."""
        if explicit is not None:
            return validate_task(explicit)
        inside_run = os.environ.get("CHECKPOINT_TASK")
        if inside_run:  # an agent inside `git checkpoint run` works on the loop's task
            return validate_task(inside_run)
        _, branch = self.repo.head()
        return task_from_branch(branch)


def load_context(cwd: str | Path | None = None) -> Context:
    repo = Repo.discover(cwd)
    return Context(repo=repo, config=load_config(repo.root, repo.checkpoint_config()))
