"""What an agent's or git's hook call asks of us: the payload read, and the plan, the
folder to save and the message, when the call is worth a checkpoint (a risky shell
command, an edit, a new prompt). Deciding costs no git and loads no save path: the
entry (entry/hook.py) saves only when a plan says so.
"""

from __future__ import annotations

import os
import sys

from ..core import cjson
from ..core.text import clip
from ..gitcore.locate import PATH_MAX, find_repo

TYPE_CHECKING = False  # typing itself is a cost on every agent tool call
if TYPE_CHECKING:
    from typing import Any

    from .patterns import Parse

    # (the folders to save in, one per repository; the checkpoint's message; whether to
    # name them: a command that reaches other repositories than the call's own)
    Plan = tuple[list[str], str, bool]

# Set while a hook saves: git hooks fired by git processes under that save skip saving.
GUARD = "GIT_CHECKPOINT_HOOK_ACTIVE"

# What each agent's format needs on stdout to let the call go on (nothing: no output).
ANSWERS: dict[tuple[str, str], str] = {
    ("gemini-cli", "BeforeTool"): "{}",
    ("gemini-cli", "BeforeAgent"): "{}",
    ("cursor", "beforeShellExecution"): '{"permission": "allow"}',
    ("cursor", "beforeSubmitPrompt"): '{"continue": true}',
    ("cursor", "afterFileEdit"): "{}",
}

SHELL_TOOLS = {"Bash", "run_shell_command"}
# A risky command saves each repository it reaches (`cd`, `git -C`, paths), at most this
# many: the first ones it names.
MAX_REPOSITORIES = 4
EDIT_TOOLS = {"Edit", "Write", "MultiEdit", "NotebookEdit", "write_file", "replace", "apply_patch"}
PROMPT_EVENTS = ("UserPromptSubmit", "BeforeAgent", "beforeSubmitPrompt")
EVENTS = {
    "claude-code": {"PreToolUse", "UserPromptSubmit"},
    "codex": {"PreToolUse", "UserPromptSubmit"},
    "gemini-cli": {"BeforeTool", "BeforeAgent"},
    "cursor": {"beforeShellExecution", "afterFileEdit", "beforeSubmitPrompt"},
    "git": {"pre-rebase", "pre-merge-commit", "pre-push", "prepare-commit-msg"},
}


class Skip(Exception):
    """Nothing to save, with one line to say why (empty: say nothing)."""


def check_call(agent: str, event: str) -> None:
    """Skip for an agent or an event we do not know."""
    if agent not in EVENTS:
        raise Skip(f"unknown agent {agent!r} (one of: {', '.join(sorted(EVENTS))})")
    if event not in EVENTS[agent]:
        raise Skip(f"unknown {agent} event {event!r}")


def read_payload() -> dict[str, Any]:
    if sys.stdin is None or sys.stdin.isatty():
        raise Skip("no hook payload on stdin")
    raw = sys.stdin.buffer.read()
    if not raw.strip():
        raise Skip("empty hook payload on stdin")
    try:
        payload = cjson.loads(raw.decode("utf-8", "replace"))
    except ValueError as exc:
        raise Skip(f"hook payload is not JSON ({exc})") from None
    if not isinstance(payload, dict):
        raise Skip("hook payload is not a JSON object")
    return payload


def agent_plan(agent: str, event: str, payload: dict[str, Any], parse: Parse) -> Plan | None:
    """(folders to save in, message, name them) when this call is worth a checkpoint,
    else None.
    `parse`: how to read the project's `hooks:` patterns (fast/patterns.py)."""
    cwd = _cwd(payload)
    if len(cwd) > PATH_MAX:
        return None  # no folder a tool can start in: nothing it can change
    # (A folder that is not there is judged by the folders above it: payloads name the
    # folder the agent means, which a command of this very call may create.)
    tool = _text(payload.get("tool_name"))
    tool_input = payload.get("tool_input")
    args: dict[str, Any] = tool_input if isinstance(tool_input, dict) else {}
    if event in PROMPT_EVENTS:
        prompt = _text(payload.get("prompt")).strip()
        first = prompt.splitlines()[0] if prompt else "(empty prompt)"
        return [cwd], f"before prompt: {first}", False
    if event == "beforeShellExecution":
        return _if_risky(cwd, _text(payload.get("command")), parse)
    if event == "afterFileEdit":  # Cursor has no hook before an edit: keep each edit
        return [cwd], f"after edit of {_rel(_text(payload.get('file_path')), cwd)}", False
    if tool in SHELL_TOOLS:
        # Gemini CLI runs it in a folder below the project: `dir_path` (0.61 on),
        # `directory` before.
        below = _text(args.get("dir_path")) or _text(args.get("directory"))
        where = os.path.join(cwd, below)
        return _if_risky(where if os.path.isdir(where) else cwd, _text(args.get("command")), parse)
    if tool in EDIT_TOOLS:
        path = _text(args.get("file_path") or args.get("notebook_path") or args.get("path"))
        if tool == "apply_patch":  # Codex: the patch names its files
            path = _patched_file(_text(args.get("command")))
        target = _rel(path, cwd) if path else "files"
        return [cwd], f"before {tool} of {target}", False
    return None  # a tool we were not asked about (a wide matcher): nothing to do


def git_plan(event: str, rest: list[str]) -> Plan | None:
    """The plan of a git hook that saves (pre-rebase, pre-merge-commit); None for the
    others (pre-push pushes, it never saves)."""
    cwd = os.getcwd()  # git runs hooks at the top of the work tree
    if event == "pre-rebase":
        onto = f" onto {rest[0]}" if rest else ""
        return [cwd], f"before rebase{onto}", False
    if event == "pre-merge-commit":
        return [cwd], "before the merge commit", False
    return None


def _patched_file(patch: str) -> str:
    for line in patch.splitlines():
        for tag in ("*** Update File: ", "*** Add File: ", "*** Delete File: "):
            if line.startswith(tag):
                return line[len(tag) :].strip()
    return ""


def _if_risky(cwd: str, command: str, parse: Parse) -> Plan | None:
    if not command.strip():
        return None
    from ..risk.classify import classify  # only for shell commands
    from .patterns import configured_patterns

    risky, harmless = configured_patterns(cwd, parse)
    verdict = classify(command, risky_patterns=risky, harmless_patterns=harmless, cwd=cwd)
    if not verdict.risky:
        return None
    folders, named = reached(verdict.where, cwd)
    return folders, f"before: {command}", named


def reached(where: tuple[str, ...], cwd: str) -> tuple[list[str], bool]:
    """The repositories a risky command reaches (repositories()), and whether to name
    them when saving: more than one, or another than the one the call runs in."""
    folders = repositories(where, cwd)
    own = find_repo(cwd)
    return folders, folders != [cwd] and (own is None or folders != [own.root])


def repositories(where: tuple[str, ...], cwd: str) -> list[str]:
    """The top folders of the repositories these folders and paths are in, first seen
    first, at most MAX_REPOSITORIES; `cwd` when none is in one (the save then says
    what is wrong there). A path that does not exist yet is in its folder's repository.
    With GIT_DIR or GIT_WORK_TREE set, git decides where the repository is: `cwd`."""
    found: list[str] = []
    for path in where:
        paths = find_repo(path)
        if paths is not None and paths.root not in found:
            found.append(paths.root)
            if len(found) == MAX_REPOSITORIES:
                break
    return found or [cwd]


def _cwd(payload: dict[str, Any]) -> str:
    cwd = payload.get("cwd")
    if isinstance(cwd, str) and cwd:
        return cwd
    roots = payload.get("workspace_roots")  # Cursor
    if isinstance(roots, list) and roots and isinstance(roots[0], str):
        return roots[0]
    return os.getcwd()


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _rel(path: str, cwd: str) -> str:
    if not path:
        return "a file"
    try:
        rel = os.path.relpath(path, cwd) if os.path.isabs(path) else path
    except ValueError:
        rel = path
    return clip(rel if not rel.startswith("..") else path)
