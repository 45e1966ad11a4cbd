"""`git checkpoint demo` runs from start to end."""

from __future__ import annotations

import subprocess


def test_demo_runs(tmp_path: object) -> None:
    proc = subprocess.run(
        ["git", "checkpoint", "demo"], capture_output=True, text=True, check=False, timeout=120
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "verifier: unit" in out and "failed (exit 1)" in out
    assert "workspace matches" in out
    assert "promoted: cp_004" in out
    # wrong once, then right: the second attempt's fix runs, not a stale bytecode cache
    assert "demo done: cp_004 promoted after 2 attempts" in out
    assert "attempt 3/3" not in out
