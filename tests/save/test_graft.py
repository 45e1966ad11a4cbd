"""W grafted on the index tree (save/graft) must be the tree `git add -u` + `write-tree`
give on a copy of the index, in every case the scan can report: edits, mode changes,
deletions (down to emptied folders), symlinks, `add -N` entries in new folders, submodule
commits, filters, odd names and index formats. Each case is checked against git's own
answer."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from git_checkpoint.config.model import Config
from git_checkpoint.gitcore.repo import Repo as GitRepo
from git_checkpoint.gitcore.scan import scan
from git_checkpoint.save.capture import capture_workspace
from git_checkpoint.save.graft import graft

from ..conftest import Repo, make_repo


def reference_tree(repo: Repo) -> str:
    """What `add -u` + `write-tree` make of the work tree, on a copy of the index."""
    index = repo.path / ".git" / "ref-index"
    shutil.copy2(repo.path / ".git" / "index", index)
    env = {**os.environ, "GIT_INDEX_FILE": str(index)}
    for argv in (["add", "-u"], ["write-tree"]):
        proc = subprocess.run(
            ["git", *argv], cwd=repo.path, env=env, capture_output=True, check=True
        )
    index.unlink()
    return proc.stdout.decode().strip()


def grafted(repo: Repo) -> str | None:
    """graft() fed by a scan of the real index, as capture_workspace feeds it."""
    gr = GitRepo.discover(repo.path)
    index_tree = repo.git("write-tree").strip()
    scanned = scan(gr, repo.path / ".git" / "index", read_only=True)
    assert not scanned.unmerged
    return graft(gr, index_tree, {p: scanned.modes[p] for p in scanned.changed})


@pytest.fixture
def big(tmp_path: Path) -> Repo:
    r = make_repo(tmp_path / "work")
    for d in ("a", "a/b", "a/b/c", "a.b", "a-b", "z"):
        for n in range(3):
            r.write(f"{d}/f{n}.txt", f"{d} {n}\n")
    r.write("a/b/c/run.sh", "#!/bin/sh\n", mode=0o755)
    r.write("top.txt", "top\n")
    os.symlink("top.txt", r.path / "link")
    r.commit_all("base")
    return r


def check(repo: Repo) -> None:
    want = reference_tree(repo)
    got = grafted(repo)
    assert got == want
    repo.git("cat-file", "-e", f"{got}^{{tree}}")


def test_no_change_is_the_index_tree(big: Repo) -> None:
    assert grafted(big) == big.git("write-tree").strip()


def test_edits_at_every_depth(big: Repo) -> None:
    for rel in ("top.txt", "a/f0.txt", "a/b/f1.txt", "a/b/c/f2.txt", "a.b/f0.txt"):
        big.write(rel, f"edited {rel}\n")
    check(big)


def test_mode_changes_both_ways(big: Repo) -> None:
    (big.path / "a/b/c/run.sh").chmod(0o644)
    (big.path / "z/f1.txt").chmod(0o755)
    check(big)


def test_deletions_empty_folders_drop_out(big: Repo) -> None:
    for n in range(3):
        (big.path / f"a/b/c/f{n}.txt").unlink()
    (big.path / "a/b/c/run.sh").unlink()  # a/b/c is now empty: gone from W
    (big.path / "z/f0.txt").unlink()
    check(big)


def test_file_becomes_folder_and_link_changes(big: Repo) -> None:
    (big.path / "top.txt").unlink()
    (big.path / "top.txt").mkdir()  # the tracked file is gone; the folder is untracked
    (big.path / "link").unlink()
    os.symlink("a/f0.txt", big.path / "link")  # a new target
    (big.path / "z/f2.txt").unlink()
    os.symlink("f1.txt", big.path / "z/f2.txt")  # a file turned into a link
    check(big)


def test_link_turned_into_file(big: Repo) -> None:
    (big.path / "link").unlink()
    big.write("link", "now a file\n")
    check(big)


def test_intent_to_add_in_new_folders(big: Repo) -> None:
    big.write("new/deep/er/file.py", "x = 1\n")
    big.write("a/b/new.txt", "n\n")
    big.git("add", "-N", "new/deep/er/file.py", "a/b/new.txt")
    check(big)


def test_odd_names_sort_as_git_sorts_them(big: Repo) -> None:
    names = ["sp ace.txt", "ünï.txt", "a b/x", "tab\there", "-dash", "a.b.c", "a0", "a/"]
    for name in names[:-1]:
        big.write(name, "0\n")
    big.commit_all("odd")
    for name in names[:-1]:
        big.write(name, f"changed {name}\n")
    check(big)


def test_clean_filter_and_autocrlf_apply(big: Repo) -> None:
    big.write(".gitattributes", "*.txt text eol=lf\n*.up filter=upper\n")
    big.git("config", "filter.upper.clean", "tr a-z A-Z")
    big.write("x.up", "lower\n")
    big.commit_all("attrs")
    big.write("x.up", "still lower\n")
    big.write("a/f0.txt", "crlf\r\nline\r\n")
    check(big)
    assert b"STILL LOWER" in big.git("cat-file", "-p", f"{grafted(big)}:x.up").encode()


def test_core_filemode_false_keeps_the_index_mode(big: Repo) -> None:
    big.git("config", "core.fileMode", "false")
    (big.path / "a/b/c/run.sh").chmod(0o644)
    big.write("a/b/c/run.sh", "#!/bin/sh\necho changed\n")
    check(big)


def test_many_files_hash_in_two_parts(big: Repo) -> None:
    for n in range(450):
        big.write(f"many/{n % 7}/f{n}.txt", f"{n}\n")
    big.commit_all("many")
    for n in range(0, 450, 2):
        big.write(f"many/{n % 7}/f{n}.txt", f"{n} changed\n")
    check(big)


def test_submodule_at_another_commit(big: Repo, tmp_path: Path) -> None:
    sub = make_repo(tmp_path / "sub")
    sub.write("s.txt", "1\n")
    sub.commit_all("one")
    big.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub.path), "mod")
    big.commit_all("with submodule")
    inner = Repo(big.path / "mod")
    inner.write("s.txt", "2\n")
    inner.commit_all("two")
    check(big)


def test_every_tracked_file_gone_is_left_to_add_u(big: Repo) -> None:
    for rel in big.git("ls-files", "-z").split("\0"):
        if rel:
            os.unlink(big.path / rel)
    assert grafted(big) is None  # the caller's add -u writes the empty tree
    snap = capture_workspace(GitRepo.discover(big.path), Config())
    assert snap.worktree_tree == reference_tree(big)


def test_newline_in_a_name_is_left_to_add_u(big: Repo) -> None:
    big.write("new\nline.txt", "0\n")
    big.commit_all("newline")
    big.write("new\nline.txt", "1\n")
    assert grafted(big) is None
    snap = capture_workspace(GitRepo.discover(big.path), Config())
    assert snap.worktree_tree == reference_tree(big)


def test_capture_uses_the_graft_and_matches_git(big: Repo) -> None:
    big.write("a/f1.txt", "changed\n")
    (big.path / "z/f2.txt").unlink()
    big.write("untracked.txt", "u\n")
    snap = capture_workspace(GitRepo.discover(big.path), Config())
    assert snap.worktree_tree == reference_tree(big)
    assert snap.index_tree == big.git("write-tree").strip()
    assert snap.overlay_files == ("untracked.txt",)


@pytest.mark.parametrize("setting", ["core.splitIndex=true", "index.version=4"])
def test_save_under_a_split_or_v4_index_is_add_u(repo: Repo, setting: str) -> None:
    """graft's scratch index in another form: ls-files reads it, W is still add -u's."""
    key, value = setting.split("=")
    repo.git("config", key, value)
    repo.write("src/app.py", "print('edited')\n")
    repo.write("docs/new.md", "untracked\n")
    repo.cp("save", "-m", "one")
    repo.git("add", "-u")
    assert (
        repo.git("write-tree").strip()
        == repo.git("rev-parse", "refs/checkpoints/main/cp_001^{tree}").strip()
    )
