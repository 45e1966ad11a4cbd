"""What `.checkpoint.yaml` parsed to is kept in the git dir; a kept parse that is not a
regular file (a FIFO that no one writes, a link to /dev/zero) is no cache: the command
parses the file and goes on, never waiting on it or reading it without end."""

from __future__ import annotations

import resource
import subprocess
import sys
import time

import pytest

from git_checkpoint.config.cache import CACHE_NAME

from ..conftest import Repo
from ..helpers import replace_with_endless
from .conftest import config


def _small_address_space() -> None:
    # (a reader that never stops on /dev/zero fails here instead of taking the machine)
    resource.setrlimit(resource.RLIMIT_AS, (2 * 1024**3, 2 * 1024**3))


@pytest.mark.parametrize("kind", ["fifo", "symlink to /dev/zero"])
def test_a_kept_parse_that_is_not_a_regular_file_never_hangs(repo: Repo, kind: str) -> None:
    config(repo, "retention:\n  keep_last: 7\n")
    repo.cp("save", "-m", "one")
    kept = repo.path / ".git" / "checkpoint" / CACHE_NAME
    replace_with_endless(kept, kind)
    started = time.monotonic()
    proc = subprocess.run(  # (this process itself, so that a timeout ends the reader)
        [sys.executable, "-m", "git_checkpoint", "list"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        timeout=20,
        preexec_fn=_small_address_space,
        check=False,
    )
    assert (proc.returncode, proc.stderr) == (0, "")
    assert "cp_001" in proc.stdout
    assert time.monotonic() - started < 10
