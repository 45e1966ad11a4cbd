"""Agent sessions and turns: the hooks record each checkpoint's session, agent and turn
(the prompt's index within the session, and Codex's own turn id), `list --session` and
`list --sessions` show them apart, and `restore --before-turn N` brings back the workspace
as it was before prompt N, shell changes included. Driven with the payloads the real
agents send (tests/fixtures/agent_payloads)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from ..conftest import Repo
from ..helpers import fingerprint

PAYLOADS = Path(__file__).parents[1] / "fixtures" / "agent_payloads"


def payload(agent: str, name: str, repo: Repo, **changes: Any) -> dict[str, Any]:
    text = (PAYLOADS / agent / f"{name}.json").read_text()
    text = text.replace("__CWD__", str(repo.path)).replace("__HOME__", str(Path.home()))
    data: dict[str, Any] = json.loads(text)
    data.update(changes)
    return data


def hook(agent: str, event: str, data: dict[str, Any], cwd: Path) -> str:
    proc = subprocess.run(
        ["git-checkpoint-hook", agent, event],
        input=json.dumps(data), capture_output=True, text=True, cwd=cwd,
        env={**os.environ}, check=True, timeout=60,
    )  # fmt: skip
    return proc.stderr


def prompt(repo: Repo, agent: str, session: str, text: str, **extra: Any) -> str:
    event = {"claude-code": "UserPromptSubmit", "codex": "UserPromptSubmit"}.get(
        agent, "BeforeAgent"
    )
    data = payload(agent, event, repo, session_id=session, prompt=text, **extra)
    return hook(agent, event, data, repo.path)


def shell(repo: Repo, agent: str, session: str, command: str, **extra: Any) -> str:
    name = "BeforeTool-run_shell_command" if agent == "gemini-cli" else "PreToolUse-Bash"
    data = payload(agent, name, repo, session_id=session, **extra)
    data["tool_input"] = {**data["tool_input"], "command": command}
    data["tool_input"].pop("dir_path", None)
    event = name.split("-", 1)[0]
    return hook(agent, event, data, repo.path)


@pytest.fixture
def project(repo: Repo) -> Repo:
    repo.write("src/app.py", "print('v0')\n")
    repo.commit_all("app")
    return repo


def test_before_turn_brings_back_the_workspace_before_that_prompt(project: Repo) -> None:
    sid = "5275b130-8f49-4dba-9697-33dc174bb284"
    project.write("src/app.py", "print('before turn 1')\n")
    assert "checkpoint saved" in prompt(project, "claude-code", sid, "make it v1")
    turn1 = fingerprint(project.path)
    # Turn 1's work, made through the shell (no edit tool): a file changed and one added.
    project.write("src/app.py", "print('v1')\n")
    project.write("src/new.py", "made by a shell command\n")
    prompt(project, "claude-code", sid, "now v2")
    turn2 = fingerprint(project.path)
    project.write("src/app.py", "print('v2')\n")
    (project.path / "src/new.py").unlink()

    shown = project.cp("restore", "--before-turn", "2").stdout
    assert "workspace matches" in shown
    assert fingerprint(project.path) == turn2
    project.cp("restore", "--before-turn", "1")
    assert fingerprint(project.path) == turn1
    project.cp("undo")
    assert fingerprint(project.path) == turn2
    listed = project.cp_json("list", "--session", sid[:8])["checkpoints"]
    assert [c["session"]["turn"] for c in listed] == [1, 2]
    assert {c["session"]["agent"] for c in listed} == {"claude-code"}


def test_an_unchanged_workspace_still_marks_the_turn(project: Repo) -> None:
    sid = "8c4601ce-36ed-4913-84c8-c1bd016778d7"
    project.write("notes.txt", "draft\n")
    project.cp("save", "-m", "by hand")  # the workspace is saved already
    before = fingerprint(project.path)
    assert "checkpoint saved" not in prompt(project, "gemini-cli", sid, "go")
    project.write("notes.txt", "the agent's change\n")
    project.cp("restore", "--before-turn", "1")
    assert fingerprint(project.path) == before


def test_two_agents_sessions_in_one_worktree_never_mix(project: Repo) -> None:
    a, b = "01a24ae7-d451-7ac0-a4a5-cb46207696ea", "5275b130-8f49-4dba-9697-33dc174bb284"
    project.write("a.txt", "a0\n")
    prompt(project, "codex", a, "codex turn 1", turn_id="t-a-1")
    project.write("b.txt", "b0\n")
    prompt(project, "claude-code", b, "claude turn 1")
    before_b1 = fingerprint(project.path)
    project.write("a.txt", "a1\n")
    shell(project, "codex", a, "git checkout -- . && rm -f b.txt", turn_id="t-a-1")
    project.write("b.txt", "b1\n")
    prompt(project, "codex", a, "codex turn 2", turn_id="t-a-2")

    listed_a = project.cp_json("list", "--session", a)["checkpoints"]
    listed_b = project.cp_json("list", "--session", b)["checkpoints"]
    assert {c["session"]["id"] for c in listed_a} == {a}
    assert {c["session"]["id"] for c in listed_b} == {b}
    assert not {c["id"] for c in listed_a} & {c["id"] for c in listed_b}
    assert [c["session"].get("turn_id") for c in listed_a] == ["t-a-1", "t-a-1", "t-a-2"]
    sessions = project.cp_json("list", "--sessions")["sessions"]
    assert [(s["agent"], s["id"], s["turns"]) for s in sessions] == [
        ("claude-code", b, 1),
        ("codex", a, 2),
    ]
    # The latest session is codex's; claude's turn 1 by name.
    project.cp("restore", "--before-turn", "1", "--session", b[:6])
    assert fingerprint(project.path) == before_b1
    assert (
        "turns 1 to 1, not 2"
        in project.cp("restore", "--before-turn", "2", "--session", b, expect=2).stderr
    )
    shown = project.cp("show", listed_b[0]["id"]).stdout
    assert f"session:  claude-code {b}, turn 1" in shown


def test_before_turn_without_recorded_turns_says_how_to_get_them(project: Repo) -> None:
    proc = project.cp("restore", "--before-turn", "1", expect=2)
    assert "no agent turns recorded" in proc.stderr and "hooks install" in proc.stderr
    assert (
        "--session goes with --before-turn"
        in project.cp("restore", "--session", "x", expect=2).stderr
    )
