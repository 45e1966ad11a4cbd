"""The manifest a save writes in the checkpoint's message: its fields, the repository
named without credentials, the summary line, the verifiers."""

from __future__ import annotations

import re

import pytest

from ..conftest import Repo
from ..helpers import REF1
from .conftest import write_config

MANIFEST_KEYS = {
    "run_id",
    "repo",
    "task",
    "checkpoint_id",
    "base_commit",
    "branch",
    "created_at",
    "restore_strategy",
    "tracked_files",
    "untracked",
    "verifiers",
    "expected_clean_after_restore",
    "notes",
    "hypothesis",
    "next_move",
    "auto",
}


def test_manifest_fields(repo: Repo) -> None:
    import yaml

    repo.git("remote", "add", "origin", "https://github.com/owner/name.git")
    write_config(
        repo,
        "untracked:\n  include: [tmp/fixtures/]\n  exclude: [scratch/]\n"
        "verifiers:\n  - {name: unit, command: pytest -q, required: true}\n"
        "  - {name: smoke, command: make smoke, required: false}\n",
    )
    base = repo.git("rev-parse", "HEAD").strip()
    repo.write("README.md", "edited\n")
    repo.cp(
        "save",
        "-m",
        "before_html_template_edit",
        "--hypothesis",
        "the card URL is dropped",
        "--next",
        "rerun the link check",
    )
    shown = repo.cp_json("show", "cp_001", "--manifest")
    m = shown["manifest"]
    assert set(m) >= MANIFEST_KEYS
    assert m["repo"] == "owner/name"
    assert m["task"] == "main"
    assert m["checkpoint_id"] == "cp_001"
    assert m["base_commit"] == base
    assert re.fullmatch(r"[0-9a-f]{40}", m["base_commit"])
    assert m["branch"] == "main"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", str(m["created_at"]))
    assert m["restore_strategy"] == "git_plus_overlay"
    assert m["tracked_files"] == {"from_git": True}
    assert "tmp/fixtures/" in m["untracked"]["include"]
    assert "scratch/" in m["untracked"]["exclude"]
    assert "node_modules/" in m["untracked"]["exclude"]
    assert m["verifiers"] == [
        {"name": "unit", "command": "pytest -q", "required": True},
        {"name": "smoke", "command": "make smoke", "required": False},
    ]
    assert m["expected_clean_after_restore"] is True
    assert m["notes"] == ["before_html_template_edit"]
    assert m["hypothesis"] == "the card URL is dropped"
    assert m["next_move"] == "rerun the link check"
    assert m["auto"] is False
    assert str(m["run_id"]).startswith("run_")
    # the same manifest is plain YAML in the commit message, after a blank line
    raw = repo.git("cat-file", "-p", REF1)
    message = raw.split("\n\n", 1)[1]
    summary, _, body = message.partition("\n\n")
    assert summary == "checkpoint cp_001 on main: before_html_template_edit"
    assert yaml.safe_load(body) == m


def test_manifest_repo_from_scp_url_and_auto_flag(repo: Repo) -> None:
    repo.git("remote", "add", "origin", "git@github.com:acme/widgets.git")
    repo.write("README.md", "x\n")
    repo.cp("save", "--auto")
    m = repo.cp_json("show", "@", "--manifest")["manifest"]
    assert m["repo"] == "acme/widgets"
    assert m["auto"] is True
    assert m["notes"] == []
    listed = repo.cp_json("list")["checkpoints"]
    assert listed[0]["auto"] is True


def test_no_message_summary(repo: Repo) -> None:
    repo.cp("save")
    first = repo.git("log", "-1", "--format=%s", REF1).strip()
    assert first.startswith("checkpoint cp_001 on main:")
    assert repo.cp_json("list")["checkpoints"][0]["message"] == ""


def test_seed_verifier_form_in_manifest(repo: Repo) -> None:
    write_config(repo, "verifier: {command: python3 check.py}\n")
    repo.cp("save")
    m = repo.cp_json("show", "@", "--manifest")["manifest"]
    assert len(m["verifiers"]) == 1
    assert m["verifiers"][0]["command"] == "python3 check.py"
    assert m["verifiers"][0]["required"] is True


def test_origin_credentials_never_reach_the_manifest(repo: Repo) -> None:
    repo.git("remote", "add", "origin", "https://bob:s3cr3t-token@github.com/owner/name.git")
    repo.cp("save")
    raw = repo.git("cat-file", "commit", REF1)
    assert "s3cr3t" not in raw
    assert repo.cp_json("show", "@", "--manifest")["manifest"]["repo"] == "owner/name"


def test_the_run_id_and_the_creation_time_come_from_one_clock(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every time a checkpoint records is read from the same clock: two saves of the same
    state at the same (fixed) time are the same commit, whatever minute the wall shows."""
    monkeypatch.setenv("GIT_CHECKPOINT_NOW", "2026-02-01T12:34:56Z")
    repo.write("new.txt", "new\n")
    repo.cp("save", "-m", "one")
    m = repo.cp_json("show", "cp_001", "--manifest")["manifest"]
    assert (m["created_at"], m["run_id"]) == ("2026-02-01T12:34:56Z", "run_2026_02_01_1234")
