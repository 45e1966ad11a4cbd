"""The scripted tool calls of the scenarios, in each agent's own terms: an edit through
its edit tool (Claude Code reads a file before it may edit it), a shell command (in a
subfolder: `cd` for Claude Code, the tool's folder argument for Gemini CLI and Codex)."""

from __future__ import annotations

Step = dict[str, str]

# What each agent calls its edit tool in a hook payload, and its shell tool.
EDIT_TOOL = {"claude-code": "Edit", "codex": "apply_patch", "gemini-cli": "replace"}
WRITE_TOOL = {"claude-code": "Write", "codex": "apply_patch", "gemini-cli": "write_file"}
SHELL_TOOL = {"claude-code": "Bash", "codex": "Bash", "gemini-cli": "run_shell_command"}
PROMPT_EVENT = {
    "claude-code": "UserPromptSubmit",
    "codex": "UserPromptSubmit",
    "gemini-cli": "BeforeAgent",
}
TOOL_EVENT = {"claude-code": "PreToolUse", "codex": "PreToolUse", "gemini-cli": "BeforeTool"}


def edit(agent: str, path: str, old: str, new: str) -> list[Step]:
    read = [{"read": path}] if agent == "claude-code" else []
    return [*read, {"edit": path, "old": old, "new": new}]


def write(path: str, content: str) -> list[Step]:
    return [{"write": path, "content": content}]


def shell(agent: str, command: str, folder: str = "") -> list[Step]:
    if folder and agent == "claude-code":
        return [{"shell": f"cd {folder} && {command}"}]
    return [{"shell": command, **({"dir": folder} if folder else {})}]


def shell_command(agent: str, command: str, folder: str = "") -> str:
    """The command line as the shell hook sees it."""
    return f"cd {folder} && {command}" if folder and agent == "claude-code" else command
