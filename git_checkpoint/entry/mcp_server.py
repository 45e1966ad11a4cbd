"""`git checkpoint mcp`: the commands as Model Context Protocol tools over stdio.

A second boundary beside `cli.py`: each tool calls the same `commands/*` function the
CLI does and returns the same JSON object `--json` prints; a `CheckpointError` becomes
an MCP tool error carrying the error, its exit code and what that code means. Tools run
on the server's main thread (one request at a time, as a stdio client sends them), so
the signal handling of `verify` works as it does on the command line.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from mcp.types import CallToolResult, TextContent

from .. import __version__
from ..app.context import Context, load_context
from ..core.errors import CheckpointError
from .console import to_jsonable

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

EXIT_MEANINGS = {
    0: "done",
    1: "the operation ran and its answer is no",
    2: "bad usage or bad input",
    3: "refused for safety",
    4: "git failed underneath",
}

INSTRUCTIONS = """\
Checkpoints of this git workspace. Save before a risky change (save), check your work
(verify), go back when an attempt fails (restore: a dry run unless dry_run is false;
undo reverses the last restore), and read where the task stands (status, resume).
Every tool returns the JSON object `git checkpoint <tool> --json` prints.
"""


def as_json_text(result: Any) -> str:
    return json.dumps(to_jsonable(result), ensure_ascii=False, default=str)


def tool_error_text(exc: CheckpointError) -> str:
    code = exc.exit_code
    return json.dumps(
        {"error": str(exc), "exit_code": code, "meaning": EXIT_MEANINGS.get(code, "error")},
        ensure_ascii=False,
    )


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def call(command: Callable[[Context], Any]) -> CallToolResult:
    """Run one command in the repository of the current folder: its JSON as the tool's
    answer, or a tool error whose text is a JSON object with the exit code.
    """
    try:
        text, failed = as_json_text(command(_context())), False
    except CheckpointError as exc:
        text, failed = tool_error_text(exc), True
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=failed)


def _accepts(fn: Callable[..., Any], name: str) -> bool:  # undo's --task is new
    return name in inspect.signature(fn).parameters


def build_server() -> MCPServer:
    """The MCPServer with every tool registered (the `mcp` extra must be installed)."""
    from mcp.server.mcpserver import MCPServer

    from ..app import diff, restore, resume, review, save, show, status, undo, verify
    from ..app import list as list_cmd

    server = MCPServer(
        name="git-checkpoint", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING"
    )

    # Async on purpose: the SDK runs sync tools on a worker thread, where `verify` could
    # not install its signal handlers. A stdio client waits for each answer anyway.
    @server.tool(name="save")
    async def save_tool(
        message: str = "",
        task: str | None = None,
        hypothesis: str | None = None,
        next_move: str | None = None,
    ) -> CallToolResult:
        """Save the workspace as the task's next checkpoint (`unchanged` if nothing changed)."""
        return call(
            lambda ctx: save.run(
                ctx,
                task=task,
                message=message,
                hypothesis=hypothesis,
                next_move=next_move,
                auto=False,
            )
        )

    @server.tool(name="list")
    async def list_tool(
        task: str | None = None, all_tasks: bool = False, remote: str | None = None
    ) -> CallToolResult:
        """List checkpoints: id, age, status, verifier summary, overlay, message."""
        return call(lambda ctx: list_cmd.run(ctx, task=task, all_tasks=all_tasks, remote=remote))

    @server.tool(name="show")
    async def show_tool(
        checkpoint: str = "@", manifest: bool = False, patch: bool = False
    ) -> CallToolResult:
        """Show a checkpoint: manifest, status, verifier events, diffstat, overlay files."""
        return call(lambda ctx: show.run(ctx, checkpoint, manifest_only=manifest, patch=patch))

    @server.tool(name="diff")
    async def diff_tool(
        checkpoint: str | None = None,
        other: str | None = None,
        stat: bool = False,
        name_only: bool = False,
    ) -> CallToolResult:
        """Diff a checkpoint (default: the latest) against the workspace, or two checkpoints."""
        return call(
            lambda ctx: diff.run(
                ctx, checkpoint, other, color=False, stat=stat, name_only=name_only
            )
        )

    @server.tool(name="restore")
    async def restore_tool(
        checkpoint: str | None = None,
        dry_run: bool = True,
        move_head: bool = False,
        keep_head: bool = False,
    ) -> CallToolResult:
        """Make the workspace equal to a checkpoint (default: the latest). A dry run unless
        dry_run is false; a real restore takes a safety checkpoint first (undo reverses it).
        """
        return call(
            lambda ctx: restore.run(
                ctx,
                checkpoint,
                dry_run=dry_run,
                move_head=move_head,
                keep_head=keep_head,
                resume=False,
            )
        )

    @server.tool(name="undo")
    async def undo_tool(
        task: str | None = None, move_head: bool = False, keep_head: bool = False
    ) -> CallToolResult:
        """Undo the last restore: restore its safety checkpoint."""
        options: dict[str, Any] = {"move_head": move_head, "keep_head": keep_head}
        if _accepts(undo.run, "task"):
            options["task"] = task
        return call(lambda ctx: undo.run(ctx, **options))

    @server.tool(name="verify")
    async def verify_tool(
        checkpoint: str | None = None, verifiers: list[str] | None = None
    ) -> CallToolResult:
        """Run the verifiers (all, or those named) on the workspace (saved first) or on a
        checkpoint in a temporary worktree; promote or reject by the rule. exit_code 1 in
        the answer: a required verifier failed.
        """
        return call(
            lambda ctx: verify.run(ctx, checkpoint, only=tuple(verifiers or ()), progress=_stderr)
        )

    @server.tool(name="status")
    async def status_tool(task: str | None = None) -> CallToolResult:
        """Task, latest and last good checkpoint, drift since the latest, verifier results."""
        return call(lambda ctx: status.run(ctx, task=task, exit_code=False))

    @server.tool(name="resume")
    async def resume_tool(task: str | None = None) -> CallToolResult:
        """The task record as a brief: last failing verifier, hypothesis, next safe move."""
        return call(lambda ctx: resume.run(ctx, task=task))

    @server.tool(name="review")
    async def review_tool(task: str | None = None) -> CallToolResult:
        """A task's timeline for a reviewer (TASK or REMOTE/TASK; default: the current
        task): attempts, statuses, verifier evidence from every machine, diffstats.
        """
        return call(lambda ctx: review.run(ctx, task, fmt="text"))  # as `review --json`

    return server


def _context() -> Context:
    """A tool call's context: the server lives on, so it never becomes the reaper of
    what its verifiers leave (verify/procgroup.py)."""
    return dataclasses.replace(load_context(), long_lived=True)


def serve() -> None:
    build_server().run("stdio")
