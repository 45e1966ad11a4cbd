"""`git checkpoint mcp`: the tool list is the command line's verbs, and every tool answers
structured content that validates against the output schema it declares (derived from
the result's dataclass), with the same JSON in a text block for clients that read text
only; that object is the one `git checkpoint <command> --json` prints."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ..conftest import Repo

mcp = pytest.importorskip("mcp", reason="the mcp extra is not installed")

from jsonschema.validators import validator_for  # noqa: E402
from mcp import Client  # noqa: E402
from mcp.types import CallToolResult, Tool  # noqa: E402

from .mcp_session import payload, run_client  # noqa: E402

TOOLS = {
    "save", "list", "list_sessions", "show", "diff", "restore", "undo", "verify", "promote",
    "status", "resume", "review", "log", "task_set", "drop", "scan", "push", "fetch",
    "evidence", "bisect",
}  # fmt: skip


def with_a_verifier_and_a_remote(repo: Repo, tmp_path: Path) -> None:
    repo.write(".checkpoint.yaml", "verifiers:\n  - {name: unit, command: 'test ! -f broken'}\n")
    repo.commit_all("verifier")
    remote = tmp_path / "remote.git"
    repo.git("init", "-q", "--bare", str(remote))
    repo.git("remote", "add", "origin", str(remote))


def test_every_tool_answers_what_its_output_schema_declares(repo: Repo, tmp_path: Path) -> None:
    with_a_verifier_and_a_remote(repo, tmp_path)
    answers: dict[str, list[CallToolResult]] = {}

    async def body(client: Client) -> dict[str, Tool]:
        async def call(tool: str, **args: Any) -> Any:
            result = await client.call_tool(tool, args)  # the client validates it too
            assert not result.is_error, (tool, result.content)
            answers.setdefault(tool, []).append(result)
            return result.structured_content

        tools = {t.name: t for t in (await client.list_tools()).tools}
        await call("save", message="passes")
        assert (await call("verify"))["status"] == "promoted"
        repo.write("broken", "an attempt that fails\n")
        await call("save", message="fails", hypothesis="the marker breaks it")
        assert (await call("verify"))["exit_code"] == 1  # a "no", not an error
        assert (await call("bisect"))["first_bad"] == "main/cp_002"
        await call("evidence", commit="HEAD")
        await call("list", all_tasks=True)
        await call("list_sessions")
        await call("show", checkpoint="cp_001", patch=True)
        await call("diff", checkpoint="cp_001", stat=True)
        await call("status")
        await call("resume")
        await call("review")
        await call("task_set", next_move="remove the marker")
        await call("scan", checkpoint="cp_002")
        await call("promote", checkpoint="cp_002", force=True, reason="accepted as is")
        assert (await call("push"))["pushed"]
        await call("fetch", prune=True)
        assert (await call("restore", checkpoint="cp_001"))["would_bring_back"] == []
        assert (await call("restore", checkpoint="cp_001"))["would_remove"] == ["broken"]
        assert (await call("restore", checkpoint="cp_001", dry_run=False))["removed"]
        await call("undo")
        await call("drop", checkpoints=["cp_002"])
        await call("log", limit=3)
        return tools

    tools = run_client(repo.path, body)
    assert set(tools) == TOOLS
    assert set(answers) == TOOLS  # each one called
    for name, results in answers.items():
        schema = tools[name].output_schema
        assert schema is not None and schema["type"] == "object", name
        validator = validator_for(schema)(schema)
        for result in results:
            assert result.structured_content == payload(result)  # the text block: the same
            errors = [e.message for e in validator.iter_errors(result.structured_content)]
            assert errors == [], (name, errors)


def test_the_answer_is_the_object_json_prints(repo: Repo) -> None:
    repo.write("notes.txt", "a note\n")
    repo.cp("save", "-m", "first")

    async def body(client: Client) -> list[Any]:
        calls = [("show", {"checkpoint": "cp_001"}), ("scan", {}), ("evidence", {})]
        return [(await client.call_tool(name, args)).structured_content for name, args in calls]

    shown, scanned, evidence = run_client(repo.path, body)
    assert shown == repo.cp_json("show", "cp_001")
    assert scanned == repo.cp_json("scan")
    assert evidence == repo.cp_json("evidence", expect=1)  # none: exit 1 there, a "no" here
