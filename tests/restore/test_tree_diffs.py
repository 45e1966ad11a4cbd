"""The tree-to-tree diffs a restore plans from (restore/plan) run against an empty index:
the same answer as against the real one (submodules, intent-to-add entries, sparse
checkouts), and a file where that empty index's folder would go changes nothing."""

from __future__ import annotations

from pathlib import Path

from git_checkpoint.gitcore.repo import Repo as GitRepo
from git_checkpoint.restore import plan
from git_checkpoint.save import secrets

from ..conftest import Repo, make_repo


def _submodule_trees(repo: Repo, tmp_path: Path) -> tuple[str, str]:
    """Two trees that differ in a gitlink, a regular file and an added file; .gitmodules
    (ignore = all) is in the index alone, and the repository's config says ignore too."""
    sub = make_repo(tmp_path / "sub")
    sub.write("s.txt", "one\n")
    first = sub.commit_all("one")
    sub.write("s.txt", "two\n")
    second = sub.commit_all("two")
    gitmodules = '[submodule "m"]\n\tpath = mod\n\turl = ../sub\n\tignore = all\n'
    repo.write(".gitmodules", gitmodules)
    repo.git("add", ".gitmodules")
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{first},mod")
    old = repo.git("write-tree").strip()
    repo.git("update-index", "--cacheinfo", f"160000,{second},mod")
    repo.write("README.md", "changed\n")
    repo.write("added.txt", "token = 'x'\n")
    repo.git("add", "README.md", "added.txt")
    new = repo.git("write-tree").strip()
    (repo.path / ".gitmodules").unlink()  # in the index alone now
    repo.git("config", "submodule.m.ignore", "all")
    repo.write("ita.txt", "later\n")
    repo.git("add", "-N", "ita.txt")
    return old, new


def test_diff_tree_answers_alike_with_the_empty_index(repo: Repo, tmp_path: Path) -> None:
    old, new = _submodule_trees(repo, tmp_path)
    found = GitRepo.discover(repo.path)
    argv = ["diff-tree", "-r", "-z", "--no-renames", "--ignore-submodules=none", "--raw"]
    assert found.git(*argv, old, new) == found.git(*argv, old, new, env=found.no_index())
    changes = plan._changes(found, old, new)
    assert set(changes) == {"README.md", "added.txt", "mod"}
    assert changes["added.txt"][0] is None and changes["added.txt"][1] is not None
    assert changes["mod"][1] == (0o160000, repo.git("rev-parse", f"{new}:mod").strip())
    # the secrets scan's diff-tree has no --ignore-submodules: there the empty index
    # shows the gitlink that .gitmodules in the real index hides, and the scan drops
    # gitlinks anyway, so its answer is the same
    stdin = f"{old} {new}\n{new} {new}\n{old} {new}\n".encode()
    many = ("diff-tree", "--stdin", "-r", "-z", "--no-renames")
    real = found.git(*many, stdin=stdin)
    empty = found.git(*many, stdin=stdin, env=found.no_index())
    assert b"160000" not in real and b"160000" in empty
    got = secrets.changed_files_many(found, [(old, new), (new, new), (old, new)])
    assert [sorted(p for p, _, _ in pair) for pair in got] == [
        ["README.md", "added.txt"],
        [],
        ["README.md", "added.txt"],
    ]
    assert not (repo.path / ".git" / "checkpoint" / "no-index").exists()  # never written


def test_sparse_checkout_restore_uses_the_tree_diff(repo: Repo) -> None:
    repo.write("keep/a.txt", "a\n")
    repo.write("away/b.txt", "b\n")
    repo.commit_all("two folders")
    repo.cp("save", "-m", "one")
    repo.git("sparse-checkout", "set", "keep")
    repo.write("keep/a.txt", "edited\n")
    repo.cp("restore", "cp_001", expect=None)
    assert (repo.path / "keep" / "a.txt").read_text() == "a\n"


def test_a_file_where_the_no_index_folder_goes(repo: Repo) -> None:
    """<git dir>/checkpoint/no-index is a file (anything may put one there, or an older
    tool's cache of that name). git would open .../no-index/index, get ENOTDIR, not
    ENOENT, and die 'index file open failed: Not a directory': the restore, which needs
    no index at all, must not refuse (exit 3) with 'unsafe checkpoint main/cp_001:
    unreadable tree', blaming a sound checkpoint. It restores."""
    repo.cp("save", "-m", "one")
    repo.write("README.md", "changed\n")
    (repo.path / ".git" / "checkpoint").mkdir(exist_ok=True)
    (repo.path / ".git" / "checkpoint" / "no-index").write_text("not a folder\n")
    proc = repo.cp("restore", "cp_001", expect=None)
    assert proc.returncode == 0, proc.stderr
    assert (repo.path / "README.md").read_text() != "changed\n"
