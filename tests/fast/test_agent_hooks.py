"""Agent hooks end to end: the documented payload of each agent piped into a real
`git-checkpoint-hook` process, then the repository checked for the checkpoint it made
(or did not make), the answer on stdout, and the exit code that lets the call go on."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
from pathlib import Path

import pytest

from ..conftest import Repo

FIXTURES = Path(__file__).parents[1] / "fixtures" / "hooks"


# What each agent's format needs on stdout to let the call go on.
ANSWER = {
    ("claude-code", "PreToolUse"): "",
    ("claude-code", "UserPromptSubmit"): "",
    ("codex", "PreToolUse"): "",
    ("codex", "UserPromptSubmit"): "",
    ("gemini-cli", "BeforeTool"): "{}",
    ("gemini-cli", "BeforeAgent"): "{}",
    ("cursor", "beforeShellExecution"): '{"permission": "allow"}',
    ("cursor", "afterFileEdit"): "{}",
    ("cursor", "beforeSubmitPrompt"): '{"continue": true}',
}


RISKY = [
    ("claude-code", "PreToolUse", "PreToolUse-Bash-risky"),
    ("codex", "PreToolUse", "PreToolUse-Bash-risky"),
    ("gemini-cli", "BeforeTool", "BeforeTool-run_shell_command-risky"),
    ("cursor", "beforeShellExecution", "beforeShellExecution-risky"),
]


HARMLESS = [
    ("claude-code", "PreToolUse", "PreToolUse-Bash-harmless"),
    ("codex", "PreToolUse", "PreToolUse-Bash-harmless"),
    ("gemini-cli", "BeforeTool", "BeforeTool-run_shell_command-harmless"),
    ("cursor", "beforeShellExecution", "beforeShellExecution-harmless"),
]


EDITS = [
    ("claude-code", "PreToolUse", "PreToolUse-Edit"),
    ("claude-code", "PreToolUse", "PreToolUse-Write"),
    ("codex", "PreToolUse", "PreToolUse-apply_patch"),
    ("gemini-cli", "BeforeTool", "BeforeTool-replace"),
    ("gemini-cli", "BeforeTool", "BeforeTool-write_file"),
    ("cursor", "afterFileEdit", "afterFileEdit"),
]


PROMPTS = [
    ("claude-code", "UserPromptSubmit", "UserPromptSubmit", "Make the login form validate emails"),
    ("codex", "UserPromptSubmit", "UserPromptSubmit", "Rename the config loader"),
    ("gemini-cli", "BeforeAgent", "BeforeAgent", "Why does the build fail on CI?"),
    ("cursor", "beforeSubmitPrompt", "beforeSubmitPrompt", "Add dark mode"),
]


def payload(agent: str, name: str, cwd: Path) -> bytes:
    text = (FIXTURES / agent / f"{name}.json").read_text()
    return text.replace("__CWD__", str(cwd)).encode()


def run_hook(
    agent: str, event: str, data: bytes, where: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        ["git-checkpoint-hook", agent, event],
        input=data.decode("utf-8", "replace"),
        cwd=where,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.splitlines()) <= 1, proc.stderr
    assert proc.stdout.strip() == ANSWER[(agent, event)]
    return proc


def checkpoints(repo: Repo) -> list[str]:
    out = repo.git("for-each-ref", "--format=%(refname)", "refs/checkpoints/")
    return out.split()


def messages(repo: Repo) -> list[str]:
    return [repo.git("log", "-1", "--format=%s", ref).strip() for ref in checkpoints(repo)]


@pytest.mark.parametrize(("agent", "event", "fixture"), RISKY)
def test_risky_shell_command_saves_first(
    repo: Repo, tmp_path: Path, agent: str, event: str, fixture: str
) -> None:
    repo.write("src/app.py", "print('work in progress')\n")
    # The hook runs from elsewhere: the payload's folder is the one that counts.
    proc = run_hook(agent, event, payload(agent, fixture, repo.path), tmp_path)
    assert len(checkpoints(repo)) == 1, proc.stderr
    assert "checkpoint saved: cp_001" in proc.stderr
    assert "before: " in messages(repo)[0]


@pytest.mark.parametrize(("agent", "event", "fixture"), HARMLESS)
def test_harmless_shell_command_saves_nothing(
    repo: Repo, tmp_path: Path, agent: str, event: str, fixture: str
) -> None:
    repo.write("src/app.py", "print('work in progress')\n")
    proc = run_hook(agent, event, payload(agent, fixture, repo.path), tmp_path)
    assert checkpoints(repo) == []
    assert proc.stderr == ""


@pytest.mark.parametrize(("agent", "event", "fixture"), EDITS)
def test_edit_saves_only_when_the_workspace_drifted(
    repo: Repo, tmp_path: Path, agent: str, event: str, fixture: str
) -> None:
    data = payload(agent, fixture, repo.path)
    repo.write("src/app.py", "print('edited by hand')\n")
    run_hook(agent, event, data, tmp_path)
    assert len(checkpoints(repo)) == 1
    run_hook(agent, event, data, tmp_path)  # nothing changed since: no new checkpoint
    assert len(checkpoints(repo)) == 1
    repo.write("src/other.py", "x = 2\n")
    run_hook(agent, event, data, tmp_path)
    assert len(checkpoints(repo)) == 2


@pytest.mark.parametrize(("agent", "event", "fixture", "first_line"), PROMPTS)
def test_prompt_makes_a_turn_checkpoint_named_after_its_first_line(
    repo: Repo, tmp_path: Path, agent: str, event: str, fixture: str, first_line: str
) -> None:
    repo.write("notes.txt", "changed in the shell, not by an edit tool\n")
    run_hook(agent, event, payload(agent, fixture, repo.path), tmp_path)
    [summary] = messages(repo)
    assert first_line in summary
    tree = repo.git("ls-tree", "-r", "--name-only", checkpoints(repo)[0] + "^3")
    assert "notes.txt" in tree  # shell changes are in the turn checkpoint too


def test_payload_cwd_in_a_subfolder_saves_the_whole_work_tree(repo: Repo, tmp_path: Path) -> None:
    repo.write("README.md", "# changed\n")
    run_hook(
        "claude-code",
        "UserPromptSubmit",
        payload("claude-code", "UserPromptSubmit", repo.path / "src"),
        tmp_path,
    )
    assert len(checkpoints(repo)) == 1


GARBAGE = [
    b"",
    b"   \n",
    b"not json at all",
    b"[1, 2, 3]",
    b'"a string"',
    b"{",
    b'{"tool_name": 5, "tool_input": "nope", "cwd": 7}',
    b'{"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": 12}}',
    b'{"tool_name": "SomethingElse", "tool_input": {}}',
    b"\xff\xfe\x00garbage",
    b'{"prompt": null, "workspace_roots": [3]}',
]


@pytest.mark.parametrize("data", GARBAGE)
@pytest.mark.parametrize(("agent", "event"), sorted(ANSWER))
def test_garbage_payloads_never_block(
    repo: Repo, tmp_path: Path, agent: str, event: str, data: bytes
) -> None:
    run_hook(agent, event, data, repo.path)  # exit 0, the answer, at most one line


@pytest.mark.parametrize(("agent", "event", "fixture"), RISKY)
def test_outside_a_repository_one_line_and_the_call_goes_on(
    tmp_path: Path, agent: str, event: str, fixture: str
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    proc = run_hook(agent, event, payload(agent, fixture, plain), tmp_path)
    assert "not inside a git work tree" in proc.stderr


def test_held_lock_is_one_line_and_the_call_goes_on(repo: Repo, tmp_path: Path) -> None:
    repo.git("config", "checkpoint.lockTimeout", "0.2")
    repo.write("src/app.py", "print('work')\n")
    lock = repo.path / ".git" / "checkpoint" / "lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        proc = run_hook(
            "claude-code",
            "PreToolUse",
            payload("claude-code", "PreToolUse-Bash-risky", repo.path),
            tmp_path,
        )
    assert "another git-checkpoint is running" in proc.stderr
    assert checkpoints(repo) == []


def test_held_lock_holds_the_agent_briefly_whatever_lock_timeout_says(
    repo: Repo, tmp_path: Path
) -> None:
    """checkpoint.lockTimeout (30 s by default) is for commands a person runs; a tool
    call waits at most entry/hook.LOCK_WAIT (2 s) before it goes on without a checkpoint."""
    import time

    repo.write("src/app.py", "print('work')\n")
    lock = repo.path / ".git" / "checkpoint" / "lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        started = time.monotonic()
        proc = run_hook(
            "claude-code",
            "PreToolUse",
            payload("claude-code", "PreToolUse-Bash-risky", repo.path),
            tmp_path,
        )
        waited = time.monotonic() - started
    assert "another git-checkpoint is running" in proc.stderr and "waited 2s" in proc.stderr
    assert waited < 15, waited  # not the 30 s of the default lockTimeout
    assert proc.returncode == 0 and checkpoints(repo) == []


def test_failing_save_is_one_line_and_the_call_goes_on(repo: Repo, tmp_path: Path) -> None:
    repo.write(".checkpoint.yaml", "limits: {overlay_max_files: 1, on_exceed: refuse}\n")
    repo.write("notes.txt", "a second untracked file\n")
    proc = run_hook(
        "cursor",
        "beforeShellExecution",
        payload("cursor", "beforeShellExecution-risky", repo.path),
        tmp_path,
    )
    assert "no checkpoint saved" in proc.stderr
    assert checkpoints(repo) == []


def test_unknown_agent_or_event_is_one_line(repo: Repo) -> None:
    for argv in (["nobody", "PreToolUse"], ["claude-code", "Nope"], []):
        proc = subprocess.run(
            ["git-checkpoint-hook", *argv],
            input="{}",
            cwd=repo.path,
            capture_output=True,
            text=True,
            check=False,
        )
        assert proc.returncode == 0
        assert proc.stdout == ""
        assert len(proc.stderr.splitlines()) == 1


def test_configured_risky_and_harmless_patterns(repo: Repo, tmp_path: Path) -> None:
    repo.write(".checkpoint.yaml", "hooks:\n  risky_commands: ['terraform apply']\n")
    repo.commit_all("config")
    repo.write("src/app.py", "print('work')\n")
    data = json.loads(payload("claude-code", "PreToolUse-Bash-harmless", repo.path))
    data["tool_input"]["command"] = "terraform apply -auto-approve"
    run_hook("claude-code", "PreToolUse", json.dumps(data).encode(), tmp_path)
    assert len(checkpoints(repo)) == 1
    cache = repo.path / ".git" / "checkpoint" / "hook-patterns.json"
    assert json.loads(cache.read_text())["risky"] == ["terraform apply"]
    run_hook("claude-code", "PreToolUse", json.dumps(data).encode(), tmp_path)  # from the cache
    assert len(checkpoints(repo)) == 1  # unchanged since: deduplicated


def test_guard_variable_stops_a_save_inside_a_save(repo: Repo, tmp_path: Path) -> None:
    repo.write("src/app.py", "print('work')\n")
    run_hook(
        "claude-code",
        "PreToolUse",
        payload("claude-code", "PreToolUse-Bash-risky", repo.path),
        tmp_path,
        env={"GIT_CHECKPOINT_HOOK_ACTIVE": "1"},
    )
    assert checkpoints(repo) == []


@pytest.mark.parametrize(
    ("agent", "event", "fixture", "summary"),
    [
        ("claude-code", "PreToolUse", "PreToolUse-Edit", "before Edit of src/app.py"),
        ("codex", "PreToolUse", "PreToolUse-apply_patch", "before apply_patch of src/app.py"),
        ("gemini-cli", "BeforeTool", "BeforeTool-write_file", "before write_file of src/new.py"),
        ("cursor", "afterFileEdit", "afterFileEdit", "after edit of src/app.py"),
    ],
)
def test_edit_checkpoint_names_the_file(
    repo: Repo, tmp_path: Path, agent: str, event: str, fixture: str, summary: str
) -> None:
    repo.write("src/app.py", "print('edited')\n")
    run_hook(agent, event, payload(agent, fixture, repo.path), tmp_path)
    assert messages(repo)[0].endswith(summary)


def test_a_fifo_for_checkpoint_yaml_never_hangs_the_hook(repo: Repo, tmp_path: Path) -> None:
    os.mkfifo(repo.path / ".checkpoint.yaml")
    proc = run_hook(
        "claude-code",
        "PreToolUse",
        payload("claude-code", "PreToolUse-Bash-harmless", repo.path),
        tmp_path,
    )
    assert proc.stderr == ""


def test_an_agent_that_closed_our_stdout_still_gets_exit_0(repo: Repo) -> None:
    for closing in (">&-", ">&- 2>&-"):  # stdout closed; stdout and stderr closed
        proc = subprocess.run(
            ["sh", "-c", f"git-checkpoint-hook cursor beforeShellExecution {closing}; echo $?"],
            input=b"not json: a line for stderr",
            capture_output=True,
            cwd=repo.path,
            check=False,
        )
        assert proc.stdout == b"0\n", proc.stderr
        assert b"Traceback" not in proc.stderr


def test_gemini_shell_directory_is_where_the_command_runs(repo: Repo, tmp_path: Path) -> None:
    data = json.loads(payload("gemini-cli", "BeforeTool-run_shell_command-harmless", repo.path))
    data["tool_input"] = {"command": "echo x > app.py", "directory": "src"}  # src/app.py exists
    repo.write("notes.txt", "work\n")
    run_hook("gemini-cli", "BeforeTool", json.dumps(data).encode(), tmp_path)
    assert len(checkpoints(repo)) == 1


def test_the_hook_answers_and_saves_in_a_pipe(repo: Repo) -> None:
    repo.write("n.txt", "new\n")
    payload = f'{{"prompt": "go", "cwd": "{repo.path}"}}'
    proc = subprocess.run(
        ["git-checkpoint-hook", "gemini-cli", "BeforeAgent"],
        cwd=repo.path, input=payload, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0 and proc.stdout == "{}\n"
    assert "checkpoint saved" in proc.stderr
