"""Manifests another machine could have written: malformed, wrongly typed, or a YAML
alias bomb. Each is refused fast as malformed, in one line, and harms nothing else."""

from __future__ import annotations

import time

import pytest

from ..conftest import Repo
from ..helpers import one_line_of, state


def _forge_manifest(repo: Repo, cp_id: str, extra_yaml: str) -> None:
    """A stash-shaped checkpoint whose manifest ends with `extra_yaml`, as a remote could."""
    head = repo.git("rev-parse", "HEAD").strip()
    index = repo.git("commit-tree", f"{head}^{{tree}}", "-p", head, "-m", "index").strip()
    message = (
        f"checkpoint {cp_id} on main: forged\n\nbase_commit: {head}\ntask: main\n"
        f"checkpoint_id: {cp_id}\nauto: false\n{extra_yaml}"
    )
    commit = repo.git(
        "commit-tree", f"{head}^{{tree}}", "-p", head, "-p", index, input=message.encode()
    ).strip()
    repo.git("update-ref", f"refs/checkpoints/main/{cp_id}", commit)


def test_yaml_alias_bomb_in_a_manifest_is_refused_fast(repo: Repo) -> None:
    rows = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    rows += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 10)]
    _forge_manifest(repo, "cp_050", "\n".join(rows) + "\nnotes: *l9\n")
    started = time.monotonic()
    proc = repo.cp("show", "cp_050", "--json", expect=2, timeout=30)
    assert "alias" in proc.stderr + proc.stdout
    listed = repo.cp_json("list", expect=0)["checkpoints"]
    assert "malformed" in listed[0]["message"]
    repo.cp("status")
    repo.cp("review", "--format", "json")
    assert time.monotonic() - started < 15


@pytest.mark.parametrize(
    "field", ["verifiers: 7", "notes: {a: 1}", "overlay: [1]", "created_at: [x]", "auto: [1]"]
)
def test_manifest_field_of_the_wrong_type_is_malformed_not_a_crash(repo: Repo, field: str) -> None:
    repo.cp("save", "-m", "mine")
    _forge_manifest(repo, "cp_051", field + "\n")
    one_line_of(repo.cp("show", "cp_051", expect=2))
    listed = repo.cp_json("list")["checkpoints"]
    assert [c["id"] for c in listed] == ["cp_001", "cp_051"]
    assert "malformed" in listed[1]["message"]
    repo.cp("status")
    repo.cp("resume")
    repo.cp("show", "cp_001")
    for fmt in ("text", "markdown", "json"):
        repo.cp("review", "--format", fmt)


@pytest.mark.parametrize(
    "manifest",
    [
        "x: " + "[" * 30000 + "]" * 30000 + "\n",
        "created_at: 2026-13-45T00:00:00Z\n",
        "- just\n- a list\n",
        "base_commit: [1, 2]\n",
        "auto: 12\n",
    ],
)
def test_malformed_manifests_are_refused_and_harm_nothing_else(repo: Repo, manifest: str) -> None:
    repo.cp("save", "-m", "good")
    head = repo.git("rev-parse", "HEAD").strip()
    index = repo.git("commit-tree", "HEAD^{tree}", "-p", "HEAD", "-m", "i").strip()
    message = f"checkpoint cp_001 on evil: x\n\n{manifest}".encode()
    bad = repo.git("commit-tree", "HEAD^{tree}", "-p", head, "-p", index, input=message).strip()
    repo.git("update-ref", "refs/checkpoints/evil/cp_001", bad)
    repo.cp("restore", "main/cp_001")  # a bad checkpoint elsewhere blocks nothing
    repo.cp("list", "--all")
    before = state(repo)
    proc = repo.cp("restore", "evil/cp_001", expect=None)
    if "created_at" in manifest:  # a bad date is only a string: the checkpoint is usable
        assert proc.returncode == 0, proc.stderr
    else:
        assert proc.returncode == 2 and "malformed" in proc.stderr
        assert state(repo) == before
    assert "Traceback" not in proc.stderr
