"""`git config checkpoint.*`: includes, excludes and limits that add to or override
`.checkpoint.yaml`, and bad values refused in one line that names the key."""

from __future__ import annotations

import json

import pytest

from ..conftest import Repo
from ..helpers import checkpoint_refs
from .conftest import bad_config_error, config, overlay_paths


def test_git_config_include(repo: Repo) -> None:
    repo.write(".gitignore", "*.log\nnode_modules/\ntmp/\ncache/\n")
    repo.commit_all("ignore tmp")
    repo.write("tmp/fixture.json", "{}\n")
    repo.write("cache/c.bin", "c\n")
    repo.cp("save")
    assert overlay_paths(repo) == set()
    repo.git("config", "checkpoint.include", "tmp/")
    repo.cp("save")
    assert overlay_paths(repo, "refs/checkpoints/main/cp_002") == {"tmp/fixture.json"}
    repo.git("config", "--add", "checkpoint.include", "cache/")
    repo.cp("save")
    assert overlay_paths(repo, "refs/checkpoints/main/cp_003") == {
        "tmp/fixture.json",
        "cache/c.bin",
    }


def test_git_config_include_adds_to_file_include(repo: Repo) -> None:
    repo.write(".gitignore", "a/\nb/\n")
    repo.commit_all("ignore")
    config(repo, "untracked:\n  include: [a/]\n")
    repo.git("config", "checkpoint.include", "b/")
    repo.write("a/1", "1\n")
    repo.write("b/2", "2\n")
    repo.cp("save")
    assert overlay_paths(repo) == {"a/1", "b/2", ".checkpoint.yaml"}


def test_git_config_exclude(repo: Repo) -> None:
    repo.git("config", "checkpoint.exclude", "scratch/")
    repo.git("config", "checkpoint.include", "scratch/")
    repo.write("scratch/x", "x\n")
    repo.write("kept", "k\n")
    repo.cp("save")
    assert overlay_paths(repo) == {"kept"}


def test_git_config_overlay_max_files_overrides_file(repo: Repo) -> None:
    config(repo, "limits: {overlay_max_files: 100}\n")
    repo.git("add", ".checkpoint.yaml")
    repo.git("commit", "-q", "-m", "config")
    for n in range(4):
        repo.write(f"gen/{n}.txt", f"{n}\n")
    repo.git("config", "checkpoint.overlayMaxFiles", "3")
    proc = repo.cp("save")
    assert "left out: gen/ (4 files" in proc.stdout and "over overlay_max_files" in proc.stdout
    repo.git("config", "checkpoint.overlayMaxFiles", "4")
    assert "left out" not in repo.cp("save").stdout


def test_git_config_overlay_max_bytes(repo: Repo) -> None:
    repo.write("blob/big.bin", b"x" * 2000)
    repo.git("config", "checkpoint.overlayMaxBytes", "1KiB")
    proc = repo.cp("save")
    assert "left out: blob/big.bin (2.0 KiB, over overlay_max_bytes" in proc.stdout
    repo.git("config", "checkpoint.overlayMaxBytes", "2KiB")
    assert "left out" not in repo.cp("save").stdout


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("checkpoint.overlayMaxFiles", "many"),
        ("checkpoint.overlayMaxFiles", "0"),
        ("checkpoint.overlayMaxBytes", "huge"),
        ("checkpoint.promotionRule", "sometimes"),
        ("checkpoint.secretsOnSave", "maybe"),
        ("checkpoint.nosuchkey", "1"),
    ],
)
def test_bad_git_config(repo: Repo, key: str, value: str) -> None:
    repo.git("config", key, value)
    err = bad_config_error(repo, "verify")
    assert key.lower() in err.lower()
    assert checkpoint_refs(repo) == []


@pytest.mark.parametrize("value", ["../up", ".git/", "/abs/path"])
def test_git_config_include_must_stay_in_the_work_tree(repo: Repo, value: str) -> None:
    repo.git("config", "checkpoint.include", value)
    err = bad_config_error(repo, "verify")
    assert "checkpoint.include" in err


def test_empty_git_config_include_is_a_config_error(repo: Repo) -> None:
    repo.git("config", "checkpoint.include", "")
    err = bad_config_error(repo, "verify")
    assert "checkpoint.include" in err


def test_flag_include_with_git_config(repo: Repo) -> None:
    repo.write(".gitignore", "*.log\n")
    repo.commit_all("ignore")
    repo.git("config", "checkpoint.include", "a.log")
    repo.write("a.log", "a\n")
    repo.write("b.log", "b\n")
    data = json.loads(repo.cp("save", "--json", "--include", "b.log").stdout)
    assert data["overlay_files"] == 2
    assert overlay_paths(repo) == {"a.log", "b.log"}
