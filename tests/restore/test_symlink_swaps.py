"""An attempt replaces a tracked folder by a symlink (to a tracked folder, to outside, or
looping). The restore removes the symlink and makes the folder again; what the symlink
shows is never taken for the paths below it, never written through, never refused as
"outside the managed set"; an ignored symlink over a hidden folder is refused."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ..conftest import Repo
from ..helpers import fingerprint, state
from .conftest import full_state, hidden_and_edited


@pytest.mark.parametrize("inside", [True, False], ids=["to-a-tracked-folder", "to-outside"])
def test_a_folder_swapped_for_a_symlink_comes_back(
    repo: Repo, tmp_path: Path, inside: bool
) -> None:
    repo.write("a/x.txt", "A\n")
    repo.write("b/x.txt", "B\n")
    repo.write("b/only-b.txt", "only b\n")
    repo.commit_all("two folders")
    repo.cp("save", "-m", "base")
    saved = state(repo)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.txt").write_text("outside\n")
    for child in (repo.path / "b").iterdir():
        child.unlink()
    (repo.path / "b").rmdir()
    (repo.path / "b").symlink_to("a" if inside else outside)
    attempt = state(repo)

    repo.cp("restore", "cp_001")

    assert state(repo) == saved
    assert (repo.path / "a/x.txt").read_text() == "A\n"
    assert (outside / "x.txt").read_text() == "outside\n"
    repo.cp("undo")
    assert state(repo) == attempt
    assert (repo.path / "b").is_symlink()


@pytest.mark.parametrize("depth", ["top", "deep"])
def test_a_deep_folder_swapped_for_a_symlink_to_outside_is_never_followed(
    repo: Repo, tmp_path: Path, depth: str
) -> None:
    swapped = "b" if depth == "top" else "a/b/c"
    repo.write(f"{swapped}/x.txt", "tracked x\n")
    repo.write(f"{swapped}/sub/y.txt", "tracked y\n")
    repo.commit_all("folders")
    repo.cp("save", "-m", "base")
    saved = full_state(repo)
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "x.txt").write_text("outside x\n")
    (outside / "sub/y.txt").write_text("outside y\n")
    (outside / "extra.txt").write_text("outside extra\n")
    shutil.rmtree(repo.path / swapped)
    (repo.path / swapped).symlink_to(outside)
    attempt = full_state(repo)
    outside_before = fingerprint(outside)

    repo.cp("restore", "cp_001")
    assert full_state(repo) == saved
    assert fingerprint(outside) == outside_before
    repo.cp("undo")
    assert full_state(repo) == attempt
    assert fingerprint(outside) == outside_before


def test_an_ignored_symlink_over_a_hidden_folder_is_refused_and_outside_untouched(
    repo: Repo, tmp_path: Path
) -> None:
    hidden_and_edited(repo)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "todo.txt").write_text("outside\n")
    shutil.rmtree(repo.path / "notes")
    (repo.path / "notes").symlink_to(outside)
    with open(repo.path / ".gitignore", "a") as fh:
        fh.write("notes\n")  # the symlink itself ignored: not managed, never removed
    before = full_state(repo)

    proc = repo.cp("restore", "cp_001", expect=3)
    assert "symlink" in proc.stderr and "Traceback" not in proc.stderr
    assert full_state(repo) == before
    assert (outside / "todo.txt").read_text() == "outside\n"


def test_a_folder_swapped_for_a_looping_symlink_comes_back(repo: Repo) -> None:
    repo.write("d/e/f.txt", "f\n")
    repo.commit_all("deep")
    repo.cp("save", "-m", "base")
    saved = full_state(repo)
    shutil.rmtree(repo.path / "d/e")
    (repo.path / "d/e").symlink_to("e")
    attempt = state(repo)

    repo.cp("restore", "cp_001")
    assert full_state(repo) == saved
    repo.cp("undo")
    assert state(repo) == attempt
