"""`diff`, `show`, `log` and `review` page their output on a terminal as git pages its
own: the pager is GIT_PAGER, else pager.checkpoint when it names a command, else
core.pager, else PAGER, else less, with LESS=FRX and LV=-c when unset; none with
--json, off a terminal, with `--no-pager`/`-P` (ours or git's), `cat` or an empty pager,
pager.checkpoint=false, or under a pager already started (GIT_PAGER_IN_USE). A pager the
user leaves early ends the command quietly, exit 0.

Each command runs as a user runs it, `git checkpoint …` on a pseudo-terminal; the pagers
are scripts that record what they were given.
"""

from __future__ import annotations

import os
import pty
import select
import subprocess
import time
from pathlib import Path

import pytest

from ..conftest import Repo

PAGED = [["diff", "cp_001"], ["show"], ["log"], ["review"]]


class Pagers:
    """Pager scripts in a folder: each records its name and environment when it starts,
    and what it reads."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir()

    def make(self, name: str, body: str = 'cat >> "$0.read"') -> str:
        script = self.folder / name
        script.write_text(
            "#!/bin/sh\n"
            'echo "LESS=${LESS-unset} LV=${LV-unset} IN_USE=${GIT_PAGER_IN_USE-unset}"'
            ' >> "$0.started"\n'
            f"{body}\n"
        )
        script.chmod(0o755)
        return str(script)

    def starts(self, name: str) -> list[str]:
        log = self.folder / f"{name}.started"
        return log.read_text().splitlines() if log.exists() else []

    def read(self, name: str) -> str:
        log = self.folder / f"{name}.read"
        return log.read_text() if log.exists() else ""


@pytest.fixture
def pagers(tmp_path: Path) -> Pagers:
    return Pagers(tmp_path / "pagers")


@pytest.fixture
def work(repo: Repo) -> Repo:
    repo.cp("save", "-m", "first")
    repo.write("src/app.py", "print('changed')\n")
    repo.write("notes.txt", "new\n")
    repo.cp("save", "-m", "second")
    return repo


def on_terminal(
    repo: Repo, *argv: str, env: dict[str, str] | None = None, timeout: float = 60
) -> tuple[int, str]:
    """Run `git ARGV` with stdin, stdout and stderr on a pseudo-terminal; its exit code
    and all it showed there."""
    full_env = {k: v for k, v in os.environ.items() if k not in ("GIT_PAGER", "PAGER")}
    full_env.update(env or {})
    master, slave = pty.openpty()
    proc = subprocess.Popen(
        ["git", *argv], cwd=repo.path, stdin=slave, stdout=slave, stderr=slave, env=full_env
    )
    os.close(slave)
    shown = b""
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1)
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: every writer to the terminal is gone
                break
            if not data:
                break
            shown += data
        else:
            proc.kill()
            raise AssertionError(f"git {argv} still running after {timeout}s: {shown[-500:]!r}")
    finally:
        os.close(master)
    return proc.wait(timeout=timeout), shown.decode(errors="replace").replace("\r\n", "\n")


@pytest.mark.parametrize("command", PAGED, ids=[c[0] for c in PAGED])
def test_the_long_outputs_go_through_the_pager_on_a_terminal(
    work: Repo, pagers: Pagers, command: list[str]
) -> None:
    pager = pagers.make("pager")
    code, shown = on_terminal(work, "checkpoint", *command, env={"GIT_PAGER": pager})
    assert code == 0, shown
    plain = work.cp(*command).stdout  # off a terminal: as it is, no pager
    assert plain and pagers.read("pager") == plain
    assert shown == ""  # all of it went to the pager
    # git's LESS and LV, and no GIT_PAGER_IN_USE for the pager itself
    assert pagers.starts("pager") == ["LESS=FRX LV=-c IN_USE=unset"]


def test_a_pager_setting_of_the_user_wins_over_gits_defaults(work: Repo, pagers: Pagers) -> None:
    pager = pagers.make("pager")
    env = {"GIT_PAGER": pager, "LESS": "-S", "LV": ""}
    assert on_terminal(work, "checkpoint", "show", env=env)[0] == 0
    assert pagers.starts("pager") == ["LESS=-S LV= IN_USE=unset"]


def test_the_pager_is_chosen_as_git_chooses_it(work: Repo, pagers: Pagers) -> None:
    """GIT_PAGER, else pager.checkpoint naming a command, else core.pager, else PAGER,
    else `less` from PATH: each taken away in turn, the next one pages."""
    names = ("env", "per-command", "core", "pager", "less")
    for name in names:
        pagers.make(name)
    work.git("config", "core.pager", str(pagers.folder / "core"))
    work.git("config", "pager.checkpoint", str(pagers.folder / "per-command"))
    env = {
        "GIT_PAGER": str(pagers.folder / "env"),
        "PAGER": str(pagers.folder / "pager"),
        "PATH": f"{pagers.folder}{os.pathsep}{os.environ['PATH']}",
    }
    chosen = []
    for taken_away in (None, "GIT_PAGER", "pager.checkpoint", "core.pager", "PAGER"):
        if taken_away in env:
            del env[taken_away]
        elif taken_away is not None:
            work.git("config", "--unset", taken_away)
        before = {name: len(pagers.starts(name)) for name in names}
        assert on_terminal(work, "checkpoint", "log", env=env)[0] == 0
        chosen += [name for name in names if len(pagers.starts(name)) > before[name]]
    assert chosen == list(names)


@pytest.mark.parametrize(
    ("argv", "env", "config"),
    [
        (["checkpoint", "show", "--json"], {}, {}),
        (["checkpoint", "review", "--format", "json"], {}, {}),
        (["checkpoint", "--no-pager", "show"], {}, {}),
        (["checkpoint", "-P", "show"], {}, {}),
        (["--no-pager", "checkpoint", "show"], {}, {}),
        (["checkpoint", "show"], {"GIT_PAGER": "cat"}, {}),
        (["checkpoint", "show"], {"GIT_PAGER": ""}, {}),
        (["checkpoint", "show"], {"GIT_PAGER_IN_USE": "true"}, {}),
        (["checkpoint", "show"], {}, {"core.pager": "cat"}),
        (["checkpoint", "show"], {}, {"pager.checkpoint": "false"}),
        (["checkpoint", "status"], {}, {}),
    ],
    ids=[
        "json",
        "review-format-json",
        "no-pager",
        "P",
        "git-no-pager",
        "GIT_PAGER-cat",
        "GIT_PAGER-empty",
        "pager-in-use",
        "core.pager-cat",
        "pager.checkpoint-false",
        "status-is-not-paged",
    ],
)
def test_no_pager_when_git_would_start_none(
    work: Repo, pagers: Pagers, argv: list[str], env: dict[str, str], config: dict[str, str]
) -> None:
    pager = pagers.make("pager")
    path = f"{pagers.folder}{os.pathsep}{os.environ['PATH']}"
    pagers.make("less")  # the default, were it chosen
    for key, value in config.items():
        work.git("config", key, value)
    run_env = {"PAGER": pager, "PATH": path, **env}
    code, shown = on_terminal(work, *argv, env=run_env)
    assert code == 0, shown
    assert pagers.starts("pager") == [] and pagers.starts("less") == []
    assert shown.strip()  # straight to the terminal


def test_off_a_terminal_no_pager_starts(work: Repo, pagers: Pagers) -> None:
    pager = pagers.make("pager")
    for command in PAGED:
        assert work.cp(*command, env={"GIT_PAGER": pager}).stdout
    assert pagers.starts("pager") == []


def test_under_a_pager_git_started_no_second_one_starts(work: Repo, pagers: Pagers) -> None:
    """`git -p checkpoint show` (or pager.checkpoint=true): git starts the pager and
    runs us into it with GIT_PAGER_IN_USE set."""
    pager = pagers.make("pager")
    code, shown = on_terminal(work, "-p", "checkpoint", "show", env={"GIT_PAGER": pager})
    assert code == 0, shown
    assert len(pagers.starts("pager")) == 1
    assert pagers.read("pager") == work.cp("show").stdout


@pytest.mark.parametrize("body", ["exit 0", "head -n 2 >/dev/null", "read line"])
def test_a_pager_left_early_ends_the_command_quietly(work: Repo, pagers: Pagers, body: str) -> None:
    """A pager the user quits (q) before the end: the rest of the output has nowhere to
    go. No traceback, no error, exit 0, as with git."""
    work.write("big.txt", "".join(f"line {n}\n" for n in range(60_000)))
    pager = pagers.make("quits", body)
    code, shown = on_terminal(work, "checkpoint", "diff", env={"GIT_PAGER": pager})
    assert code == 0, shown
    assert shown == ""
