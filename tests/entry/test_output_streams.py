"""Standard streams that are closed, full or cut short (`2>&-`, `>&-`, /dev/full, `|
head`): no traceback, the exit code still the answer, the JSON error object where
--json promises it; piped output is complete and keeps the escape bytes that are
content."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from ..conftest import Repo
from ..launcher import launch_via_shell

# --- output flushed before an exit without teardown -----------------------------------


@pytest.mark.parametrize("args", [("list", "--json"), ("save", "-m", "x", "--json")])
def test_json_into_a_full_disk_is_not_a_success(repo: Repo, args: tuple[str, ...]) -> None:
    repo.write("n.txt", "new\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # as users run it
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            ["git", "checkpoint", *args], cwd=repo.path, stdout=full, stderr=subprocess.PIPE,
            env=env,
        )  # fmt: skip
    assert proc.returncode != 0


def test_json_into_a_full_disk_unbuffered_gives_no_traceback(repo: Repo) -> None:
    """Unbuffered stdout (PYTHONUNBUFFERED=1, honoured by the venv's console script)
    that cannot be written under --json: the error object fail() writes to the same
    stdout fails too, and the exit code is the answer (not a traceback, exit 1)."""
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            ["git", "checkpoint", "list", "--json"], cwd=repo.path, stdout=full,
            stderr=subprocess.PIPE, env={**os.environ, "PYTHONUNBUFFERED": "1"}, text=True,
        )  # fmt: skip
    assert proc.returncode == 4 and "Traceback" not in proc.stderr, proc.stderr


def test_output_into_a_file_and_a_pipe_is_complete(repo: Repo, tmp_path: Path) -> None:
    for n in range(5):
        repo.write(f"f{n}.txt", f"{n}\n")
        repo.cp("save", "-m", f"save {n}")
    out = tmp_path / "out.json"
    with open(out, "w") as fh:
        subprocess.run(["git", "checkpoint", "list", "--json"], cwd=repo.path, stdout=fh)
    import json

    assert len(json.loads(out.read_text())["checkpoints"]) == 5
    piped = subprocess.run(
        "git checkpoint log | cat", shell=True, cwd=repo.path, capture_output=True, text=True
    )
    assert piped.stdout.count("\n") >= 5 and piped.returncode == 0


@pytest.mark.parametrize("args", [("log",), ("list",), ("list", "--json")])
def test_a_reader_that_stops_early_gets_no_traceback(repo: Repo, args: tuple[str, ...]) -> None:
    for n in range(3):
        repo.write(f"f{n}.txt", f"{n}\n")
        repo.cp("save", "-m", f"save {n}")
    proc = subprocess.Popen(
        ["git", "checkpoint", *args], cwd=repo.path, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # gone before the first line
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert "Traceback" not in err and "Exception ignored" not in err


@pytest.mark.parametrize("argv", [["log"], ["-h"], ["--version"], ["save", "-h"], ["list"]])
def test_a_closed_pipe_is_not_a_no_answer(repo: Repo, argv: list[str]) -> None:
    """`| head` gone before the output: click's own EPIPE handler exits 1, which says
    "no" here (verify, diff): the command ends as git's would, not with an answer."""
    repo.write("n.txt", "new\n")
    repo.cp("save", "-m", "one")
    proc = subprocess.Popen(
        ["git", "checkpoint", *argv], cwd=repo.path, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None
    proc.stdout.close()
    _, err = proc.communicate(timeout=60)
    assert proc.returncode in (0, 141), err
    assert b"Traceback" not in err


def test_warnings_reach_stderr_and_errors_keep_their_exit_code(repo: Repo) -> None:
    proc = repo.cp("restore", "cp_404", expect=2)
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    got = repo.cp_json("restore", "cp_404", expect=2)
    assert got["exit_code"] == 2
    proc = repo.cp("restore", "--bogus", expect=2)
    assert "Traceback" not in proc.stderr


# --- closed and full standard streams -------------------------------------------------------


def test_save_with_stderr_closed_still_saves(repo: Repo) -> None:
    """`git-checkpoint save 2>&-` saves: with stderr closed, sys.stderr is None, and
    nothing on the way (the slow-step notice, the console's echo) may take it for a
    stream. Through `git checkpoint` git reopens fd 2 on /dev/null; hooks and agents that
    run git-checkpoint itself do not."""
    repo.write("new.txt", "new\n")
    proc = launch_via_shell(repo, "save", "-m", "quiet", redirect="2>&-")
    assert proc.returncode == 0, proc.stdout
    assert proc.stdout == "checkpoint saved: cp_001\n"


@pytest.mark.parametrize("in_repo", [True, False])
def test_json_with_stdout_closed_gives_no_traceback(
    repo: Repo, tmp_path: Path, in_repo: bool
) -> None:
    """`save --json >&-`: with stdout closed, sys.stdout is None, and neither the answer
    nor the error object may be written to it (an AttributeError, a traceback, exit 1):
    the exit code is what the same line without --json gives, 0 (saved) or 2 (not a
    repository)."""
    repo.write("new.txt", "new\n")
    where = repo if in_repo else Repo(tmp_path)
    proc = launch_via_shell(where, "save", "--json", redirect=">&-")
    plain = launch_via_shell(where, "save", redirect=">&-")
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == (0 if in_repo else 2) == plain.returncode


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_json_error_object_on_a_full_disk(repo: Repo, tmp_path: Path, stream: str) -> None:
    """Unbuffered output (PYTHONUNBUFFERED=1, which the venv's console script honours).
    stdout on /dev/full: the error object cannot go to the stdout that just failed, and
    the OSError must not escape as a traceback, exit 1: exit 4. stderr on /dev/full
    outside a repository: the one JSON object --json promises still reaches the (good)
    stdout, exit 2."""
    unbuffered = {"PYTHONUNBUFFERED": "1"}
    if stream == "stdout":
        repo.write("new.txt", "new\n")
        proc = launch_via_shell(repo, "save", "--json", redirect=">/dev/full", env=unbuffered)
        assert "Traceback" not in proc.stderr, proc.stderr
        assert proc.returncode == 4
    else:
        proc = launch_via_shell(
            Repo(tmp_path), "save", "--json", redirect="2>/dev/full", env=unbuffered
        )
        assert proc.returncode == 2, proc.stdout
        assert json.loads(proc.stdout)["exit_code"] == 2


def test_diff_piped_keeps_the_escape_bytes_of_a_file(repo: Repo) -> None:
    """Off a terminal only our own colors are stripped, never the bytes of a file:
    `git checkpoint diff > x.patch` of a file holding `\\033[31m` (a test fixture, a
    colored log) keeps them, so the patch still applies."""
    repo.write("new.txt", "new\n")
    repo.cp("save", "-m", "one")
    repo.write("log.txt", "\033[31mred\033[0m\n")
    repo.cp("save", "-m", "two")
    proc = repo.cp("diff", "cp_001", "cp_002")
    assert "+\033[31mred\033[0m" in proc.stdout
