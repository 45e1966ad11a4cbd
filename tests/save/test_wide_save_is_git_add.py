"""A wide save (past save/graft.SPLIT_HASHING files, hashed by two git processes side by
side) records the tree `git add -u` makes, byte for byte, whatever attributes, settings,
modes or odd files are about, and every object is in git's store."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from git_checkpoint.save.graft import SPLIT_HASHING

from ..conftest import Repo
from ..helpers import state

WIDE = SPLIT_HASHING + 60


def _truth(repo: Repo) -> str:
    """The work-tree tree `git add -u` makes of a copy of the index."""
    index = repo.path / ".git" / "truth-index"
    env = {**os.environ, "GIT_INDEX_FILE": str(index)}
    shutil.copy2(repo.path / ".git" / "index", index)  # its date too: racy entries stay racy
    subprocess.run(["git", "add", "-u"], cwd=repo.path, env=env, check=True, capture_output=True)
    tree = subprocess.run(
        ["git", "write-tree"], cwd=repo.path, env=env, check=True, capture_output=True, text=True
    ).stdout.strip()
    index.unlink()
    return tree


def _saved_tree(repo: Repo, cp_id: str = "cp_002") -> str:
    refs = repo.git("for-each-ref", "--format=%(refname)", "refs/checkpoints/").split()
    (ref,) = [r for r in refs if r.endswith(f"/{cp_id}")]
    return repo.git("rev-parse", ref + "^{tree}").strip()


def _wide(repo: Repo, setup: str) -> None:
    if setup == "text-auto":
        repo.write(".gitattributes", "* text=auto\n")
    elif setup == "filter":
        repo.write(".gitattributes", "*.up filter=upper\n")
        repo.git("config", "filter.upper.clean", "tr a-z A-Z")
        repo.git("config", "filter.upper.smudge", "cat")
    elif setup == "ident":
        repo.write(".gitattributes", "*.txt ident\n")
    elif setup == "autocrlf":
        repo.git("config", "core.autocrlf", "true")
    elif setup == "filemode-off":
        repo.git("config", "core.fileMode", "false")
    for i in range(WIDE):
        repo.write(f"d{i % 9}/f{i:04}.txt", f"line {i}\n")
    repo.write("x.up", "lower case\n")
    repo.write("tool.sh", "#!/bin/sh\n")
    os.symlink("d0", repo.path / "link")
    repo.commit_all("wide")
    repo.cp("save", "-m", "before")
    for i in range(WIDE):
        repo.write(f"d{i % 9}/f{i:04}.txt", f"line {i} edited\n")
    repo.write("d1/f0001.txt", "crlf\r\nhere\r\n")
    repo.write("d2/f0002.txt", "$Id$ kept\n")
    repo.write("x.up", "still lower\n")
    repo.write("tool.sh", "#!/bin/sh\necho edited\n")
    os.chmod(repo.path / "tool.sh", 0o755)  # core.fileMode false: git keeps 100644
    os.remove(repo.path / "link")
    os.symlink("d1", repo.path / "link")
    os.remove(repo.path / "d3/f0003.txt")


@pytest.mark.parametrize(
    "setup", ["plain", "text-auto", "filter", "ident", "autocrlf", "filemode-off"]
)
def test_the_wide_saves_tree_is_the_one_git_add_makes(repo: Repo, setup: str) -> None:
    _wide(repo, setup)
    expected = _truth(repo)
    assert "checkpoint saved: cp_002" in repo.cp("save", "-m", "wide edit").stdout
    got = _saved_tree(repo)
    assert got == expected, repo.git("diff-tree", "-r", expected, got)[:600]
    repo.git("fsck", "--strict", "--no-dangling")
    listed = repo.git("ls-tree", "-r", expected).split("\n")[:-1]
    blobs = "".join(line.split()[2] + "\n" for line in listed)
    missing = repo.git("cat-file", "--batch-check", input=blobs.encode())
    assert "missing" not in missing


def test_the_saved_bytes_come_back(repo: Repo) -> None:
    _wide(repo, "plain")
    saved = state(repo)
    repo.cp("save", "-m", "wide edit")
    repo.cp("restore", "cp_001")
    assert (repo.path / "d4/f0004.txt").read_text() == "line 4\n"
    repo.cp("restore", "cp_002")
    assert state(repo) == saved
