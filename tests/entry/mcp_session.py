"""An MCP client session over stdio against `git checkpoint mcp`, as an agent starts it:
the SDK's own client, with the roots it declares (if any) and the protocol it speaks
("legacy": the initialize handshake; "auto": the newest the server offers)."""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.types import CallToolResult, ListRootsResult, Root, Tool

T = TypeVar("T")


def run_client(
    cwd: Path,
    body: Callable[[Client], Awaitable[T]],
    *,
    roots: list[Path] | None = None,
    asked: list[int] | None = None,
    mode: str = "auto",
    launcher: list[str] | None = None,
    env: dict[str, str] | None = None,
) -> T:
    """Start the server in `cwd` and run `body` with a client connected to it. `roots`:
    the client declares the roots capability and lists these; `asked` counts the times
    the server asked for them. `launcher`: a command the server is started through;
    `env`: the server's environment (default: ours)."""

    async def list_roots(_: Any) -> ListRootsResult:
        if asked is not None:
            asked.append(1)
        return ListRootsResult(roots=[Root(uri=p.as_uri()) for p in roots or []])

    argv = [*(launcher or []), "git", "checkpoint", "mcp"]
    params = StdioServerParameters(
        command=argv[0], args=argv[1:], cwd=str(cwd), env=dict(os.environ if env is None else env)
    )

    async def main() -> T:
        async with Client(
            params,
            read_timeout_seconds=120,
            mode=mode,
            list_roots_callback=list_roots if roots is not None else None,
        ) as client:
            return await body(client)

    return anyio.run(main)


def session(
    cwd: Path, calls: list[tuple[str, dict[str, Any]]], **options: Any
) -> tuple[dict[str, Tool], list[CallToolResult]]:
    """Make the calls in order in one session; (the tools listed by name, the results)."""

    async def body(client: Client) -> tuple[dict[str, Tool], list[CallToolResult]]:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        return tools, [await client.call_tool(name, args) for name, args in calls]

    return run_client(cwd, body, **options)


def payload(result: CallToolResult) -> Any:
    """The JSON of the first text block: the answer, or the error object."""
    block = result.content[0]
    assert block.type == "text"
    return json.loads(block.text)
