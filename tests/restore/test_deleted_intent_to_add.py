"""An intent-to-add entry whose file was then deleted (`git add -N f; rm f`) is in no
tree: only the manifest names it. A save must see it as a change, and a restore (undo
included) must mark it again, without leaving the file or its folders behind."""

from __future__ import annotations

from ..conftest import Repo

EMPTY = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"


def _marked_then_deleted(repo: Repo, path: str) -> None:
    repo.write(path, "x\n")
    repo.git("add", "-N", path)
    (repo.path / path).unlink()
    folder = (repo.path / path).parent
    while folder != repo.path:
        folder.rmdir()
        folder = folder.parent


def test_a_save_sees_it_and_undo_brings_it_back(repo: Repo) -> None:
    repo.cp("save", "-m", "base")
    _marked_then_deleted(repo, "ita.txt")
    assert "checkpoint saved: cp_002" in repo.cp("save", "-m", "marked").stdout
    index = repo.git("ls-files", "-s")
    assert f"100644 {EMPTY} 0\tita.txt" in index

    repo.cp("restore", "cp_001")
    assert "ita.txt" not in repo.git("ls-files", "-s")
    repo.cp("undo")
    assert repo.git("ls-files", "-s") == index
    assert repo.git("status", "--porcelain") == " D ita.txt\n"
    assert not (repo.path / "ita.txt").exists()


def test_a_nested_one_leaves_no_folder_behind(repo: Repo) -> None:
    repo.cp("save", "-m", "base")
    _marked_then_deleted(repo, "new/deep/ita.txt")
    repo.cp("save", "-m", "marked")
    index = repo.git("ls-files", "-s")
    repo.cp("restore", "cp_001")
    repo.cp("restore", "cp_002")
    assert repo.git("ls-files", "-s") == index
    assert not (repo.path / "new").exists()
    assert repo.git("status", "--porcelain") == " D new/deep/ita.txt\n"
