"""Agent hooks: our entries in each agent's settings file, merged in beside whatever is
there (other hooks, other keys, their order) and taken out again exactly.

Formats, as each agent documents them:
- Claude Code: `hooks.<Event>[] = {matcher, hooks: [{type: command, command}]}`
  (https://docs.claude.com/en/docs/claude-code/hooks)
- Codex CLI: the same shape in `.codex/hooks.json` (https://developers.openai.com/codex/hooks)
- Gemini CLI: the same shape in `.gemini/settings.json`, events BeforeTool / BeforeAgent
  (https://geminicli.com/docs/hooks/reference)
- Cursor: `{version: 1, hooks: {<event>: [{command}]}}` in `.cursor/hooks.json`
  (https://cursor.com/docs/agent/hooks)
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..core.errors import UsageError
from . import hook_files

ENTRY = "git-checkpoint-hook"


@dataclass(frozen=True)
class AgentSpec:
    name: str
    project_file: str
    user_file: str  # below the home folder
    local_file: str | None  # Claude Code only: not committed
    groups: tuple[tuple[str, str | None], ...]  # (event, matcher)
    flat: bool = False  # Cursor: the entries sit right under the event
    new_file_keys: tuple[tuple[str, Any], ...] = ()  # keys a file we create starts with


AGENTS: dict[str, AgentSpec] = {
    spec.name: spec
    for spec in (
        AgentSpec(
            "claude-code",
            ".claude/settings.json",
            ".claude/settings.json",
            ".claude/settings.local.json",
            (
                ("PreToolUse", "Bash"),
                ("PreToolUse", "Edit|Write|MultiEdit|NotebookEdit"),
                ("UserPromptSubmit", None),
            ),
        ),
        AgentSpec(
            "gemini-cli",
            ".gemini/settings.json",
            ".gemini/settings.json",
            None,
            (
                ("BeforeTool", "run_shell_command"),
                ("BeforeTool", "write_file|replace"),
                ("BeforeAgent", None),
            ),
        ),
        AgentSpec(
            "codex",
            ".codex/hooks.json",
            ".codex/hooks.json",
            None,
            (("PreToolUse", "Bash"), ("PreToolUse", "apply_patch"), ("UserPromptSubmit", None)),
        ),
        AgentSpec(
            "cursor",
            ".cursor/hooks.json",
            ".cursor/hooks.json",
            None,
            (
                ("beforeShellExecution", None),
                ("afterFileEdit", None),
                ("beforeSubmitPrompt", None),
            ),
            flat=True,
            new_file_keys=(("version", 1),),
        ),
    )
}


@dataclass(frozen=True)
class AgentState:
    agent: str
    scope: str  # project | local | user
    path: str
    state: str  # installed | outdated | not installed
    edited_since_install: bool = False
    ignored: bool | None = None  # a local settings file: whether git ignores it (else None)
    # Whether the agent will run them, where it asks for trust (Codex): None elsewhere;
    # when False, why not and how to make it.
    runs: bool | None = None
    not_run_because: str | None = None
    trust_fix: str | None = None


def settings_path(spec: AgentSpec, scope: str, root: Path | None, home: Path) -> Path:
    if scope == "user":
        return home / spec.user_file
    if root is None:
        raise UsageError("not inside a git work tree (use --user for your own settings)")
    if scope == "local":
        if spec.local_file is None:
            raise UsageError(f"--local: {spec.name} has no local settings file")
        return root / spec.local_file
    return root / spec.project_file


# --- the entries ---------------------------------------------------------------------


def command_for(agent: str, event: str) -> str:
    return f"{ENTRY} {agent} {event}"


def wanted_entries(spec: AgentSpec) -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    for event, matcher in spec.groups:
        command = command_for(spec.name, event)
        if spec.flat:
            out.append((event, {"command": command}))
            continue
        group: dict[str, Any] = {} if matcher is None else {"matcher": matcher}
        group["hooks"] = [{"type": "command", "command": command}]
        out.append((event, group))
    return out


def _is_ours(item: Any) -> bool:
    return (
        isinstance(item, dict)
        and isinstance(item.get("command"), str)
        and item["command"].strip().startswith(ENTRY + " ")
    )


def our_entries(doc: dict[str, Any], spec: AgentSpec) -> list[tuple[str, Any]]:
    hooks = doc.get("hooks")
    found: list[tuple[str, Any]] = []
    if not isinstance(hooks, dict):
        return found
    for event, items in hooks.items():
        if not isinstance(items, list):
            continue
        for item in items:
            inner = item.get("hooks") if isinstance(item, dict) and not spec.flat else [item]
            if isinstance(inner, list) and any(_is_ours(h) for h in inner):
                found.append((event, item))
    return found


def is_current(doc: dict[str, Any], spec: AgentSpec) -> bool:
    """Exactly our entries, in whatever order the file keeps its events."""

    def key(entries: list[tuple[str, Any]]) -> list[str]:
        return sorted(json.dumps([event, entry], sort_keys=True) for event, entry in entries)

    return key(our_entries(doc, spec)) == key(wanted_entries(spec))


def strip_ours(doc: dict[str, Any], spec: AgentSpec) -> dict[str, Any]:
    """The settings without our entries, and without the containers only they filled."""
    had_ours = bool(our_entries(doc, spec))
    doc = copy.deepcopy(doc)
    hooks = doc.get("hooks")
    if not isinstance(hooks, dict):
        return doc
    for event in list(hooks):
        items = hooks[event]
        if not isinstance(items, list):
            continue
        kept: list[Any] = []
        for item in items:
            if spec.flat or not isinstance(item, dict) or not isinstance(item.get("hooks"), list):
                if not _is_ours(item):
                    kept.append(item)
                continue
            inner = [h for h in item["hooks"] if not _is_ours(h)]
            if len(inner) == len(item["hooks"]):
                kept.append(item)
            elif inner:
                kept.append({**item, "hooks": inner})
        if len(kept) != len(items) and not kept:
            del hooks[event]
        else:
            hooks[event] = kept
    if not hooks and had_ours:
        del doc["hooks"]
    return doc


def with_ours(doc: dict[str, Any], spec: AgentSpec, *, new_file: bool) -> dict[str, Any]:
    doc = strip_ours(doc, spec)
    if new_file:
        for key, value in spec.new_file_keys:
            doc.setdefault(key, value)
    hooks = doc.setdefault("hooks", {})
    if not isinstance(hooks, dict):
        raise UsageError(f'its "hooks" is a {type(hooks).__name__}, not an object')
    for event, entry in wanted_entries(spec):
        items = hooks.setdefault(event, [])
        if not isinstance(items, list):
            raise UsageError(f'its "hooks.{event}" is a {type(items).__name__}, not a list')
        items.append(entry)
    return doc


# --- the settings file -----------------------------------------------------------------


def parse(path: Path, data: bytes | None) -> dict[str, Any]:
    if data is None or not data.strip():
        return {}
    try:
        doc = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise UsageError(f"{path}: not valid JSON ({exc}); fix it, then install again") from None
    if not isinstance(doc, dict):
        raise UsageError(f"{path}: the settings are not a JSON object")
    return doc


def render(doc: dict[str, Any], like: bytes | None) -> bytes:
    """JSON with the indentation and final newline of the file it replaces."""
    indent: str | int = 2
    if like:
        found = re.search(rb"\n([ \t]+)\S", like)
        if found:
            indent = found.group(1).decode()
    text = json.dumps(doc, indent=indent, ensure_ascii=False)
    newline = like is None or not like.strip() or like.endswith(b"\n")
    return (text + ("\n" if newline else "")).encode()


def status(spec: AgentSpec, scope: str, path: Path, record_path: Path) -> AgentState:
    data = hook_files.read_bytes(path)
    record = hook_files.load_record(record_path)
    try:
        doc = parse(path, data)
    except UsageError:
        return AgentState(spec.name, scope, str(path), "unreadable settings")
    edited = (
        record is not None and data is not None and (hook_files.digest(data) != record.after_sha256)
    )
    if not our_entries(doc, spec):
        return AgentState(spec.name, scope, str(path), "not installed", edited)
    state = "installed" if is_current(doc, spec) else "outdated"
    return AgentState(spec.name, scope, str(path), state, edited)


def install(spec: AgentSpec, path: Path, record_path: Path) -> bool:
    """Merge our entries into the settings; False when they were there already."""
    data = hook_files.read_bytes(path)
    doc = parse(path, data)
    if data is not None and is_current(doc, spec):
        return False
    try:
        new = render(with_ours(doc, spec, new_file=not (data or b"").strip()), data)
    except UsageError as exc:
        raise UsageError(f"{path}: {exc}") from None
    record = hook_files.load_record(record_path)
    created: tuple[str, ...] = ()
    if data is None:
        created = hook_files.make_parents(path)
    hook_files.write_atomic(path, new)
    if record is None:  # keep the very first "before": a re-install must not forget it
        record = hook_files.FileRecord(str(path), data, "", created)
    hook_files.save_record(
        record_path,
        hook_files.FileRecord(
            record.path, record.before, hook_files.digest(new), record.created_dirs
        ),
    )
    return True


def uninstall(spec: AgentSpec, path: Path, record_path: Path) -> str:
    """Take our entries out; return how: restored, removed, edited, not installed."""
    data = hook_files.read_bytes(path)
    record = hook_files.load_record(record_path)
    how = "not installed"
    if record is not None and data is not None and hook_files.digest(data) == record.after_sha256:
        hook_files.put_back(path, record)
        how = "restored" if record.before is not None else "removed"
    elif data is not None:
        doc = parse(path, data)
        if our_entries(doc, spec):
            stripped = strip_ours(doc, spec)
            leftover = {k: v for k, v in stripped.items() if (k, v) not in spec.new_file_keys}
            if record is not None and record.before is None and not leftover:
                hook_files.put_back(path, record)
                how = "removed"
            else:
                hook_files.write_atomic(path, render(stripped, data))
                how = "edited"
    if record is not None:
        record_path.unlink()
    return how
