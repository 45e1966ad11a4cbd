"""Codex skips hooks it does not trust, without a word: `hooks status` says so in
agreement with Codex's own list, and `hooks install --trust` makes Codex run them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..install.test_codex_runs_only_trusted_hooks import CODEX_HASHES
from .conftest import trust_codex_hooks
from .harness import AgentRun, checkpoints, only_local
from .steps import shell


def codex_status(run: AgentRun) -> dict[str, Any]:
    doc = run.repo.cp_json("hooks", "status", "--agent", "codex")
    [state] = [a for a in doc["agents"] if a["scope"] == "project"]
    return dict(state)


def test_untrusted_hooks_never_run_and_status_says_so(
    agent_in_project: Callable[..., AgentRun],
) -> None:
    run = agent_in_project("codex", trust=False)
    assert codex_status(run)["runs"] is False
    result = run.run("clean up", shell("codex", "git reset --hard"))
    result.check()
    only_local(result)
    assert run.calls() == []  # Codex ran none of them
    assert checkpoints(run.repo) == []


def test_trusted_hooks_run_and_status_agrees_with_codex(
    agent_in_project: Callable[..., AgentRun],
) -> None:
    run = agent_in_project("codex", trust=False)
    hooks_file = run.repo.path / ".codex" / "hooks.json"
    untrusted = codex_status(run)
    trust_codex_hooks(run)
    assert codex_status(run)["runs"] is True
    # The hashes the status computed are the ones Codex recorded through its app server.
    config = (run.home / ".codex" / "config.toml").read_text()
    for suffix, digest in CODEX_HASHES.items():
        assert f'[hooks.state."{hooks_file}:{suffix}"]\ntrusted_hash = "{digest}"' in config
        assert f'trusted_hash = "{digest}"' in untrusted["trust_fix"]
    result = run.run("clean up", shell("codex", "git reset --hard"))
    result.check()
    only_local(result)
    assert [c.event for c in run.calls()] == ["UserPromptSubmit", "PreToolUse"]
    assert [c["message"] for c in checkpoints(run.repo)] == ["before prompt: clean up"]
