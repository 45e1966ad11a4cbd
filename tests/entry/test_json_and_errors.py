"""--json everywhere and the errors around it: every command prints one JSON object,
errors are one object on stdout with their exit code, an agent's own `--json` after
`--` is not ours, and without --json an error is one line on stderr (a traceback only
with GIT_CHECKPOINT_DEBUG)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import click
import pytest

from git_checkpoint.entry.cli import cli

from ..conftest import Repo
from ..helpers import one_line_error


def _leaves(group: click.Group, prefix: str = "") -> list[str]:
    out = []
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            out += _leaves(command, f"{prefix}{name} ")
        else:
            out.append(f"{prefix}{name}")
    return out


COMMANDS = _leaves(cli)


@pytest.mark.parametrize("command", COMMANDS)
def test_json_errors_are_one_object_on_stdout(repo: Repo, command: str) -> None:
    """guard and run included: the options before their CMD are ours."""
    proc = repo.cp(*command.split(), "--json", "--no-such-option", expect=2)
    error = json.loads(proc.stdout)
    assert error["exit_code"] == 2
    assert "--no-such-option" in error["error"]
    assert proc.stderr.strip().endswith("-h)")  # the hint says -h, as git does


def test_json_domain_errors_carry_their_exit_code(repo: Repo, tmp_path: Path) -> None:
    proc = repo.cp("show", "cp_404", "--json", expect=2)
    assert json.loads(proc.stdout) == {
        "error": "unknown checkpoint 'cp_404' in task 'main'; no checkpoints yet "
        "(git checkpoint save)",
        "exit_code": 2,
    }
    outside = tmp_path / "plain"
    outside.mkdir()
    proc = repo.cp("list", "--json", cwd=outside, expect=2)
    assert json.loads(proc.stdout)["error"].startswith("not inside a git work tree")
    # Without --json stdout stays empty: the error is on stderr only.
    assert repo.cp("show", "cp_404", expect=2).stdout == ""


def test_agent_json_flag_after_double_dash_is_not_ours(repo: Repo) -> None:
    proc = repo.cp("run", "--attempts", "0", "--", "echo", "--json", expect=2)
    assert proc.stdout == ""


def test_every_command_prints_one_json_object(repo: Repo) -> None:
    def check(*args: str) -> dict:
        proc = repo.cp(*args, "--json")
        data = json.loads(proc.stdout)  # the whole of stdout is one JSON value
        assert isinstance(data, dict)
        assert proc.stdout.count("\n") == 1 and proc.stdout.endswith("\n")
        return data

    check("list")
    check("log")
    repo.write("README.md", "a\n")
    repo.write(".env", "S=1\n")
    repo.write("new.txt", "n\n")
    assert check("save", "-m", "x")["created"] is True
    assert check("save")["created"] is False
    repo.write("README.md", "b\n")
    check("save")
    check("list")
    check("list", "--all")
    check("show")
    check("show", "cp_001", "--manifest")
    check("show", "cp_001", "--patch")
    check("diff")
    check("diff", "cp_001", "cp_002")
    check("diff", "cp_002", "cp_002")
    check("log")
    check("drop", "cp_002")


def test_outside_a_repository(tmp_path: Path) -> None:
    outside = tmp_path / "nowhere"
    outside.mkdir()
    env = {"GIT_CEILING_DIRECTORIES": str(tmp_path)}
    probe = Repo(outside)
    for args in (["save"], ["list"], ["log", "--json"], ["show", "cp_001"]):
        proc = probe.cp(*args, expect=2, env=env)
        assert "not" in one_line_error(proc.stderr).lower()
        if "--json" in args:  # the error is one JSON object on stdout too (design §7)
            assert json.loads(proc.stdout)["exit_code"] == 2
        else:
            assert proc.stdout == ""


@pytest.mark.parametrize("where", ["bare", "git-dir"])
def test_no_work_tree_is_bad_usage(repo: Repo, tmp_path: Path, where: str) -> None:
    if where == "bare":
        cwd = tmp_path / "bare.git"
        subprocess.run(["git", "init", "-q", "--bare", str(cwd)], check=True)
    else:
        cwd = repo.path / ".git"
    proc = repo.cp("list", expect=2, cwd=cwd)
    assert "work tree" in one_line_error(proc.stderr)


def test_debug_shows_traceback(tmp_path: Path) -> None:
    outside = tmp_path / "nowhere"
    outside.mkdir()
    env = {"GIT_CEILING_DIRECTORIES": str(tmp_path), "GIT_CHECKPOINT_DEBUG": "1"}
    proc = Repo(outside).cp("list", expect=None, env=env)
    assert proc.returncode != 0
    assert "Traceback" in proc.stderr


def test_bad_option_is_usage_error(repo: Repo) -> None:
    proc = repo.cp("save", "--no-such-flag", expect=2)
    assert "Traceback" not in proc.stderr
    proc = repo.cp("log", "-n", "0", expect=2)
    assert "Traceback" not in proc.stderr
