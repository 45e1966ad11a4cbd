"""Whether Codex will run our hooks. Codex loads a project's `.codex/` only when the
user trusts the project (`[projects."<root>"] trust_level = "trusted"` in its
config.toml), and runs a hook that is not managed only when its current hash is recorded
as trusted (`[hooks.state."<hooks.json>:<event>:<group>:<handler>"] trusted_hash`, what
`/hooks` writes); any other hook is skipped without a word. This reads that state, and
writes it on request through Codex's own app server, the way `/hooks` does.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import selectors
import shutil
import subprocess
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import UsageError

DEFAULT_TIMEOUT = 600  # seconds: the timeout Codex gives a command hook that names none
APP_SERVER_WAIT = 30.0


@dataclass(frozen=True)
class HookTrust:
    key: str  # Codex's name for the hook: "<hooks.json>:<event>:<group>:<handler>"
    hash: str  # "sha256:…", as Codex hashes the hook's normalized identity
    state: str  # trusted | untrusted | modified | disabled


@dataclass(frozen=True)
class CodexTrust:
    config: str  # Codex's config.toml, where trust is kept
    project: str | None  # the folder Codex must trust (project hooks), else None
    project_trusted: bool
    hooks: tuple[HookTrust, ...]
    unreadable: str | None = None  # config.toml could not be read: why

    @property
    def runs(self) -> bool:
        return (
            self.unreadable is None
            and self.project_trusted
            and all(h.state == "trusted" for h in self.hooks)
        )

    def problem(self) -> str | None:
        """Why Codex will not run our hooks, in one line; None when it will."""
        if self.runs:
            return None
        if self.unreadable is not None:
            return f"cannot read {self.config}: {self.unreadable}"
        why = []
        if not self.project_trusted:
            why.append(f"the project {self.project} is not trusted")
        waiting = [h for h in self.hooks if h.state != "trusted"]
        if waiting:
            states = sorted({h.state for h in waiting})
            why.append(f"{len(waiting)} of {len(self.hooks)} hooks are {' or '.join(states)}")
        return f"{' and '.join(why)} (in {self.config})"

    def fix(self) -> str:
        return (
            "git checkpoint hooks install --agent codex --trust; or in codex: trust the folder "
            "when asked, then /hooks and trust each git-checkpoint-hook entry; or add to "
            f"{self.config}:\n{self.toml()}"
        )

    def toml(self) -> str:
        """The lines of config.toml that make Codex run them."""
        out = []
        if not self.project_trusted and self.project is not None:
            out += [f"[projects.{json.dumps(self.project)}]", 'trust_level = "trusted"', ""]
        for h in self.hooks:
            if h.state != "trusted":
                out += [f"[hooks.state.{json.dumps(h.key)}]", f'trusted_hash = "{h.hash}"']
                if h.state == "disabled":
                    out.append("enabled = true")
                out.append("")
        return "\n".join(out).rstrip("\n")


def codex_home() -> Path:
    return Path(os.environ.get("CODEX_HOME") or Path(os.path.expanduser("~")) / ".codex")


# --- reading ------------------------------------------------------------------------------


def read(hooks_file: Path, project_roots: tuple[Path, ...], ours: str) -> CodexTrust:
    """The trust Codex gives the hooks in `hooks_file` whose command starts with `ours`.
    `project_roots`: the folders Codex looks up for a project's trust (the work tree's
    top, and the main work tree's for a linked one); empty for the user's own hooks."""
    config = codex_home() / "config.toml"
    project = str(project_roots[0]) if project_roots else None
    hooks = _our_hooks(hooks_file, ours)
    try:
        doc = tomllib.loads(config.read_text()) if config.exists() else {}
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return CodexTrust(str(config), project, False, (), str(exc).splitlines()[0])
    states = _get(doc, "hooks", "state")
    found = []
    for key, digest in hooks:
        state = states.get(key) if isinstance(states, dict) else None
        state = state if isinstance(state, dict) else {}
        if state.get("enabled") is False:
            found.append(HookTrust(key, digest, "disabled"))
        elif state.get("trusted_hash") == digest:
            found.append(HookTrust(key, digest, "trusted"))
        elif isinstance(state.get("trusted_hash"), str):
            found.append(HookTrust(key, digest, "modified"))
        else:
            found.append(HookTrust(key, digest, "untrusted"))
    trusted = not project_roots or _project_trusted(doc, project_roots)
    return CodexTrust(str(config), project, trusted, tuple(found))


def _project_trusted(doc: dict[str, Any], roots: tuple[Path, ...]) -> bool:
    projects = doc.get("projects")
    if not isinstance(projects, dict):
        return False
    for root in roots:
        for key in dict.fromkeys((str(root), os.path.realpath(root))):
            entry = projects.get(key)
            if isinstance(entry, dict) and "trust_level" in entry:
                return bool(entry["trust_level"] == "trusted")
    return False


def _get(doc: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        doc = doc.get(key) if isinstance(doc, dict) else None  # type: ignore[assignment]
    return doc


def _our_hooks(hooks_file: Path, ours: str) -> list[tuple[str, str]]:
    """(Codex's key, Codex's hash) of each of our command hooks in the file."""
    try:
        doc = json.loads(hooks_file.read_text())
    except (OSError, ValueError):
        return []
    events = doc.get("hooks") if isinstance(doc, dict) else None
    if not isinstance(events, dict):
        return []
    out = []
    for event, groups in events.items():
        if not isinstance(groups, list):
            continue
        label = event_label(event)
        for group_index, group in enumerate(groups):
            handlers = group.get("hooks") if isinstance(group, dict) else None
            if not isinstance(handlers, list):
                continue
            for handler_index, handler in enumerate(handlers):
                command = handler.get("command") if isinstance(handler, dict) else None
                if not isinstance(command, str) or not command.strip().startswith(ours + " "):
                    continue
                key = f"{hooks_file}:{label}:{group_index}:{handler_index}"
                out.append((key, hook_hash(label, group.get("matcher"), handler)))
    return out


def event_label(event: str) -> str:
    """Codex's snake_case name of an event: PreToolUse -> pre_tool_use."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", event).lower()


# Events whose matcher Codex ignores (it hashes them without one).
NO_MATCHER = {"user_prompt_submit", "stop", "session_start", "session_end"}


def hook_hash(label: str, matcher: Any, handler: dict[str, Any]) -> str:
    """Codex's hash of a command hook: sha256 of the canonical JSON (keys sorted, no
    spaces) of {event_name, matcher, hooks: [the handler with its defaults filled]},
    fields that are unset left out."""
    normalized: dict[str, Any] = {
        "type": "command",
        "command": handler.get("command"),
        "timeout": max(1, int(handler.get("timeout") or DEFAULT_TIMEOUT)),
        "async": bool(handler.get("async", False)),
    }
    if isinstance(handler.get("statusMessage"), str):
        normalized["statusMessage"] = handler["statusMessage"]
    identity: dict[str, Any] = {"event_name": label, "hooks": [normalized]}
    if isinstance(matcher, str) and label not in NO_MATCHER:
        identity["matcher"] = matcher
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


# --- writing, through Codex ---------------------------------------------------------------


def trust(hooks_file: Path, project: Path | None, ours: str) -> list[str]:
    """Trust the project (when given) and each of our hooks in `hooks_file`, through
    `codex app-server` (hooks/list for the hashes Codex computes, config/batchWrite to
    keep them), as `/hooks` does; what was trusted."""
    codex = shutil.which("codex")
    if codex is None:
        raise UsageError(
            "--trust: codex is not on PATH; trust the hooks in codex (/hooks), or add to "
            f"{codex_home() / 'config.toml'} the lines `git checkpoint hooks status --agent "
            "codex` prints"
        )
    cwd = project or hooks_file.parent.parent
    done = []
    with _AppServer(codex, cwd) as server:
        if project is not None:
            projects = {str(project): {"trust_level": "trusted"}}
            server.call("config/batchWrite", {"edits": [_upsert("projects", projects)]})
            done.append(f"project {project}")
        listed = server.call("hooks/list", {"cwds": [str(cwd)]})
        mine = [
            h
            for entry in listed.get("data", [])
            for h in entry.get("hooks", [])
            if Path(h.get("sourcePath", "")) == hooks_file
            and str(h.get("command", "")).strip().startswith(ours + " ")
        ]
        if not mine:
            raise UsageError(f"--trust: codex does not list the hooks of {hooks_file}")
        states = {
            h["key"]: {
                "trusted_hash": h["currentHash"],
                **({} if h.get("enabled") else {"enabled": True}),
            }
            for h in mine
        }
        server.call("config/batchWrite", {"edits": [_upsert("hooks.state", states)]})
        done += [f"{h['eventName']} {h.get('matcher') or ''}".rstrip() for h in mine]
    return done


def _upsert(key_path: str, value: dict[str, Any]) -> dict[str, Any]:
    return {"keyPath": key_path, "mergeStrategy": "upsert", "value": value}


class _AppServer:
    """`codex app-server` over stdio: one JSON-RPC message a line."""

    def __init__(self, codex: str, cwd: Path) -> None:
        self.proc = subprocess.Popen(
            [codex, "app-server"],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.next_id = 0
        self.buffer = b""

    def __enter__(self) -> _AppServer:
        self.call("initialize", {"clientInfo": {"name": "git-checkpoint", "version": "1"}})
        self._send({"method": "initialized"})
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def call(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        self._send({"id": self.next_id, "method": method, "params": params})
        deadline = time.monotonic() + APP_SERVER_WAIT
        while True:
            message = self._read(deadline, method)
            if message.get("id") != self.next_id:
                continue  # a notification
            if "error" in message:
                error = message["error"]
                said = error.get("message", error) if isinstance(error, dict) else error
                raise UsageError(f"--trust: codex app-server {method}: {said}")
            result = message.get("result")
            return result if isinstance(result, dict) else {}

    def _read(self, deadline: float, method: str) -> dict[str, Any]:
        assert self.proc.stdout is not None
        with selectors.DefaultSelector() as selector:
            selector.register(self.proc.stdout, selectors.EVENT_READ)
            while b"\n" not in self.buffer:
                left = deadline - time.monotonic()
                if left <= 0 or not selector.select(left):
                    raise UsageError(f"--trust: codex app-server did not answer {method}")
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                if not chunk:
                    raise UsageError(f"--trust: codex app-server exited during {method}")
                self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        try:
            message = json.loads(line)
        except ValueError:
            return {}
        return message if isinstance(message, dict) else {}
