"""A tracked folder replaced by a symlink that loops (`d/a -> a`): git's status meets
ELOOP below such a link, says so on stderr and skips the tracked files there (below any
other symlink it counts them as deleted). The save reads that, so the checkpoint is one
a restore accepts, and a restore over such a link brings the folder back; on the staged
capture path, ignored, and in an include folder alike."""

from __future__ import annotations

import os

from ..conftest import Repo
from ..helpers import state


def _folder_then_loop(repo: Repo) -> None:
    repo.write("d/a/x.txt", "x\n")
    repo.write("d/a/y.txt", "y\n")
    repo.commit_all("a folder")
    for name in ("x.txt", "y.txt"):
        (repo.path / "d" / "a" / name).unlink()
    (repo.path / "d" / "a").rmdir()
    os.symlink("a", repo.path / "d" / "a")


def test_a_looping_link_saved_beside_an_assume_unchanged_file_restores(repo: Repo) -> None:
    """One assume-unchanged entry sends the save down the staged path (`add -u`): there too
    the tracked d/a/*.txt git skips at ELOOP must not be kept beside the link d/a, a
    checkpoint no restore would accept."""
    repo.git("update-index", "--assume-unchanged", "README.md")
    _folder_then_loop(repo)
    repo.cp("save", "-m", "the link")
    looped = state(repo)
    repo.write("src/app.py", "changed\n")
    proc = repo.cp("restore", "cp_001", expect=None)
    # exit 3: "unsafe checkpoint: 'd/a' is both tracked and untracked"
    assert proc.returncode == 0, proc.stderr
    assert state(repo) == looped


def test_a_restore_over_an_ignored_looping_link_brings_the_folder_back(repo: Repo) -> None:
    """A looping link that .gitignore matches (the fixture ignores *.log) is in no
    untracked list: git skips the tracked files below it all the same, and the restore
    must not write nothing there and say the workspace matches (below a non-looping
    ignored link it refuses honestly)."""
    repo.write("d/x.log/f.txt", "f\n")
    repo.git("add", "-f", "d/x.log/f.txt")
    repo.git("commit", "-q", "-m", "a folder named like an ignored file")
    repo.cp("save", "-m", "folder")
    saved = state(repo)
    (repo.path / "d" / "x.log" / "f.txt").unlink()
    (repo.path / "d" / "x.log").rmdir()
    os.symlink("x.log", repo.path / "d" / "x.log")
    proc = repo.cp("restore", "cp_001", expect=None)
    if "workspace matches" in proc.stdout:
        assert state(repo) == saved, "restore claimed 'workspace matches' over the loop"
        assert (repo.path / "d" / "x.log" / "f.txt").read_text() == "f\n"


def test_a_looping_link_in_an_include_folder_is_saved_and_restored_over(repo: Repo) -> None:
    """The same through untracked.include: a tracked folder below an included ignored
    folder (node_modules/ is ignored by the fixture) replaced by a looping link. The save
    must not say 'unchanged since cp_001', nor a restore of cp_001 write nothing below the
    link yet say the workspace matches."""
    repo.write("node_modules/pkg/f.txt", "f\n")
    repo.git("add", "-f", "node_modules/pkg/f.txt")
    repo.write(".checkpoint.yaml", "untracked:\n  include: [node_modules/]\n")
    repo.commit_all("an included folder")
    repo.cp("save", "-m", "folder")
    saved = state(repo)
    (repo.path / "node_modules" / "pkg" / "f.txt").unlink()
    (repo.path / "node_modules" / "pkg").rmdir()
    os.symlink("pkg", repo.path / "node_modules" / "pkg")
    proc = repo.cp("save", "-m", "the link", expect=None)
    assert "unchanged" not in proc.stdout, "the folder replaced by a link counted as no change"
    proc = repo.cp("restore", "cp_001", expect=None)
    if "workspace matches" in proc.stdout:
        assert state(repo) == saved, "restore claimed 'workspace matches' over the loop"


def _with_loop(repo: Repo) -> None:
    repo.write("d/a/x.txt", "x\n")
    repo.write("d/a/y.txt", "y\n")
    repo.commit_all("a folder")


def _loop(repo: Repo) -> None:
    for name in ("x.txt", "y.txt"):
        (repo.path / "d" / "a" / name).unlink()
    (repo.path / "d" / "a").rmdir()
    os.symlink("a", repo.path / "d" / "a")


def test_a_restore_over_a_looping_link_brings_the_folder_back_and_undo_the_link(
    repo: Repo,
) -> None:
    _with_loop(repo)
    repo.cp("save", "-m", "folder")
    saved = state(repo)
    _loop(repo)
    looped = state(repo)
    proc = repo.cp("restore", "cp_001")
    assert "workspace matches cp_001" in proc.stdout
    assert state(repo) == saved
    assert (repo.path / "d" / "a" / "x.txt").read_text() == "x\n"
    repo.cp("undo")
    assert state(repo) == looped
    assert os.readlink(repo.path / "d" / "a") == "a"


def test_a_save_beside_a_looping_link_restores(repo: Repo) -> None:
    _with_loop(repo)
    _loop(repo)
    repo.cp("save", "-m", "the link")
    looped = state(repo)
    tree = repo.git("rev-parse", "refs/checkpoints/main/cp_001^{tree}").strip()
    listed = repo.git("ls-tree", "-r", "--name-only", tree).split()
    assert "d/a/x.txt" not in listed  # gone from W, as below any other symlink
    os.unlink(repo.path / "d" / "a")
    repo.git("checkout", "--", "d")  # the folder back, the link gone
    repo.cp("restore", "cp_001")
    assert state(repo) == looped
