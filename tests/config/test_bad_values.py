"""Values no configuration may hold: a `.checkpoint.yaml` that is not a small regular
file, NaN and infinite numbers, fractional limits, NUL bytes in a command. Each is a
fast one-line error, exit 2."""

from __future__ import annotations

import os
import time

import pytest

from ..conftest import Repo
from ..helpers import one_line_of


@pytest.mark.parametrize("kind", ["symlink to /dev/zero", "fifo", "folder", "huge", "symlink"])
def test_config_that_is_not_a_small_regular_file_is_a_fast_one_line_error(
    repo: Repo, kind: str
) -> None:
    path = repo.path / ".checkpoint.yaml"
    if kind == "symlink to /dev/zero":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    elif kind == "huge":
        path.write_text("# padding\n" * 200_000)
    else:  # even to a good config: a checkpoint could point it anywhere
        (repo.path / "real.yaml").write_text("promotion_rule: all_pass\n")
        path.symlink_to("real.yaml")
    started = time.monotonic()
    proc = repo.cp("status", expect=2, timeout=20)
    assert time.monotonic() - started < 10
    assert ".checkpoint.yaml" in one_line_of(proc)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e999"])
def test_lock_timeout_nan_or_inf_is_bad_input(repo: Repo, value: str) -> None:
    repo.git("config", "checkpoint.lockTimeout", value)
    assert "locktimeout" in one_line_of(repo.cp("verify", expect=2))


@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf"])
def test_verifier_timeout_nan_or_inf_is_bad_input(repo: Repo, value: str) -> None:
    repo.write(
        ".checkpoint.yaml",
        f"verifiers:\n  - name: unit\n    command: 'true'\n    timeout: {value}\n",
    )
    assert "timeout" in one_line_of(repo.cp("verify", expect=2))


def test_overlay_limit_of_infinite_files_is_bad_input(repo: Repo) -> None:
    repo.git("config", "checkpoint.overlayMaxFiles", "inf")
    assert "overlaymaxfiles" in one_line_of(repo.cp("verify", expect=2))


def test_verifier_command_with_a_nul_byte_is_bad_input(repo: Repo) -> None:
    repo.write(".checkpoint.yaml", 'verifiers:\n  - name: unit\n    command: "echo\\0hi"\n')
    assert "NUL" in one_line_of(repo.cp("verify", expect=2))


def test_fractional_file_limit_is_bad_config(repo: Repo) -> None:
    repo.git("config", "checkpoint.overlayMaxFiles", "0.5")
    proc = repo.cp("verify", expect=2)
    assert "whole number" in proc.stderr
