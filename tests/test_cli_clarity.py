"""A clearer CLI (issue 11 §6): JSON errors for every command, diff --stat/--name-only,
quoted names, run feedback, resume's resolved verifiers, verify naming what it saved.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from git_checkpoint.cli import cli

from .conftest import Repo

COMMANDS = [*sorted(name for name in cli.commands if name != "task"), "task set"]


@pytest.mark.parametrize("command", COMMANDS)
def test_json_errors_are_one_object_on_stdout(repo: Repo, command: str) -> None:
    proc = repo.cp(*command.split(), "--json", "--no-such-option", expect=2)
    error = json.loads(proc.stdout)
    assert error["exit_code"] == 2
    if command not in ("run", "guard"):  # these pass unknown options to their command
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


def test_diff_stat_and_name_only(repo: Repo) -> None:
    repo.cp("save")
    repo.write("src/app.py", "print('changed')\nprint('more')\n")
    repo.write("new\tname.txt", "tab in the name\n")
    stat = repo.cp("diff", "--stat").stdout
    assert "src/app.py" in stat and "2 files changed" in stat
    assert "@@" not in stat
    names = repo.cp("diff", "--name-only").stdout.splitlines()
    assert names == ['"new\\tname.txt"', "src/app.py"]  # quoted the way git quotes it
    data = repo.cp_json("diff", "--name-only")
    assert [f["path"] for f in data["files"]] == ["new\tname.txt", "src/app.py"]
    assert data["patch"] == "" and data["form"] == "name-only"
    err = repo.cp("diff", "--stat", "--name-only", expect=2).stderr
    assert "exclude each other" in err
    patch = repo.cp("diff").stdout
    assert "+print('more')" in patch
