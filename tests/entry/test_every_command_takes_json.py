"""Every command, group and subcommand takes --json (design.md §7). `guard` prints what
it did as one JSON object and sends its command's stdout to stderr, as `run --json`
does; its options are the ones before the command. `mcp`, whose stdout is JSON-RPC,
refuses --json in one JSON error object. A group given --json passes it on to its
subcommand."""

from __future__ import annotations

import json
from typing import Any

import click

from git_checkpoint.entry.cli import cli

from ..conftest import Repo


def _everything(group: click.Group, prefix: str = "") -> dict[str, click.Command]:
    found: dict[str, click.Command] = {}
    for name, command in group.commands.items():
        found[f"{prefix}{name}"] = command
        if isinstance(command, click.Group):
            found.update(_everything(command, f"{prefix}{name} "))
    return found


def one_object(stdout: str) -> dict[str, Any]:
    assert stdout.count("\n") == 1 and stdout.endswith("\n"), stdout
    data = json.loads(stdout)
    assert isinstance(data, dict)
    return data


def test_every_command_and_group_declares_json() -> None:
    missing = [
        name
        for name, command in _everything(cli).items()
        if not any("--json" in getattr(p, "opts", ()) for p in command.params)
    ]
    assert missing == []


def test_guard_json_is_one_object_and_the_command_runs_beside_it(repo: Repo) -> None:
    proc = repo.cp("guard", "--json", "--", "echo", "from the command")
    assert one_object(proc.stdout) == {
        "argv": ["echo", "from the command"],
        "line": "echo 'from the command'",
        "risky": False,
        "reason": "",
        "said": [],
    }
    assert proc.stderr == "from the command\n"
    assert repo.git("for-each-ref", "refs/checkpoints") == ""


def test_guard_json_says_what_it_saved_before_a_risky_command(repo: Repo) -> None:
    repo.write("scratch.txt", "work\n")
    proc = repo.cp("guard", "--json", "--", "rm", "-rf", "scratch.txt")
    said = one_object(proc.stdout)
    assert said["risky"] is True and said["argv"] == ["rm", "-rf", "scratch.txt"]
    assert any("cp_001" in line for line in said["said"])
    assert not (repo.path / "scratch.txt").exists()
    message = repo.git("log", "-1", "--format=%s", "refs/checkpoints/main/cp_001")
    assert "--json" not in message and "rm -rf scratch.txt" in message


def test_guard_takes_no_option_of_its_commands_as_its_own(repo: Repo) -> None:
    proc = repo.cp("guard", "--", "echo", "--json")
    assert proc.stdout == "--json\n"
    proc = repo.cp("guard", "echo", "--json")  # without --: from the first word on
    assert proc.stdout == "--json\n"
    refused = repo.cp("guard", "--no-such-option", "--", "echo", "ran", expect=2)
    assert "ran" not in refused.stdout and "--no-such-option" in refused.stderr


def test_run_takes_its_options_before_the_command_only(repo: Repo) -> None:
    refused = repo.cp("run", "--no-such-option", "--", "true", expect=2)
    assert "No such option" in refused.stderr
    assert repo.git("for-each-ref", "refs/checkpoints") == ""


def test_mcp_refuses_json_in_one_json_error(repo: Repo) -> None:
    proc = repo.cp("mcp", "--json", expect=2)
    error = one_object(proc.stdout)
    assert error["exit_code"] == 2 and "JSON-RPC" in str(error["error"])


def test_a_group_passes_json_on_to_its_subcommand(repo: Repo) -> None:
    status = one_object(repo.cp("hooks", "--json", "status").stdout)
    assert status == one_object(repo.cp("hooks", "status", "--json").stdout)
    first = one_object(repo.cp("task", "--json", "set", "--next", "try again").stdout)
    second = one_object(repo.cp("task", "set", "--json", "--next", "try again").stdout)
    for recorded in (first, second):  # the two are recorded at their own times
        assert isinstance(recorded["record"], dict)
        assert recorded["record"].pop("updated_at")
    assert first == second
    for group in ("hooks", "task"):
        error = one_object(repo.cp(group, "--json", expect=2).stdout)
        assert error["exit_code"] == 2


def test_init_and_completion_print_one_json_object(repo: Repo) -> None:
    written = one_object(repo.cp("init", "--no-hooks", "--json").stdout)
    assert (repo.path / ".checkpoint.yaml").exists() and written
    assert one_object(repo.cp("completion", "bash", "--json").stdout)["shell"] == "bash"
