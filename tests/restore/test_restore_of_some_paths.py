"""`restore CP -- PATH…`: one file or folder back from a checkpoint, its index entries
too, with a safety checkpoint of its own that `undo` goes back to; nothing outside the
paths is written, removed or staged, HEAD stays."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from ..conftest import Repo
from ..helpers import fingerprint


def index(repo: Repo) -> dict[str, str]:
    out = repo.git("ls-files", "-s", "-z")
    return {line.split("\t", 1)[1]: line.split("\t", 1)[0] for line in out.split("\0") if line}


@pytest.fixture
def saved(repo: Repo) -> Repo:
    repo.write("src/app.py", "v1\n")
    repo.write("src/util.py", "util v1\n")
    repo.write("docs/a.md", "docs v1\n")
    repo.commit_all("base")
    repo.write("src/app.py", "v2 staged\n")
    repo.git("add", "src/app.py")
    repo.write("src/app.py", "v2 unstaged\n")
    repo.write("src/new.py", "new in cp_001\n")  # overlay
    repo.write("docs/a.md", "docs v2\n")
    repo.cp("save", "-m", "good")  # cp_001
    # The agent's damage, and work elsewhere that must stay.
    repo.write("src/app.py", "broken\n")
    repo.git("add", "src/app.py")
    (repo.path / "src/new.py").unlink()
    repo.write("src/extra.py", "the agent's new file\n")
    repo.write("docs/a.md", "docs v3, keep me\n")
    repo.write("notes.txt", "keep me too\n")
    return repo


def test_one_folder_comes_back_and_nothing_else_changes(saved: Repo) -> None:
    before = fingerprint(saved.path)
    staged_before = index(saved)
    head = saved.git("rev-parse", "HEAD")
    proc = saved.cp("restore", "cp_001", "--", "src")
    assert (
        proc.stdout.splitlines()[-1] == "src matches cp_001" and "safety checkpoint" in proc.stdout
    )
    after = fingerprint(saved.path)
    assert (saved.path / "src/app.py").read_text() == "v2 unstaged\n"
    assert (saved.path / "src/new.py").read_text() == "new in cp_001\n"
    assert not (saved.path / "src/extra.py").exists()  # the folder is as it was in cp_001
    for rel in ("docs/a.md", "notes.txt"):
        assert after[rel] == before[rel]  # outside the paths: untouched
    now = index(saved)
    assert now["src/app.py"] != staged_before["src/app.py"]  # its index entry came back
    assert saved.git("show", ":src/app.py") == "v2 staged\n"
    assert {k: v for k, v in now.items() if not k.startswith("src/")} == {
        k: v for k, v in staged_before.items() if not k.startswith("src/")
    }
    assert saved.git("rev-parse", "HEAD") == head
    saved.cp("undo")
    assert fingerprint(saved.path) == before and index(saved) == staged_before


def test_one_file_from_a_subfolder_and_a_dry_run(saved: Repo) -> None:
    before = fingerprint(saved.path)
    dry = json.loads(
        saved.cp("restore", "cp_001", "--dry-run", "--json", "--", "src/app.py").stdout
    )
    assert dry["would_bring_back"] == ["src/app.py"] and dry["would_remove"] == []
    assert fingerprint(saved.path) == before
    sub = saved.path / "src"
    proc = subprocess.run(
        ["git", "checkpoint", "restore", "cp_001", "--", "app.py"],
        cwd=sub, capture_output=True, text=True, env=dict(os.environ), check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert (sub / "app.py").read_text() == "v2 unstaged\n"
    assert (sub / "extra.py").exists() and not (sub / "new.py").exists()


def test_paths_that_match_nothing_or_leave_the_work_tree_are_refused(saved: Repo) -> None:
    before = fingerprint(saved.path)
    for argv, said in (
        (["cp_001", "--", "nowhere.txt"], "is in neither"),
        (["cp_001", "--", "../outside"], "outside the work tree"),
        (["--continue", "--", "src"], "--continue takes no"),
    ):
        proc = saved.cp("restore", *argv, expect=2)
        assert said in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert fingerprint(saved.path) == before


def test_the_api_restores_paths(saved: Repo) -> None:
    from git_checkpoint import api

    report = api.restore("cp_001", repo=saved.path, paths=["docs/a.md"])
    assert report.brought_back == ["docs/a.md"]
    assert (saved.path / "docs/a.md").read_text() == "docs v2\n"
    assert (saved.path / "src/app.py").read_text() == "broken\n"


def test_a_path_restore_is_undone_in_a_linked_worktree_too(saved: Repo, tmp_path: Path) -> None:
    saved.git("worktree", "add", "-q", str(tmp_path / "wt"), "HEAD")
    other = Repo(tmp_path / "wt")
    other.write("src/app.py", "in the worktree\n")
    other.cp("save", "-m", "wt")
    other.write("src/app.py", "changed\n")
    other.write("src/util.py", "changed too\n")
    other.cp("restore", "@", "--", "src/app.py")
    assert (other.path / "src/app.py").read_text() == "in the worktree\n"
    assert (other.path / "src/util.py").read_text() == "changed too\n"


def test_a_restore_of_two_paths_says_they_match(repo: Repo) -> None:
    repo.write("a.txt", "v1\n")
    repo.write("b.txt", "v1\n")
    repo.cp("save", "-m", "good")
    repo.write("a.txt", "v2\n")
    repo.write("b.txt", "v2\n")
    proc = repo.cp("restore", "cp_001", "--", "a.txt", "b.txt")
    assert proc.stdout.splitlines()[-1] == "a.txt, b.txt match cp_001"
