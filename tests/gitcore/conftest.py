"""What the tests of objects read in the process share."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from git_checkpoint.gitcore import inprocess


@pytest.fixture
def in_process() -> Iterator[None]:
    """Objects read through libgit2 in this process, as the command server's workers do."""
    pytest.importorskip("pygit2")
    before = inprocess.ENABLED
    inprocess.ENABLED = True
    yield
    inprocess.ENABLED = before
