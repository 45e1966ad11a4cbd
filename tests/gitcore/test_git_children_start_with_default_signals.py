"""git children start as from a shell: SIGPIPE and SIGXFSZ, which Python ignores, at
their default, and no signal blocked, whichever way git is started (gitcore/spawn.py's
posix_spawn, gitcore/repo.py's subprocess). A git that ignored SIGPIPE, and the hooks
and filters it runs, would go on writing into a pipe nobody reads."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from git_checkpoint.gitcore.repo import run_git
from git_checkpoint.gitcore.spawn import Spawned

from ..conftest import Repo
from ..launcher import wrapper_env

SIGPIPE_BIT = 1 << (13 - 1)
SIGXFSZ_BIT = 1 << (25 - 1)


def spawned(repo: Repo) -> None:
    assert Spawned(["version"], str(repo.path)).result() is not None


def through_subprocess(repo: Repo) -> None:
    run_git(["version"], repo.path)


@pytest.mark.parametrize("start", [spawned, through_subprocess], ids=["posix_spawn", "subprocess"])
def test_git_starts_with_sigpipe_at_its_default_and_nothing_blocked(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, start: Callable[[Repo], None]
) -> None:
    log = tmp_path / "signals"
    # The shell's own builtins: what git's parent left it, with no child of its own.
    look = 'while read -r k v; do case $k in SigIgn:|SigBlk:) echo "$k$v";; esac; done'
    env = wrapper_env(tmp_path, f'{look} < /proc/$$/status > "$LOG"', LOG=str(log))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    start(repo)
    fields = dict(line.split(":") for line in log.read_text().splitlines())
    ignored, blocked = int(fields["SigIgn"], 16), int(fields["SigBlk"], 16)
    assert ignored & (SIGPIPE_BIT | SIGXFSZ_BIT) == 0, hex(ignored)
    assert blocked == 0, hex(blocked)
