"""Writing `.checkpoint.yaml`, reading a refused configuration's one line and where it
points, and the overlay a save took under the configuration."""

from __future__ import annotations

import re

from ..conftest import Repo
from ..helpers import REF1


def overlay_paths(repo: Repo, ref: str = REF1) -> set[str]:
    """The paths in the overlay (U) of the checkpoint `ref`."""
    parents = repo.git("rev-list", "--no-walk", "--parents", "-n", "1", ref).split()[1:]
    if len(parents) < 3:
        return set()
    out = repo.git("ls-tree", "-r", "-z", "--name-only", parents[2])
    return {p for p in out.split("\0") if p}


def config(repo: Repo, text: str | bytes) -> None:
    repo.write(".checkpoint.yaml", text)


def bad_config_error(repo: Repo, *args: str) -> str:
    """Run a command that must refuse the config: exit 2, one line, no traceback."""
    proc = repo.cp(*(args or ("list",)), expect=2)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, f"wanted one line, got {proc.stderr!r}"
    assert proc.stdout == ""
    return lines[0]


def location(line: str) -> tuple[int, int]:
    """The `.checkpoint.yaml:LINE:COL` an error names."""
    m = re.search(r"\.checkpoint\.yaml:(\d+):(\d+)", line)
    assert m, f"no .checkpoint.yaml:LINE:COL in {line!r}"
    return int(m.group(1)), int(m.group(2))
