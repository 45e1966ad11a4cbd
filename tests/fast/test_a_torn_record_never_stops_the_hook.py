"""The hook reads its payload and its own small records (the session's turns, the quick
check's state, the cached hook patterns) as JSON without loading the json package. A
torn or hand-broken record is read as json would read it, a ValueError the reader skips
or starts afresh from, never an error that stops every later save; a payload that is
not JSON is named as json names it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from git_checkpoint.fast import patterns, turns

from ..conftest import Repo
from ..fast.test_hook_start_up import ROOT

SESSION = "s1"


def hook(
    repo: Repo, event: str, payload: dict[str, object] | str
) -> subprocess.CompletedProcess[str]:
    """The installed hook, as an agent starts it (a fresh `python -IS`)."""
    data = payload if isinstance(payload, str) else json.dumps(payload)
    return subprocess.run(
        ["git-checkpoint-hook", "claude-code", event], input=data, cwd=repo.path,
        capture_output=True, text=True, env=dict(os.environ), check=False, timeout=60,
    )  # fmt: skip


def risky(repo: Repo) -> dict[str, object]:
    return {
        "session_id": SESSION,
        "cwd": str(repo.path),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "rm -rf build"},
    }


def checkpoints(repo: Repo) -> int:
    return len(repo.git("for-each-ref", "refs/checkpoints/").splitlines())


def test_a_torn_line_of_the_session_record_is_skipped(repo: Repo) -> None:
    prompt = {"session_id": SESSION, "cwd": str(repo.path), "prompt": "go"}
    assert hook(repo, "UserPromptSubmit", prompt).returncode == 0
    record = repo.path / ".git" / Path(*turns.FOLDER) / f"claude-code-{SESSION}.jsonl"
    with record.open("a") as fh:
        fh.write('{"turn": 2, "prom')  # a writer killed half way
    repo.write("src/app.py", "print('changed')\n")
    proc = hook(repo, "PreToolUse", risky(repo))
    assert "checkpoint saved" in proc.stderr, proc.stderr
    assert checkpoints(repo) == 2


@pytest.mark.parametrize(
    "where",
    [("checkpoint", "quick", "state.json"), ("checkpoint", patterns.CACHE_NAME)],
    ids=["quick-state", "hook-patterns"],
)
def test_a_torn_record_of_the_quick_path_is_read_afresh(repo: Repo, where: tuple[str, ...]) -> None:
    if where[-1] == patterns.CACHE_NAME:  # read only when the config has hook patterns
        repo.write(".checkpoint.yaml", "hooks:\n  risky_patterns: ['make deploy']\n")
        repo.git("add", ".checkpoint.yaml")
        repo.git("commit", "-q", "-m", "hooks")
    repo.cp("save", "-m", "base")
    record = repo.path / ".git" / Path(*where)
    record.parent.mkdir(parents=True, exist_ok=True)
    record.write_text('{"version": 1, "paths": ["a')
    for n in (1, 2):  # the next call reads afresh, and so does the one after it
        repo.write("src/app.py", f"print({n})\n")
        proc = hook(repo, "PreToolUse", risky(repo))
        assert "checkpoint saved" in proc.stderr, proc.stderr
    assert checkpoints(repo) == 3


@pytest.mark.parametrize(
    "text", ['{"tool_name": "Bash" "cwd": 1}', '{"a": "\x01"}', "[1 2]", "{1: 2}", '"open', "x"]
)
def test_a_payload_that_is_not_json_is_named_as_json_names_it(repo: Repo, text: str) -> None:
    with pytest.raises(json.JSONDecodeError) as raised:
        json.loads(text)
    proc = hook(repo, "PreToolUse", text)
    assert (proc.returncode, proc.stdout) == (0, "")
    assert proc.stderr == f"git-checkpoint: hook payload is not JSON ({raised.value})\n"


def test_the_errors_are_jsons_in_a_process_without_the_json_package() -> None:
    bad = ["[1 2]", '{"a" 1}', "{1:2}", '"abc', '{"a":1,}', '"\\q"', "", "1 2", "\ufeff{}"]
    code = (
        f"import sys; sys.path.insert(0, {ROOT!r})\n"
        "from git_checkpoint.core import cjson\n"
        "for text in sys.argv[1:]:\n"
        "    try:\n"
        "        cjson.loads(text)\n"
        "    except ValueError as exc:\n"
        "        print(type(exc).__name__, exc)\n"
    )
    out = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code, *bad], capture_output=True, text=True, check=True
    )
    expected = []
    for text in bad:
        try:
            json.loads(text)
        except ValueError as exc:
            expected.append(f"{type(exc).__name__} {exc}")
    assert out.stdout.splitlines() == expected
