"""What every verb starts from: the repository, its configuration, the task, and what
the launcher started for this command before the tool was loaded."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..config.model import Config
from ..config.parse import load_repo_config
from ..core.errors import UsageError
from ..fast.prescan import Prescan
from ..gitcore.repo import Repo
from ..storage.lock import lock_path, locked
from ..storage.refs import current_task


@dataclass(frozen=True)
class Context:
    """The repository and configuration every verb starts from."""

    repo: Repo
    config: Config
    config_problem: str | None = None  # why the defaults stand in for a broken config
    # The launcher's early lock and scan, handed to the first lock and capture that want them.
    prescan: Prescan | None = field(default=None, compare=False, repr=False)
    long_lived: bool = False  # the MCP server: its children are never its to reap
    # Whether verify may take SIGTERM and SIGHUP for the time it runs (a command line, the
    # MCP server); a program calling the Python API keeps its own handlers.
    handle_signals: bool = True

    def task(self, explicit: str | None = None) -> str:
        """The named task, else the one of the run loop around us, else the branch's."""
        return current_task(self.repo, explicit)

    @contextlib.contextmanager
    def locked(self) -> Iterator[None]:
        """The repository's checkpoint lock, adopted from the launcher when it took it."""
        prescan = self.prescan
        adopt = prescan.take_lock(lock_path(self.repo)) if prescan is not None else None
        with locked(self.repo, self.config.lock_timeout, adopt=adopt):
            yield


def load_context(
    cwd: str | Path | None = None,
    *,
    tolerant: bool = False,
    repo: Repo | None = None,
    prescan: Prescan | None = None,
) -> Context:
    """`tolerant`: a broken configuration falls back to the defaults (and says why in
    `config_problem`), so that `restore` and `undo` can still get out of it. `repo`:
    the repository of `cwd`, found already; `prescan`: what the launcher started.
    """
    if repo is None:
        repo = Repo.discover(cwd)
    try:
        config = load_repo_config(repo)
        return Context(repo=repo, config=config, prescan=prescan)
    except UsageError as exc:
        if not tolerant:
            raise
        return Context(repo=repo, config=Config(), config_problem=str(exc), prescan=prescan)
