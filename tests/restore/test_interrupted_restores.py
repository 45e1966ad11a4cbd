"""A restore killed at a chosen git call (a `git` wrapper first on PATH): `--continue`
keeps what changed after the interruption and loses no file the sweep would have
covered, `undo` goes back, a file that became a folder mid-restore is kept with its
contents, and `drop` keeps what the pending restore needs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ..conftest import Repo
from ..helpers import state
from .conftest import JOURNAL, direct, interrupted, trapped


def test_continue_saves_what_changed_after_the_interruption(two: Repo, tmp_path: Path) -> None:
    interrupted(two, tmp_path, "restore", "cp_001", on="add --refresh")
    assert (two.path / "a.txt").read_text() == "one\n"  # written before the kill
    two.write("a.txt", "edited after the kill\n")
    two.write("c.txt", "made after the kill\n")
    out = two.cp("restore", "--continue").stdout
    assert "workspace matches cp_001" in out
    assert not (two.path / "c.txt").exists()
    two.cp("undo")
    assert (two.path / "a.txt").read_text() == "edited after the kill\n"
    assert (two.path / "c.txt").read_text() == "made after the kill\n"


def _ignored_residue(repo: Repo) -> None:
    """cp_001 ignores nothing; the workspace ignores scratch/, which holds notes."""
    repo.cp("save", "-m", "rules without scratch")
    repo.write(".gitignore", "*.log\nnode_modules/\nscratch/\n")
    repo.write("scratch/notes.txt", "my notes\n")


@pytest.mark.parametrize("recovery", ["continue", "undo"])
def test_killed_before_the_sweep_loses_no_uncovered_file(
    repo: Repo, tmp_path: Path, recovery: str
) -> None:
    _ignored_residue(repo)
    before = state(repo)
    # the first git call once the restored .gitignore is back in place
    interrupted(repo, tmp_path, "restore", "cp_001", on=" ", when="! grep -q scratch .gitignore")
    assert (repo.path / ".gitignore").read_text() == "*.log\nnode_modules/\n"
    if recovery == "undo":
        repo.cp("undo")
        assert state(repo) == before
        return
    repo.cp("restore", "--continue")
    assert not (repo.path / "scratch/notes.txt").exists()
    repo.cp("undo")
    assert (repo.path / "scratch/notes.txt").read_text() == "my notes\n"


def test_a_file_that_becomes_a_folder_mid_restore_is_left_with_its_contents(
    two: Repo, tmp_path: Path
) -> None:
    env = trapped(
        two,
        tmp_path,
        "check-attr",  # the staging step
        "rm a.txt && mkdir a.txt && echo precious > a.txt/new-work.txt",
        any_index=True,
    )
    proc = direct(two, "restore", "cp_001", env=env)
    assert proc.returncode == 3 and "a.txt" in proc.stderr, proc.stderr
    assert (two.path / "a.txt/new-work.txt").read_text() == "precious\n"
    two.cp("restore", "--continue")  # keeps the folder in a safety checkpoint, then finishes
    assert (two.path / "a.txt").read_text() == "one\n"
    two.cp("undo")
    assert (two.path / "a.txt/new-work.txt").read_text() == "precious\n"


def test_drop_keeps_what_a_pending_restore_needs_and_undo_works(two: Repo, tmp_path: Path) -> None:
    before = state(two)
    interrupted(two, tmp_path, "restore", "cp_001", on="add --refresh")
    journal = json.loads((two.path / JOURNAL).read_text())
    proc = two.cp("drop", journal["safety_name"].split("/")[-1], expect=3)
    assert "interrupted restore needs it" in proc.stderr
    two.cp("undo")
    assert state(two) == before
