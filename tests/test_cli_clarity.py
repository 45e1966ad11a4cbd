"""A clearer CLI (issue 11 §6): JSON errors for every command, diff --stat/--name-only,
quoted names, run feedback, resume's resolved verifiers, verify naming what it saved.
"""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest

from git_checkpoint.entry.cli import cli

from .conftest import Repo


def _leaves(group: click.Group, prefix: str = "") -> list[str]:
    out = []
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            out += _leaves(command, f"{prefix}{name} ")
        elif name not in ("mcp", "guard"):  # mcp speaks JSON-RPC; guard runs its CMD as is
            out.append(f"{prefix}{name}")
    return out


COMMANDS = _leaves(cli)


@pytest.mark.parametrize("command", COMMANDS)
def test_json_errors_are_one_object_on_stdout(repo: Repo, command: str) -> None:
    proc = repo.cp(*command.split(), "--json", "--no-such-option", expect=2)
    error = json.loads(proc.stdout)
    assert error["exit_code"] == 2
    if command != "run":  # run passes unknown options to its command
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


def test_show_list_status_escape_names_and_text(repo: Repo) -> None:
    repo.write("tab\tname.txt", "x\n")
    repo.write("caf\u00e9.txt", "y\n")
    repo.cp("save", "-m", "evil \x1b[31mred\x1b[0m", "--hypothesis", "bell\x07")
    listed = repo.cp("list").stdout
    assert "\x1b" not in listed and "evil \\033[31mred\\033[0m" in listed
    shown = repo.cp("show").stdout
    assert "\x1b" not in shown and "\x07" not in shown
    assert '  "tab\\tname.txt"' in shown
    assert '  "caf\\303\\251.txt"' in shown  # octal bytes, as git's core.quotePath does
    assert "hypothesis: bell\\a" in shown
    assert repo.cp_json("list")["checkpoints"][0]["message"] == "evil \x1b[31mred\x1b[0m"
    repo.write("tab\tname.txt", "changed\n")
    assert '  "tab\\tname.txt"' in repo.cp("status").stdout


def test_resume_marks_a_failing_verifier_resolved(repo: Repo) -> None:
    repo.write(".checkpoint.yaml", "verifiers:\n  - {name: unit, command: 'test -f fixed'}\n")
    repo.commit_all("verifier")
    repo.cp("verify", expect=1)  # saves cp_001 and fails on it
    brief = repo.cp_json("resume")
    assert brief["last_failing_verifier"]["name"] == "unit"
    assert brief["last_failing_verifier_resolved_by"] is None
    assert "resolved" not in repo.cp("resume").stdout
    repo.write("fixed", "yes\n")
    repo.cp("verify")  # saves cp_002 and passes
    brief = repo.cp_json("resume")
    assert brief["last_failing_verifier_resolved_by"] == "cp_002"
    assert "last failing verifier: unit (exit 1 on cp_001), resolved: it passed on cp_002" in (
        repo.cp("resume").stdout
    )


def test_verify_without_a_checkpoint_says_which_it_saved(repo: Repo) -> None:
    repo.write(".checkpoint.yaml", "verifiers:\n  - {name: unit, command: 'true'}\n")
    repo.commit_all("verifier")
    out = repo.cp("verify").stdout.splitlines()
    assert out[0] == "checkpoint saved: cp_001"
    assert out[-1] == "status: main/cp_001 promoted"
    assert repo.cp("verify").stdout.splitlines()[0] == "unchanged since cp_001"
    repo.write("src/app.py", "print(3)\n")
    proc = repo.cp("verify", "--json")
    assert "checkpoint saved: cp_002" in proc.stderr
    assert json.loads(proc.stdout)["saved"] is True
    assert repo.cp_json("verify", "cp_001")["saved"] is None  # named: nothing saved


AGENT = """\
import os, pathlib, shutil, sys
attempt = os.environ["CHECKPOINT_ATTEMPT"]
shutil.copy(os.environ["CHECKPOINT_FEEDBACK"], sys.argv[1] + f"/feedback-{attempt}.json")
pathlib.Path("bad").write_text("lint will complain\\n")
if attempt == "2":
    pathlib.Path("good").write_text("fixed\\n")
"""


def test_run_feedback_carries_optional_failures_and_changed_files(
    repo: Repo, tmp_path: Path
) -> None:
    repo.write(
        ".checkpoint.yaml",
        "verifiers:\n"
        "  - {name: unit, command: 'test -f good'}\n"
        "  - {name: lint, command: 'test ! -f bad', required: false}\n",
    )
    repo.commit_all("verifiers")
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    repo.cp("run", "--attempts", "2", "--", "python3", str(agent), str(tmp_path))
    seen = json.loads((tmp_path / "feedback-2.json").read_text())  # what attempt 2 read
    assert [(f["name"], f["required"]) for f in seen["failed_verifiers"]] == [
        ("unit", True),
        ("lint", False),
    ]
    assert seen["changed_files"] == ["bad"]
    after = json.loads((repo.path / ".git/checkpoint/feedback/main.json").read_text())
    assert [f["name"] for f in after["failed_verifiers"]] == ["lint"]  # passed, lint did not
    assert after["changed_files"] == ["bad", "good"]
