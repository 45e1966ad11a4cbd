"""The `.checkpoint.yaml` that `git checkpoint init` writes: every key at its default with
a comment on what it does, and the project's test command as the verifier when the files
at the root make it plain (pyproject.toml, package.json, Cargo.toml, go.mod, a Makefile).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from .model import DEFAULT_EXCLUDE

PYTHON_MARKERS = ("pyproject.toml", "setup.cfg", "pytest.ini", "tox.ini")
MAKEFILES = ("GNUmakefile", "makefile", "Makefile")  # the order make itself looks in
# What `npm init` puts in "test": a placeholder that fails, not a test suite.
NPM_PLACEHOLDER = 'echo "Error: no test specified" && exit 1'
# A folder or file at the root that says which agent works here.
AGENT_MARKERS = (
    (".claude", "claude-code"),
    ("CLAUDE.md", "claude-code"),
    (".gemini", "gemini-cli"),
    ("GEMINI.md", "gemini-cli"),
    (".codex", "codex"),
    (".cursor", "cursor"),
)
READ_AT_MOST = 1 << 20  # a project file larger than this is not read for a guess


@dataclass(frozen=True)
class FoundCommand:
    name: str  # the verifier's name
    command: str
    found_in: str  # the file at the root that says so


def _read(path: Path) -> str | None:
    try:
        if not path.is_file() or path.stat().st_size > READ_AT_MOST:
            return None
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def _npm_test(root: Path) -> bool:
    text = _read(root / "package.json")
    try:
        scripts = json.loads(text).get("scripts") if text else None
    except (ValueError, AttributeError):
        return False
    test = scripts.get("test") if isinstance(scripts, dict) else None
    return isinstance(test, str) and bool(test.strip()) and test.strip() != NPM_PLACEHOLDER


# A rule's targets: the words before a single or double colon that is not `:=`.
_RULE = re.compile(r"^([^\s:=#][^:=#]*?)\s*::?(?!=)")


def _makefile_with_test(root: Path) -> str | None:
    for name in MAKEFILES:
        text = _read(root / name)
        if text is None:
            continue
        for line in text.splitlines():
            rule = _RULE.match(line)
            if rule and "test" in rule.group(1).split():
                return name
        return None  # make reads the first of these it finds, and only that one
    return None


def find_test_commands(root: Path) -> list[FoundCommand]:
    """The test commands the root's files make plain, the likeliest first."""
    found = []
    python = next((m for m in PYTHON_MARKERS if (root / m).is_file()), None)
    if python:
        found.append(FoundCommand("pytest", "python3 -m pytest -q", python))
    if _npm_test(root):
        found.append(FoundCommand("npm-test", "npm test", "package.json"))
    if (root / "Cargo.toml").is_file():
        found.append(FoundCommand("cargo-test", "cargo test", "Cargo.toml"))
    if (root / "go.mod").is_file():
        found.append(FoundCommand("go-test", "go test ./...", "go.mod"))
    makefile = _makefile_with_test(root)
    if makefile:
        found.append(FoundCommand("make-test", "make test", makefile))
    return found


def agents_in_use(root: Path) -> tuple[str, ...]:
    """The agents whose folder or instructions file is at the root."""
    found: list[str] = []
    for marker, agent in AGENT_MARKERS:
        if (root / marker).exists() and agent not in found:
            found.append(agent)
    return tuple(found)


def hooks_command(agents: tuple[str, ...]) -> str:
    return "git checkpoint hooks install --git" + "".join(f" --agent {a}" for a in agents)


def _verifier(found: FoundCommand, *, commented: bool = False) -> list[str]:
    """One verifier, as list items under `verifiers:`; `commented`: each line with "# "
    after its indentation, so that taking those two characters out makes it count."""
    source = f"  # from {found.found_in}" if found.found_in else ""
    lines = [
        f"- name: {found.name}",
        f"  command: {found.command}{source}",
        "  required: true",
        "  timeout: 600  # seconds",
    ]
    return [f"  # {line}" if commented else f"  {line}" for line in lines]


def _verifiers(found: list[FoundCommand]) -> list[str]:
    intro = [
        "# Verifiers: commands whose exit status says whether the workspace is good.",
        "# `git checkpoint verify` and `run` run them; a checkpoint is promoted when the",
        "# required ones pass.",
    ]
    if not found:
        return [
            *intro,
            "# No test command was plain from the files at the root. To add yours: take out",
            '# the [] below, and the "# " of the lines under it; then put in your command.',
            "verifiers: []",
            *_verifier(FoundCommand("tests", "make test", ""), commented=True),
        ]
    out = [*intro, "verifiers:", *_verifier(found[0])]
    if found[1:]:
        out.append('  # Also found; to run it too, take out the "# " of its lines:')
        for other in found[1:]:
            out += _verifier(other, commented=True)
    return out


def render(tests: list[FoundCommand]) -> str:
    """The whole file. No line holds the word `hooks` before a colon: the agent hooks read
    the file for that key without a YAML parser, and parse it when it is there."""
    builtin = " ".join(DEFAULT_EXCLUDE)
    lines = [
        "# git checkpoint: this project's settings, read by every git checkpoint command.",
        "# Commit this file. Each key is at its default; change what your project needs.",
        "# The README's Configuration section has every key; `git checkpoint doctor` checks",
        "# the file. `git config checkpoint.*` and command-line flags override it.",
        "",
        "# Untracked files git does not ignore are saved with every checkpoint.",
        "untracked:",
        "  # Saved even though git ignores them (paths from the repository root),",
        "  # e.g. [tmp/test-fixtures/, .agent-state/]",
        "  include: []",
        "  # Never saved and never touched by a restore, on top of the built-in list",
        f"  # ({builtin}; virtualenvs, folders with a CACHEDIR.TAG and compiled",
        "  # Python are recognised as such). Each save names what it leaves out.",
        "  exclude: []",
        "",
        *_verifiers(tests),
        "",
        "# all_required_pass: the required verifiers must pass; all_pass: every one.",
        "promotion_rule: all_required_pass",
        "",
        "# What `git checkpoint prune` keeps.",
        "retention:",
        "  keep_last: 20  # the newest checkpoints of each task",
        "  max_age: 14d  # older ones go (s, m, h, d, w)",
        "  keep_promoted: true  # promoted checkpoints are never pruned",
        "  keep_safety: 10  # the newest safety checkpoints (taken before each restore)",
        "  auto: false  # true: prune the task after each save",
        "",
        "# Past a limit, a save leaves out the largest untracked files (or the fullest",
        "# folders), names them, and saves the rest; on_exceed: refuse refuses instead.",
        "limits:",
        "  overlay_max_bytes: 50MiB",
        "  overlay_max_files: 5000",
        "  on_exceed: leave_out  # leave_out | refuse",
        "",
        "# Untracked files named like secrets (.env, .env.*, *.pem, id_rsa*, ...) are never",
        "# saved (templates such as .env.example are); the scan judges what files hold.",
        "secrets:",
        "  on_save: warn  # warn | block | ignore",
        "  on_push: block  # block | warn: what a secret found on push does",
        "  allow: []  # paths or fingerprints (git checkpoint scan) saved and pushed anyway",
        "",
        "# The agent hooks and `git checkpoint guard` save before a risky command. Extra",
        "# patterns go under a top-level key named hooks, with risky_commands and",
        "# harmless_commands lists (e.g. risky_commands: [terraform apply]). It is left",
        "# out here: without it, a hook never loads a YAML parser.",
    ]
    return "\n".join(lines) + "\n"
