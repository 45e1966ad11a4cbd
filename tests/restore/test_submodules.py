"""Submodules and a restore: one at another commit is reported, not called clean; one in
the place of a file the target holds is refused before anything is written; one the
target has where the workspace has a folder, a file or nothing is left as git's checkout
leaves it (an empty folder), and said so."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..conftest import Repo, make_repo
from ..helpers import state
from .conftest import copy_repo


def test_a_submodule_elsewhere_is_reported_not_called_clean(repo: Repo, tmp_path: Path) -> None:
    sub = make_repo(tmp_path / "sub")
    sub.write("s.txt", "1\n")
    first = sub.commit_all("s1")
    sub.write("s.txt", "2\n")
    sub.commit_all("s2")
    repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub.path), "lib")
    repo.git("-C", "lib", "checkout", "-q", first)
    repo.commit_all("submodule at s1")
    repo.cp("save", "-m", "at s1")
    repo.git("-C", "lib", "checkout", "-q", "main")
    out = repo.cp("restore", "cp_001").stdout
    assert "submodule not restored" in out and "lib is at" in out
    assert "but for the submodules" in out


def test_replacing_a_submodule_with_a_file_is_refused_before_writing(
    repo: Repo, tmp_path: Path
) -> None:
    sub = make_repo(tmp_path / "sub")
    sub.write("s", "s\n")
    sub.commit_all("s")
    repo.write("sub", "a file\n")
    repo.commit_all("file")
    repo.cp("save")
    repo.git("rm", "-q", "sub")
    repo.git("commit", "-qm", "rm")
    repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub.path), "sub")
    repo.git("commit", "-qm", "submodule")
    repo.write("sub/w.txt", "work in the submodule\n")
    before = state(repo)
    proc = repo.cp("restore", "cp_001", "--keep-head", expect=3)
    assert "submodule 'sub'" in proc.stderr
    assert state(repo) == before
    assert not (repo.path / ".git/checkpoint/restore-journal.json").exists()


# --- a submodule where the workspace has a folder, a file or nothing ------------------


def _gitlink_checkpoint(repo: Repo, at: str) -> str:
    """A checkpoint whose tracked tree and index are HEAD's with a submodule at `at`
    (HEAD's commit) in place of whatever HEAD has there; its tree."""
    head = repo.git("rev-parse", "HEAD").strip()
    rows = [line for line in repo.git("ls-tree", "HEAD").splitlines() if line.split("\t")[1] != at]
    tree = repo.git(
        "mktree", input="".join(f"{r}\n" for r in [*rows, f"160000 commit {head}\t{at}"]).encode()
    ).strip()
    index = repo.git("commit-tree", tree, "-p", head, "-m", "index").strip()
    message = (
        f"checkpoint cp_099 on main: forged\n\nbase_commit: {head}\ntask: main\n"
        "checkpoint_id: cp_099\nauto: false\n"
    )
    commit = repo.git("commit-tree", tree, "-p", head, "-p", index, "-m", message).strip()
    repo.git("update-ref", "refs/checkpoints/main/cp_099", commit)
    return tree


@pytest.mark.parametrize("was", ["folder", "file", "nothing"])
def test_a_submodule_where_the_workspace_had_none_is_left_as_git_checkout_leaves_it(
    repo: Repo, tmp_path: Path, was: str
) -> None:
    """git's checkout of that tree (read-tree -u) is the oracle: the files there go, an
    empty folder stands for the submodule, the index holds it; the report says what was
    there and how to fill it, never `git -C sub checkout` (which would run in this
    repository); undo puts back what was there."""
    if was == "folder":
        repo.write("sub/a.txt", "a\n")
        repo.write("sub/deep/b.txt", "b\n")
    elif was == "file":
        repo.write("sub", "a file\n")
    if was != "nothing":
        repo.commit_all("what was there")
    tree = _gitlink_checkpoint(repo, "sub")
    before = state(repo)
    oracle = copy_repo(repo, tmp_path / "oracle")
    oracle.git("read-tree", "-u", "--reset", tree)
    out = repo.cp("restore", "cp_099").stdout
    assert state(repo) == state(oracle)
    assert repo.git("status", "--porcelain") == oracle.git("status", "--porcelain")
    assert (repo.path / "sub").is_dir() and not any((repo.path / "sub").iterdir())
    line = next(x for x in out.splitlines() if x.startswith("submodule not restored"))
    had = {"folder": "a folder", "file": "a file", "nothing": "nothing"}[was]
    assert f"where the workspace had {had}" in line and "git -C" not in line, line
    assert "git submodule update --init -- sub" in line
    repo.cp("undo")
    assert state(repo) == before
