"""Codex runs a project's hooks only when the project is trusted and each hook's hash is
recorded as trusted in its config.toml; `hooks status` says when it will not run ours,
and exactly what to add. (tests/agents/ checks the same against the real Codex.)"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from ..conftest import Repo

# The hashes Codex 0.171.0 reported (`codex app-server`, hooks/list, currentHash) for the
# entries `hooks install --agent codex` writes.
CODEX_HASHES = {
    "pre_tool_use:0:0": "sha256:22b85666fc1022740670e52cd5917f3232fc1f85a560f98019c9f3a821f89713",
    "pre_tool_use:1:0": "sha256:65bc818a620da9eb7fcc28f1074757085a8b09b2c1cf9632c1b2aae67c492b2b",
    "user_prompt_submit:0:0": (
        "sha256:a53f6f8142ea6e55daa089cdd71ebd5130c4ad7ddeca8e37e4e98ac9abe4b465"
    ),
}


def codex_state(repo: Repo) -> dict[str, Any]:
    doc = repo.cp_json("hooks", "status", "--agent", "codex")
    [state] = [a for a in doc["agents"] if a["scope"] == "project"]
    return dict(state)


def config_toml() -> Path:
    home = Path(os.environ.get("CODEX_HOME") or Path(os.environ["HOME"]) / ".codex")
    home.mkdir(parents=True, exist_ok=True)
    return home / "config.toml"


def toml_of(state: dict[str, Any]) -> str:
    """The config.toml lines the status gives to trust them."""
    return str(state["trust_fix"]).split(":\n", 1)[1] + "\n"


def test_untrusted_hooks_are_reported_as_not_run(repo: Repo) -> None:
    out = repo.cp("hooks", "install", "--agent", "codex").stdout
    assert "codex runs them once trusted" in out
    state = codex_state(repo)
    assert state["state"] == "installed"
    assert state["runs"] is False
    assert f"the project {repo.path} is not trusted" in state["not_run_because"]
    assert "3 of 3 hooks are untrusted" in state["not_run_because"]
    assert "--agent codex --trust" in state["trust_fix"]
    human = repo.cp("hooks", "status", "--agent", "codex").stdout
    assert "codex will not run them" in human


def test_the_lines_it_gives_make_them_run(repo: Repo) -> None:
    repo.cp("hooks", "install", "--agent", "codex")
    toml = toml_of(codex_state(repo))
    hooks_file = repo.path / ".codex" / "hooks.json"
    for suffix, digest in CODEX_HASHES.items():  # the hashes Codex itself computes
        assert f'[hooks.state."{hooks_file}:{suffix}"]\ntrusted_hash = "{digest}"' in toml
    config_toml().write_text('model = "o3"\n\n' + toml)
    state = codex_state(repo)
    assert state["runs"] is True
    assert state["not_run_because"] is None and state["trust_fix"] is None
    assert "will not run" not in repo.cp("hooks", "status", "--agent", "codex").stdout


def test_a_trusted_project_with_untrusted_hooks_still_runs_none(repo: Repo) -> None:
    repo.cp("hooks", "install", "--agent", "codex")
    config_toml().write_text(f'[projects."{repo.path}"]\ntrust_level = "trusted"\n')
    state = codex_state(repo)
    assert state["runs"] is False
    assert state["not_run_because"].startswith("3 of 3 hooks are untrusted")


def test_a_hook_trusted_with_another_hash_is_modified(repo: Repo) -> None:
    repo.cp("hooks", "install", "--agent", "codex")
    toml = toml_of(codex_state(repo))
    config_toml().write_text(toml.replace(CODEX_HASHES["pre_tool_use:0:0"], "sha256:0000"))
    state = codex_state(repo)
    assert state["runs"] is False
    assert state["not_run_because"].startswith("1 of 3 hooks are modified")


def test_a_project_marked_untrusted_is_not_run(repo: Repo) -> None:
    repo.cp("hooks", "install", "--agent", "codex")
    toml = toml_of(codex_state(repo)).replace('"trusted"\n', '"untrusted"\n', 1)
    config_toml().write_text(toml)
    state = codex_state(repo)
    assert state["runs"] is False
    assert "is not trusted" in state["not_run_because"]


def test_codex_home_is_where_the_trust_is_read(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.cp("hooks", "install", "--agent", "codex")
    toml = toml_of(codex_state(repo))
    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    config_toml().write_text(toml)
    assert codex_state(repo)["runs"] is True
    monkeypatch.delenv("CODEX_HOME")
    assert codex_state(repo)["runs"] is False


def test_a_linked_worktree_counts_the_main_work_tree_trust(repo: Repo, tmp_path: Path) -> None:
    linked = tmp_path / "linked"
    repo.git("worktree", "add", "-q", str(linked))
    other = Repo(linked)
    other.cp("hooks", "install", "--agent", "codex")
    toml = toml_of(codex_state(other))
    assert f'[projects."{linked}"]' in toml
    config_toml().write_text(toml.replace(f'[projects."{linked}"]', f'[projects."{repo.path}"]'))
    assert codex_state(other)["runs"] is True


def test_user_hooks_need_no_project_trust(repo: Repo) -> None:
    repo.cp("hooks", "install", "--agent", "codex", "--user")
    doc = repo.cp_json("hooks", "status", "--agent", "codex", "--user")
    [state] = doc["agents"]
    assert state["runs"] is False
    assert "project" not in state["not_run_because"]
    toml = str(state["trust_fix"]).split(":\n", 1)[1]
    assert "[projects." not in toml
    config_toml().write_text(toml + "\n")
    [state] = repo.cp_json("hooks", "status", "--agent", "codex", "--user")["agents"]
    assert state["runs"] is True


def test_other_agents_have_no_trust_to_report(repo: Repo) -> None:
    repo.cp("hooks", "install", "--agent", "claude-code", "--agent", "gemini-cli")
    doc = repo.cp_json("hooks", "status")
    for state in doc["agents"]:
        if state["agent"] != "codex":
            assert state["runs"] is None


def test_an_unreadable_codex_config_is_named(repo: Repo) -> None:
    repo.cp("hooks", "install", "--agent", "codex")
    config_toml().write_text("[projects\n")
    state = codex_state(repo)
    assert state["runs"] is False
    assert state["not_run_because"].startswith(f"cannot read {config_toml()}")


def test_trust_needs_codex_on_path(repo: Repo) -> None:
    folders = os.environ["PATH"].split(os.pathsep)
    env = {"PATH": os.pathsep.join(p for p in folders if not (Path(p) / "codex").exists())}
    proc = repo.cp("hooks", "install", "--agent", "codex", "--trust", expect=2, env=env)
    assert "codex is not on PATH" in proc.stderr
    assert not config_toml().exists()


@pytest.mark.parametrize(
    "args",
    [
        ["hooks", "status", "--agent", "codex", "--trust"],
        ["hooks", "uninstall", "--agent", "codex", "--trust"],
        ["hooks", "install", "--agent", "claude-code", "--trust"],
    ],
)
def test_trust_is_for_installing_codex_hooks(repo: Repo, args: list[str]) -> None:
    proc = repo.cp(*args, expect=2)
    assert "--trust is for hooks install --agent codex" in proc.stderr
    assert json.loads(repo.cp("hooks", "status", "--json").stdout)["agents"]
