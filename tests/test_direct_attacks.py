"""Attacks on save/restore/undo without click (direct.py, console.py, launch.py: 6b4d081)
and on the early scan's marks and scratch-folder removal thread (early.py: e9b412d).

The reader itself held (a generated comparison with click passes). The breaks found
were in what surrounds it: a Ctrl-C at startup or while the scan is read, closed or
full standard streams, a message that is not UTF-8. Each test that says "Found" failed
before its fix.
"""

from __future__ import annotations

import io
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
from contextlib import redirect_stderr
from pathlib import Path

import click
import pytest

from git_checkpoint.entry import fastcli as direct
from git_checkpoint.entry.cli import cli
from git_checkpoint.entry.cmdline import CommandLine

from .conftest import BIN, Repo

LAUNCHER = os.path.join(BIN, "git-checkpoint")  # launch.main, as `git checkpoint` runs it
REAL_GIT = os.path.realpath(shutil.which("git") or "/usr/bin/git")


def launch(
    repo: Repo, *args: str, redirect: str = "", env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The launcher with ARGS; `redirect` (e.g. `2>&-`) applied by a shell in between."""
    return subprocess.run(
        ["sh", "-c", f'exec "$@" {redirect}', "sh", LAUNCHER, *args],
        cwd=repo.path,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        errors="surrogateescape",
        check=False,
        timeout=120,
    )


def scratch(repo: Repo) -> list[str]:
    return sorted(p.name for p in (repo.path / ".git").glob("checkpoint-*"))


def wrapper_env(tmp_path: Path, body: str, **variables: str) -> dict[str, str]:
    """A `git` first on PATH that runs the shell `body` ($1.. are git's arguments, `$*`
    holds `-C ROOT status …` for the early scan's status), then the real git."""
    folder = tmp_path / "wrap"
    folder.mkdir(exist_ok=True)
    (folder / "git").write_text(f'#!/bin/sh\n{body}\nexec "{REAL_GIT}" "$@"\n')
    (folder / "git").chmod(0o755)
    return {"PATH": f"{folder}{os.pathsep}{os.environ['PATH']}", **variables}


# --- the reader: as click reads (held) ------------------------------------------------------

TOKENS = ["-m", "--task", "--include", "--json", "--auto", "--dry-run", "--keep-head", "x"]
TOKENS += ["", "-", "--", "-mx", "-m=", "--task=", "--json=", "ü\udcff", "-1", "—json"]


def clicks(argv: list[str]) -> object:
    try:
        with redirect_stderr(io.StringIO()):
            ctx = cli.commands[argv[0]].make_context(argv[0], argv[1:])
    except (click.exceptions.Exit, click.ClickException) as exc:
        return type(exc).__name__
    params = dict(ctx.params)
    return "resume" if params.pop("resume", False) else params


@pytest.mark.parametrize("command", ["save", "restore", "undo"])
def test_every_line_the_reader_takes_reads_as_click_reads_it(command: str) -> None:
    taken = 0
    for n in range(4):
        for words in itertools.product(TOKENS, repeat=n):
            call = direct.parse(CommandLine([command, *words]))
            if call is not None:
                taken += 1
                assert clicks([command, *words]) == call.params, words
    assert taken > 50


# --- both paths say the same (held) ---------------------------------------------------------


@pytest.mark.parametrize(
    ("setup", "args"),
    [
        ("bad: [\n", ("save", "--json")),  # exit 2, the error object
        ("bad: [\n", ("restore", "cp_009")),  # a warning, then the unknown checkpoint
        ("bad: [\n", ("undo", "--json")),
        ("", ("restore", "--dry-run", "cp_001")),
    ],
)
def test_the_direct_and_the_click_path_print_the_same(
    repo: Repo, setup: str, args: tuple[str, ...]
) -> None:
    repo.write("new.txt", "new\n")
    repo.cp("save", "-m", "one")
    repo.write("new.txt", "changed\n")
    if setup:
        repo.write(".checkpoint.yaml", setup)
    fast = launch(repo, *args)
    slow = launch(repo, *args, "--")  # `--`: left to click, with the same parameters
    assert direct.parse(CommandLine(list(args))) is not None
    assert direct.parse(CommandLine([*args, "--"])) is None
    assert (fast.returncode, fast.stdout, fast.stderr) == (
        slow.returncode,
        slow.stdout,
        slow.stderr,
    )
    assert fast.returncode == 2 or "--dry-run" in args
    assert scratch(repo) == []


def test_python_m_runs_the_direct_path(repo: Repo) -> None:
    repo.write("new.txt", "new\n")
    proc = subprocess.run(
        [sys.executable, "-m", "git_checkpoint", "save", "-mviam", "--json"],
        cwd=repo.path, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["checkpoint_id"] == "cp_001"
    assert "viam" in repo.git("log", "-1", "--format=%B", "refs/checkpoints/main/cp_001")


# --- Ctrl-C ---------------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["save", "restore"])
def test_ctrl_c_at_startup_is_one_line_and_leaves_no_scratch_folder(
    repo: Repo, tmp_path: Path, command: str
) -> None:
    """SIGINT while the launcher starts the early scan (here: sent by the scan's own
    status as it starts). Found: early.start lets KeyboardInterrupt through (it catches
    OSError and ValueError only), outside launch.main's try: a Python traceback, killed
    by SIGINT (-2) instead of exit 130, and <git dir>/checkpoint-*/ with the index
    copies left behind; doctor calls that `nothing left over` for an hour."""
    repo.write("new.txt", "new\n")
    repo.cp("save", "-m", "one")
    repo.write("new.txt", "changed\n")
    env = wrapper_env(tmp_path, 'case " $* " in *" status "*) kill -INT $PPID;; esac')
    proc = launch(repo, command, env=env)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert (proc.returncode, proc.stderr) == (130, "git checkpoint: interrupted\n")
    assert scratch(repo) == []


def test_ctrl_c_while_the_scan_is_read_waits_for_its_git_children(
    repo: Repo, tmp_path: Path
) -> None:
    """SIGINT while the save waits for ls-files -v, status still running. Found (e9b412d):
    Early.results empties `children` before it waits for them, so close() waits for none:
    the command exits 130 (its scratch folder removed) while its `git status` still runs,
    an orphan on an index copy that is gone and past the released lock. console.entry
    promises every child is done by the exit."""
    repo.write("new.txt", "new\n")
    mark = tmp_path / "status-done"
    body = (
        'case " $* " in *" ls-files "*) sleep 1.5; kill -INT $PPID;; esac\n'
        'case " $* " in *" status "*) sleep 3; "$REAL" "$@"; rc=$?; touch "$MARK"; exit $rc;;'
        " esac"
    )
    proc = launch(repo, "save", env=wrapper_env(tmp_path, body, REAL=REAL_GIT, MARK=str(mark)))
    assert (proc.returncode, proc.stderr) == (130, "git checkpoint: interrupted\n")
    assert mark.exists(), "git-checkpoint exited while its git status still ran"


# --- closed and full standard streams -------------------------------------------------------


def test_save_with_stderr_closed_still_saves(repo: Repo) -> None:
    """Found: `git-checkpoint save 2>&-` fails, exit 4, nothing saved: slow_notice asks
    sys.stderr.isatty() and sys.stderr is None (console.echo allows for that; this does
    not). Through `git checkpoint` git reopens fd 2 on /dev/null, hooks and agents that
    run git-checkpoint itself do not."""
    repo.write("new.txt", "new\n")
    proc = launch(repo, "save", "-m", "quiet", redirect="2>&-")
    assert proc.returncode == 0, proc.stdout
    assert proc.stdout == "checkpoint saved: cp_001\n"


@pytest.mark.parametrize("in_repo", [True, False])
def test_json_with_stdout_closed_gives_no_traceback(
    repo: Repo, tmp_path: Path, in_repo: bool
) -> None:
    """Found: `save --json >&-`: emit (and fail, for the error object) call
    sys.stdout.write with sys.stdout None: AttributeError, then a traceback, exit 1.
    The same line without --json exits 0 (saved) or 2 (not a repository)."""
    repo.write("new.txt", "new\n")
    where = repo if in_repo else Repo(tmp_path)
    proc = launch(where, "save", "--json", redirect=">&-")
    plain = launch(where, "save", redirect=">&-")
    assert "Traceback" not in proc.stderr, proc.stderr
    assert proc.returncode == (0 if in_repo else 2) == plain.returncode


@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_json_error_object_on_a_full_disk(repo: Repo, tmp_path: Path, stream: str) -> None:
    """Unbuffered output (PYTHONUNBUFFERED=1, which the venv's console script honours).
    stdout on /dev/full: fail() writes the error object to the stdout that just failed
    and the OSError escapes: a traceback, exit 1 (not 4). stderr on /dev/full outside a
    repository: fail() writes stderr first, raises, and the one JSON object --json
    promises never reaches the (good) stdout: exit 1, stdout empty."""
    unbuffered = {"PYTHONUNBUFFERED": "1"}
    if stream == "stdout":
        repo.write("new.txt", "new\n")
        proc = launch(repo, "save", "--json", redirect=">/dev/full", env=unbuffered)
        assert "Traceback" not in proc.stderr, proc.stderr
        assert proc.returncode == 4
    else:
        proc = launch(Repo(tmp_path), "save", "--json", redirect="2>/dev/full", env=unbuffered)
        assert proc.returncode == 2, proc.stdout
        assert json.loads(proc.stdout)["exit_code"] == 2


# --- input --------------------------------------------------------------------------------


def test_a_message_that_is_not_utf8_is_saved_or_refused_in_one_line(repo: Repo) -> None:
    """Found (older than these commits, on both paths): `save -m $'\\xff'` reaches
    gitio.commit_tree's message.encode(): `internal error: UnicodeEncodeError`, exit 4.
    test_direct.py reads such a message on purpose; the save should keep it (as git
    keeps any bytes) or refuse it with exit 2."""
    repo.write("new.txt", "new\n")
    proc = launch(repo, "save", "-m", "caf\udce9")
    assert "internal error" not in proc.stderr, proc.stderr
    assert proc.returncode in (0, 2)
    assert scratch(repo) == []


# --- the scratch folder ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ("save", "-m", "x"),
        ("save", "--task", "a b"),  # refused after the scan started
        ("save", "--include", "missing"),
        ("save", "--bogus"),  # click's error, the scan started all the same
        ("restore", "cp_001"),
        ("restore", "cp_404"),
        ("undo",),
    ],
)
def test_no_scratch_folder_is_left(repo: Repo, args: tuple[str, ...]) -> None:
    repo.write("new.txt", "new\n")
    repo.cp("save", "-m", "one")
    repo.write("new.txt", "changed\n")
    repo.cp("restore", expect=None)
    repo.cp("undo", expect=None)
    proc = launch(repo, *args)
    assert "Traceback" not in proc.stderr and not re.search("internal error", proc.stderr)
    assert scratch(repo) == []
