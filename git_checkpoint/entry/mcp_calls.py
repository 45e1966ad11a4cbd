"""What every MCP tool call goes through: its arguments checked against the schema the
tool declares, the folder it works in (its `repo`, the client's roots, the server's
folder), and its answer: the object `--json` prints, or the documented error object
`{"error", "exit_code", "meaning"}` with the exit code the command line would give."""

from __future__ import annotations

import dataclasses
import json
import sys
import traceback
from collections.abc import Callable
from pathlib import Path
from urllib.parse import unquote, urlparse

from mcp.server.mcpserver import Context as ToolContext
from mcp.server.mcpserver import ListRoots
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, ListRootsResult, TextContent
from pydantic import BaseModel, ConfigDict, ValidationError

from ..app.context import Context, load_context
from ..core.errors import CheckpointError, UsageError
from ..gitcore.repo import Repo
from .console import os_error_line, to_jsonable

EXIT_MEANINGS = {
    0: "done",
    1: "the operation ran and its answer is no",
    2: "bad usage or bad input",
    3: "refused for safety",
    4: "git failed underneath",
}


def failure(message: str, code: int) -> CallToolResult:
    """A tool error whose text is the documented error object."""
    meaning = EXIT_MEANINGS.get(code, "error")
    text = json.dumps({"error": message, "exit_code": code, "meaning": meaning}, ensure_ascii=False)
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def answer(run: Callable[[], object]) -> CallToolResult:
    """Run one command: the object `--json` prints, as structured content and as the
    same JSON in a text block (for clients that read text only), or a tool error."""
    try:
        result = run()
    except CheckpointError as exc:
        return failure(str(exc), exc.exit_code)
    except OSError as exc:  # a file we could not read or write: permissions, a full disk
        return failure(os_error_line(exc), 4)
    except Exception as exc:
        traceback.print_exc(file=sys.stderr)  # the client's log of this server
        return failure(f"internal error: {type(exc).__name__}: {exc}", 4)
    text = json.dumps(to_jsonable(result), ensure_ascii=False, default=str)
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=json.loads(text)
    )


def progress(line: str) -> None:
    """Progress of a long tool (verify, bisect): the client's log, never the answer."""
    print(line, file=sys.stderr, flush=True)


async def client_roots(repo: str | None, ctx: ToolContext) -> ListRoots | None:
    """Ask for the client's roots (`roots/list`) when no `repo` is named and the client
    declared the roots capability; the SDK asks the way the protocol version wants (a
    request of its own, or the call answered "input required" and made again)."""
    capabilities = ctx.client_capabilities
    if repo is not None or capabilities is None or capabilities.roots is None:
        return None
    return ListRoots()


def where(repo: str | None, roots: ListRootsResult | None) -> Path:
    """The folder a tool works in: `repo` (relative: to the server's current folder), else
    the client's one root that is a git work tree, else the server's current folder."""
    if repo is not None:
        folder = Path(repo)
        if not folder.is_dir():
            raise UsageError(f"repo {repo!r}: no such folder")
        return folder
    if roots is not None:
        trees = {top for root in roots.roots if (top := _work_tree(str(root.uri))) is not None}
        if len(trees) == 1:
            return trees.pop()
    return Path.cwd()


def _work_tree(uri: str) -> Path | None:
    parsed = urlparse(uri)
    folder = unquote(parsed.path)
    if parsed.scheme != "file" or not Path(folder).is_dir():
        return None
    try:
        return Repo.discover(folder).root
    except CheckpointError:  # not in a git work tree (a plain folder, a bare repository)
        return None


def context(folder: Path) -> Context:
    """A call's context for the verbs the Python API does not have: the server lives on,
    so it never becomes the reaper of what its verifiers leave (verify/procgroup.py)."""
    return dataclasses.replace(load_context(folder), long_lived=True)


def strict_arguments(tool: Tool) -> type[BaseModel]:
    """The tool's argument model as its published schema reads: JSON types as declared
    (the string "true" is no boolean), and an argument it does not take is an error."""
    loose = tool.fn_metadata.arg_model
    config = ConfigDict(extra="forbid", strict=True, arbitrary_types_allowed=True)
    strict: type[BaseModel] = type(
        f"{tool.name}_arguments", (loose,), {"model_config": config, "__module__": __name__}
    )
    return strict


def checked(tool: str, model: type[BaseModel], arguments: dict[str, object]) -> str | None:
    """None when the arguments fit the tool's schema; else one line naming each bad one."""
    try:
        model.model_validate(arguments)
    except ValidationError as exc:
        return _problems(tool, exc, model)
    return None


def _problems(tool: str, exc: ValidationError, model: type[BaseModel]) -> str:
    said: dict[str, str] = {}
    unknown = False
    for error in exc.errors(include_url=False):
        loc = [str(part) for part in error["loc"]]
        name = loc[0] if loc else "arguments"
        if name in said:
            continue  # one problem an argument is enough to name it
        if error["type"] == "extra_forbidden":
            unknown = True
            said[name] = f"unknown argument {name!r}"
        elif error["type"] == "missing":
            said[name] = f"argument {name!r} is required"
        else:
            what = error["msg"][:1].lower() + error["msg"][1:]
            said[name] = f"argument {'.'.join(loc)!r}: {what}, got {_shown(error['input'])}"
    line = f"{tool}: " + "; ".join(said.values())
    if unknown:
        takes = [field.alias or name for name, field in model.model_fields.items()]
        line += f" ({tool} takes: {', '.join(takes)})"
    return line


def _shown(value: object) -> str:
    """A rejected value by its JSON type, a scalar as itself: a string is the caller's
    text, of any length, so only its type is said."""
    if value is None or isinstance(value, bool | int | float):
        return json.dumps(value)
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"
