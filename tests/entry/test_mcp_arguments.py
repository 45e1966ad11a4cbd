"""`git checkpoint mcp`: every tool's input schema says what it takes and nothing more
(`additionalProperties: false`), and a bad argument (a wrong type, a missing one, a value
out of range, one the tool does not take) is answered like any other bad input: a tool
error whose text is `{"error", "exit_code": 2, "meaning"}`, its error one line that names
the argument. Nothing runs on such a call."""

from __future__ import annotations

import pytest

from ..conftest import Repo

mcp = pytest.importorskip("mcp", reason="the mcp extra is not installed")

from .mcp_session import payload, session  # noqa: E402

BAD_CALLS = [
    ("restore", {"checkpoint": "cp_001", "dry_run": "false"}, "argument 'dry_run'"),
    ("restore", {"checkpoint": "cp_001", "dryrun": False}, "unknown argument 'dryrun'"),
    ("save", {"message": 3}, "argument 'message'"),
    ("save", {"message": "m", "include": "tmp/"}, "argument 'include'"),
    ("verify", {"verifiers": ["unit", 3]}, "argument 'verifiers.1'"),
    ("promote", {}, "argument 'checkpoint' is required"),
    ("drop", {"checkpoints": []}, "argument 'checkpoints'"),
    ("log", {"limit": 0}, "argument 'limit'"),
    ("restore", {"before_turn": 1.5}, "argument 'before_turn'"),
    ("status", {"repo": ["."]}, "argument 'repo'"),
    ("list", {"all": True}, "unknown argument 'all'"),
]


def test_every_input_schema_takes_only_what_it_names(repo: Repo) -> None:
    tools, _ = session(repo.path, [])
    for tool in tools.values():
        schema = tool.input_schema
        assert schema["type"] == "object" and schema["additionalProperties"] is False, tool.name
        assert "repo" in schema["properties"], tool.name  # every tool can name its repository
        assert "roots" not in schema["properties"]  # filled from the client, never by the caller


def test_bad_arguments_answer_the_error_object_and_change_nothing(repo: Repo) -> None:
    repo.write("src/app.py", "print('saved')\n")
    repo.cp("save", "-m", "saved")
    repo.write("src/app.py", "print('changed')\n")
    refs = repo.git("for-each-ref", "refs/checkpoints")
    _, results = session(repo.path, [(tool, args) for tool, args, _ in BAD_CALLS])
    for (tool, args, named), result in zip(BAD_CALLS, results, strict=True):
        assert result.is_error, (tool, args)
        error = payload(result)
        assert set(error) == {"error", "exit_code", "meaning"}
        assert (error["exit_code"], error["meaning"]) == (2, "bad usage or bad input")
        assert error["error"].startswith(f"{tool}: ") and named in error["error"], error
        assert "\n" not in error["error"]
        assert result.structured_content is None  # an error is no answer of the schema's
    assert (repo.path / "src/app.py").read_text() == "print('changed')\n"  # no restore ran
    assert repo.git("for-each-ref", "refs/checkpoints") == refs  # no save, no drop


def test_an_unknown_argument_is_named_with_those_the_tool_takes(repo: Repo) -> None:
    _, (result,) = session(repo.path, [("undo", {"task": "main", "force": True})])
    error = payload(result)["error"]
    assert error == (
        "undo: unknown argument 'force' (undo takes: task, move_head, keep_head, repo)"
    )


def test_values_the_command_refuses_are_bad_input_too(repo: Repo) -> None:
    _, results = session(
        repo.path,
        [
            ("task_set", {"task": "main"}),  # as `task set` without --hypothesis or --next
            ("show", {"checkpoint": "cp_404"}),
            ("no_such_tool", {}),
        ],
    )
    nothing, unknown_checkpoint, unknown_tool = (payload(r) for r in results)
    assert all(r.is_error for r in results)
    assert nothing["exit_code"] == 2 and "hypothesis and/or next_move" in nothing["error"]
    assert unknown_checkpoint["exit_code"] == 2
    assert "unknown checkpoint 'cp_404'" in unknown_checkpoint["error"]
    assert unknown_tool["exit_code"] == 2 and "'no_such_tool'" in unknown_tool["error"]
