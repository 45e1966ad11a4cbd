"""`git-checkpoint-hook AGENT EVENT`: the one entry every agent and git hook calls.

Every agent tool call pays for this process, so at start it imports only json, os, sys
and the risk classifier; the save path is imported only when a checkpoint is due. It
never blocks: any problem is one line on stderr, exit 0, and the answer (if the agent's
format wants one) that lets the call go on.
"""

from __future__ import annotations

import json
import os
import sys

TYPE_CHECKING = False  # typing itself costs 2 ms of start-up that no hook call needs
if TYPE_CHECKING:
    from typing import Any

# Set while a hook saves: git hooks fired by git processes under that save skip saving.
GUARD = "GIT_CHECKPOINT_HOOK_ACTIVE"
# An agent's tool call waits at most this long for another git-checkpoint (a restore, a
# `run` between attempts) before it goes on without a checkpoint.
LOCK_WAIT = 2.0

# What each agent's format needs on stdout to let the call go on (nothing: no output).
_ANSWERS: dict[tuple[str, str], str] = {
    ("gemini-cli", "BeforeTool"): "{}",
    ("gemini-cli", "BeforeAgent"): "{}",
    ("cursor", "beforeShellExecution"): '{"permission": "allow"}',
    ("cursor", "beforeSubmitPrompt"): '{"continue": true}',
    ("cursor", "afterFileEdit"): "{}",
}

SHELL_TOOLS = {"Bash", "run_shell_command"}
EDIT_TOOLS = {"Edit", "Write", "MultiEdit", "NotebookEdit", "write_file", "replace", "apply_patch"}
EVENTS = {
    "claude-code": {"PreToolUse", "UserPromptSubmit"},
    "codex": {"PreToolUse", "UserPromptSubmit"},
    "gemini-cli": {"BeforeTool", "BeforeAgent"},
    "cursor": {"beforeShellExecution", "afterFileEdit", "beforeSubmitPrompt"},
    "git": {"pre-rebase", "pre-merge-commit", "pre-push"},
}


class Skip(Exception):
    """Nothing to save, with one line to say why (empty: say nothing)."""


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    agent, event = [*args[:2], "", ""][:2]
    try:
        run(agent, event, list(args[2:]))
    except Skip as why:
        if str(why):
            _say(str(why))
    except KeyboardInterrupt:
        _say("interrupted; no checkpoint saved")
    except Exception as exc:  # never a traceback, never a blocked tool call
        _say(f"no checkpoint saved: {_one_line(exc)}")
    answer = _ANSWERS.get((agent, event))
    out = sys.stdout
    if answer is not None and out is not None:
        try:
            out.write(answer + "\n")
            out.flush()
        except (OSError, ValueError):  # nobody listens: make the flush at exit harmless too
            import contextlib  # only here: every other call saves its import

            with contextlib.suppress(OSError, ValueError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), out.fileno())
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(0)  # no interpreter teardown: after a save it costs 11 ms, and all is closed


def run(agent: str, event: str, rest: list[str]) -> None:
    if agent not in EVENTS:
        raise Skip(f"unknown agent {agent!r} (one of: {', '.join(sorted(EVENTS))})")
    if event not in EVENTS[agent]:
        raise Skip(f"unknown {agent} event {event!r}")
    if os.environ.get(GUARD):
        return  # a save of ours is running git: never save from inside it
    due = git_plan(event, rest) if agent == "git" else agent_plan(agent, event, read_payload())
    if due is not None:
        save(*due)


def read_payload() -> dict[str, Any]:
    if sys.stdin is None or sys.stdin.isatty():
        raise Skip("no hook payload on stdin")
    raw = sys.stdin.buffer.read()
    if not raw.strip():
        raise Skip("empty hook payload on stdin")
    try:
        payload = json.loads(raw.decode("utf-8", "replace"))
    except ValueError as exc:
        raise Skip(f"hook payload is not JSON ({exc})") from None
    if not isinstance(payload, dict):
        raise Skip("hook payload is not a JSON object")
    return payload


def agent_plan(agent: str, event: str, payload: dict[str, Any]) -> tuple[str, str] | None:
    """(folder to save in, message) when this call is worth a checkpoint, else None."""
    cwd = _cwd(payload)
    tool = _text(payload.get("tool_name"))
    tool_input = payload.get("tool_input")
    args: dict[str, Any] = tool_input if isinstance(tool_input, dict) else {}
    if event in ("UserPromptSubmit", "BeforeAgent", "beforeSubmitPrompt"):
        prompt = _text(payload.get("prompt")).strip()
        first = prompt.splitlines()[0] if prompt else "(empty prompt)"
        return cwd, f"before prompt: {_clip(first)}"
    if event == "beforeShellExecution":
        return _if_risky(cwd, _text(payload.get("command")))
    if event == "afterFileEdit":  # Cursor has no hook before an edit: keep each edit
        return cwd, f"after edit of {_rel(_text(payload.get('file_path')), cwd)}"
    if tool in SHELL_TOOLS:  # Gemini CLI may run it in a `directory` below the project
        where = os.path.join(cwd, _text(args.get("directory")))
        return _if_risky(where if os.path.isdir(where) else cwd, _text(args.get("command")))
    if tool in EDIT_TOOLS:
        path = _text(args.get("file_path") or args.get("notebook_path") or args.get("path"))
        if tool == "apply_patch":  # Codex: the patch names its files
            path = _patched_file(_text(args.get("command")))
        target = _rel(path, cwd) if path else "files"
        return cwd, f"before {tool} of {target}"
    return None  # a tool we were not asked about (a wide matcher): nothing to do


def git_plan(event: str, rest: list[str]) -> tuple[str, str] | None:
    cwd = os.getcwd()  # git runs hooks at the top of the work tree
    if event == "pre-rebase":
        onto = f" onto {rest[0]}" if rest else ""
        return cwd, f"before rebase{onto}"
    if event == "pre-merge-commit":
        return cwd, "before the merge commit"
    # pre-push: with checkpoint.pushWithBranch, the pushed branches' checkpoints go too
    from ..install.git_hooks import push_with_branch

    os.environ[GUARD] = "1"  # that push runs git push: its pre-push must not recurse
    refs = sys.stdin.read().splitlines() if sys.stdin is not None else []
    try:
        said = push_with_branch(cwd, rest[0] if rest else "", refs)
    except Exception as exc:
        raise Skip(_one_line(exc)) from None
    if said:
        _say(said)
    return None


def _patched_file(patch: str) -> str:
    for line in patch.splitlines():
        for tag in ("*** Update File: ", "*** Add File: ", "*** Delete File: "):
            if line.startswith(tag):
                return line[len(tag) :].strip()
    return ""


def _if_risky(cwd: str, command: str) -> tuple[str, str] | None:
    if not command.strip():
        return None
    from ..risk.classify import classify
    from .patterns import configured_patterns

    risky, harmless = configured_patterns(cwd)
    verdict = classify(command, risky_patterns=risky, harmless_patterns=harmless, cwd=cwd)
    if not verdict.risky:
        return None
    return cwd, f"before: {_clip(command)}"


def save(cwd: str, message: str) -> None:
    os.environ[GUARD] = "1"  # git children of this save must not fire our hooks again
    from ..gitcore import maintenance
    from .quickcheck import auto_save

    maintenance.held_off = True  # never here: it would hold the tool call (maintenance.py)

    name = auto_save(cwd, message, lock_wait=LOCK_WAIT)
    if name is not None:
        _say(f"checkpoint saved: {name} ({message})")


# --- small helpers -------------------------------------------------------------------


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
    return _clip(rel if not rel.startswith("..") else path)


def _clip(text: str, width: int = 72) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def _say(line: str) -> None:
    err = sys.stderr
    if err is None:  # started with stderr closed
        return
    try:
        err.write(f"git-checkpoint: {line}\n")
        err.flush()
    except (OSError, ValueError):
        pass
