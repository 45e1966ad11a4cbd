"""`hooks install | uninstall | status` for the agents: merged beside what is there,
idempotent, and taken out again so that the settings files are byte for byte as before."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest

from git_checkpoint.install.git_hooks import templates_dir

from ..conftest import Repo

AGENT_FILES = {
    "claude-code": ".claude/settings.json",
    "gemini-cli": ".gemini/settings.json",
    "codex": ".codex/hooks.json",
    "cursor": ".cursor/hooks.json",
}


# Someone's settings, in a style json.dumps would not write: tabs, inline lists, no
# final newline, other hooks of each agent's shape.
EXISTING = {
    "claude-code": '{\n\t"model": "opus",\n\t"hooks": {"PreToolUse": [{"matcher": "Bash", '
    '"hooks": [{"type": "command", "command": "audit.sh"}]}]},\n\t"env": {"A": "1"}\n}',
    "gemini-cli": '{\n  "theme": "dark",\n  "hooks": {"BeforeTool": [{"matcher": "read_file", '
    '"hooks": [{"type": "command", "command": "log.sh"}]}]}\n}\n',
    "codex": '{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify.sh"}]}]}}\n',
    "cursor": '{\n    "version": 1,\n    "hooks": {\n        "stop": [{"command": "./done.sh"}]\n'
    "    }\n}\n",
}


def tree_snapshot(root: Path) -> dict[str, bytes | None]:
    """Every file and folder below root except .git: folders map to None."""
    out: dict[str, bytes | None] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for d in dirnames:
            out[os.path.relpath(os.path.join(dirpath, d), root)] = None
        for f in filenames:
            full = os.path.join(dirpath, f)
            out[os.path.relpath(full, root)] = Path(full).read_bytes()
    return out


@pytest.mark.parametrize("agent", sorted(AGENT_FILES))
def test_install_into_existing_settings_then_uninstall_is_byte_identical(
    repo: Repo, agent: str
) -> None:
    path = repo.write(AGENT_FILES[agent], EXISTING[agent])
    path.chmod(0o600)
    before = tree_snapshot(repo.path)
    repo.cp("hooks", "install", "--agent", agent)
    doc = json.loads(path.read_text())
    original = json.loads(EXISTING[agent])
    assert list(doc)[: len(original)] == list(original)  # key order kept
    for key, value in original.items():
        if key != "hooks":
            assert doc[key] == value  # other keys kept
    for event, entries in original["hooks"].items():
        assert doc["hooks"][event][: len(entries)] == entries  # other hooks kept, first
    text = path.read_text()
    assert f"git-checkpoint-hook {agent} " in text
    once = path.read_bytes()
    repo.cp("hooks", "install", "--agent", agent)  # idempotent: not a byte changes
    assert path.read_bytes() == once
    assert "installed" in repo.cp("hooks", "status", "--agent", agent).stdout
    repo.cp("hooks", "uninstall", "--agent", agent)
    assert tree_snapshot(repo.path) == before
    assert path.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("agent", sorted(AGENT_FILES))
def test_install_without_settings_then_uninstall_removes_file_and_folder(
    repo: Repo, agent: str
) -> None:
    before = tree_snapshot(repo.path)
    repo.cp("hooks", "install", "--agent", agent)
    doc = json.loads((repo.path / AGENT_FILES[agent]).read_text())
    assert doc["hooks"]
    if agent == "cursor":
        assert doc["version"] == 1
    repo.cp("hooks", "uninstall", "--agent", agent)
    assert tree_snapshot(repo.path) == before


def test_claude_entries_as_documented(repo: Repo) -> None:
    repo.cp("hooks", "install", "--agent", "claude-code")
    hooks = json.loads((repo.path / ".claude/settings.json").read_text())["hooks"]
    assert hooks == {
        "PreToolUse": [
            {
                "matcher": "Bash",
                "hooks": [
                    {"type": "command", "command": "git-checkpoint-hook claude-code PreToolUse"}
                ],
            },
            {
                "matcher": "Edit|Write|MultiEdit|NotebookEdit",
                "hooks": [
                    {"type": "command", "command": "git-checkpoint-hook claude-code PreToolUse"}
                ],
            },
        ],
        "UserPromptSubmit": [
            {
                "hooks": [
                    {
                        "type": "command",
                        "command": "git-checkpoint-hook claude-code UserPromptSubmit",
                    }
                ]
            }
        ],
    }


def test_several_agents_and_git_at_once_then_uninstall_everything(repo: Repo) -> None:
    repo.write(".claude/keep.txt", "an existing folder stays\n")
    before = tree_snapshot(repo.path)
    args = ["hooks", "install", "--git"]
    for agent in AGENT_FILES:
        args += ["--agent", agent]
    repo.cp(*args)
    status = repo.cp_json("hooks", "status")
    assert {a["agent"]: a["state"] for a in status["agents"]} == dict.fromkeys(
        AGENT_FILES, "installed"
    )
    assert {g["state"] for g in status["git"]} == {"installed"}
    repo.cp("hooks", "uninstall")  # no flags: everything installed here
    assert tree_snapshot(repo.path) == before
    status = repo.cp_json("hooks", "status")
    assert {a["state"] for a in status["agents"]} == {"not installed"}


def test_local_and_user_settings(repo: Repo) -> None:
    home = Path(os.environ["HOME"])
    repo.cp("hooks", "install", "--agent", "claude-code", "--local")
    assert (repo.path / ".claude/settings.local.json").exists()
    assert not (repo.path / ".claude/settings.json").exists()
    repo.cp("hooks", "install", "--agent", "claude-code", "--user")
    assert "git-checkpoint-hook" in (home / ".claude/settings.json").read_text()
    repo.cp("hooks", "uninstall", "--agent", "claude-code", "--local")
    assert not (repo.path / ".claude").exists()
    repo.cp("hooks", "uninstall", "--agent", "claude-code", "--user")
    assert not (home / ".claude").exists()


def test_edited_after_install_uninstall_takes_out_only_ours(repo: Repo) -> None:
    path = repo.write(".claude/settings.json", EXISTING["claude-code"])
    repo.cp("hooks", "install", "--agent", "claude-code")
    doc = json.loads(path.read_text())
    doc["permissions"] = {"allow": ["Bash(ls)"]}  # the user edits the file since
    path.write_text(json.dumps(doc, indent="\t"))
    assert "edited since install" in repo.cp("hooks", "status", "--agent", "claude-code").stdout
    repo.cp("hooks", "uninstall", "--agent", "claude-code")
    after = json.loads(path.read_text())
    assert after == {**json.loads(EXISTING["claude-code"]), "permissions": {"allow": ["Bash(ls)"]}}


def test_outdated_entry_is_reported_and_replaced(repo: Repo) -> None:
    repo.cp("hooks", "install", "--agent", "codex")
    path = repo.path / ".codex/hooks.json"
    path.write_text(path.read_text().replace("codex UserPromptSubmit", "codex Old"))
    assert "outdated" in repo.cp("hooks", "status", "--agent", "codex").stdout
    repo.cp("hooks", "install", "--agent", "codex")
    assert "installed " in repo.cp("hooks", "status", "--agent", "codex").stdout
    assert "codex Old" not in path.read_text()


def test_bad_settings_file_is_refused_untouched(repo: Repo) -> None:
    path = repo.write(".gemini/settings.json", '{"theme": "dark",}')
    proc = repo.cp("hooks", "install", "--agent", "gemini-cli", expect=2)
    assert "not valid JSON" in proc.stderr and len(proc.stderr.splitlines()) == 1
    assert path.read_text() == '{"theme": "dark",}'
    path.write_text('{"hooks": []}')
    proc = repo.cp("hooks", "install", "--agent", "gemini-cli", expect=2)
    assert "not an object" in proc.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["hooks", "install"], "name what to install"),
        (["hooks", "install", "--agent", "gemini-cli", "--local"], "no local settings"),
        (["hooks", "install", "--git", "--user"], "--user is for agent settings"),
        (["hooks", "install", "--agent", "codex", "--local", "--user"], "choose one"),
        (["hooks", "install", "--agent", "vim"], "vim"),
    ],
)
def test_usage_errors(repo: Repo, args: list[str], message: str) -> None:
    before = tree_snapshot(repo.path)
    proc = repo.cp(*args, expect=2)
    assert message in proc.stderr
    assert tree_snapshot(repo.path) == before


def test_shell_prints_the_line_to_source(repo: Repo, tmp_path: Path) -> None:
    """The installed package's own guard script; in a repository or outside any."""
    guard = templates_dir() / "shell" / "git-checkpoint-guard.sh"
    assert guard.is_file()
    outside = tmp_path / "no-repository"
    outside.mkdir()
    for cwd in (repo.path, outside):
        out = repo.cp("hooks", "install", "--shell", cwd=cwd).stdout
        assert out.splitlines()[-1] == f"  . {shlex.quote(str(guard))}"
        status = repo.cp("hooks", "status", "--shell", cwd=cwd).stdout
        assert status.splitlines()[-1] == f"  . {shlex.quote(str(guard))}"


def test_user_install_works_outside_a_repository(tmp_path: Path) -> None:
    home = Path(os.environ["HOME"])
    proc = subprocess.run(
        ["git", "checkpoint", "hooks", "install", "--agent", "cursor", "--user"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert (home / ".cursor/hooks.json").exists()
    proc = subprocess.run(
        ["git", "checkpoint", "hooks", "uninstall", "--agent", "cursor", "--user"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert not (home / ".cursor").exists()


def test_an_empty_settings_file_is_filled_and_emptied_again(repo: Repo) -> None:
    path = repo.write(".cursor/hooks.json", "")
    repo.cp("hooks", "install", "--agent", "cursor")
    assert json.loads(path.read_text())["version"] == 1
    repo.cp("hooks", "uninstall", "--agent", "cursor")
    assert path.read_bytes() == b""


def test_a_symlinked_settings_file_is_written_where_it_points(repo: Repo, tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles-settings.json"
    dotfiles.write_text('{"model": "opus"}\n')
    (repo.path / ".claude").mkdir()
    (repo.path / ".claude/settings.json").symlink_to(dotfiles)
    repo.cp("hooks", "install", "--agent", "claude-code")
    assert (repo.path / ".claude/settings.json").is_symlink()
    assert "git-checkpoint-hook" in dotfiles.read_text()
    repo.cp("hooks", "uninstall", "--agent", "claude-code")
    assert (repo.path / ".claude/settings.json").is_symlink()
    assert dotfiles.read_text() == '{"model": "opus"}\n'


def test_events_in_another_order_are_still_current(repo: Repo) -> None:
    repo.cp("hooks", "install", "--agent", "claude-code")
    path = repo.path / ".claude/settings.json"
    doc = json.loads(path.read_text())
    doc["hooks"] = dict(reversed(list(doc["hooks"].items())))  # UserPromptSubmit first
    path.write_text(json.dumps(doc, indent=2) + "\n")
    before = path.read_bytes()
    status = repo.cp_json("hooks", "status", "--agent", "claude-code")
    assert status["agents"][0]["state"] == "installed"
    assert "already installed" in repo.cp("hooks", "install", "--agent", "claude-code").stdout
    assert path.read_bytes() == before
