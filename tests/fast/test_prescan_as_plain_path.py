"""The same workspace through the launcher (`git-checkpoint`, with the early scan) and
through the plain path (`python -m git_checkpoint`, without): the same checkpoint, or the
same failure in the same words, for every shape of repository the early scan reads
itself (HEAD from its files, packed refs, linked worktrees, submodules, split indexes)
or leaves to git (a foreign owner, an unknown ref storage, NUL bytes, a work tree
elsewhere)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from git_checkpoint.gitcore.locate import find_repo, head_commit

from ..conftest import Repo, make_repo
from ..helpers import latest_ref, saved_paths, trees
from ..launcher import early_calls, launch, lock_free, logged, no_traceback, run_plain, scratch_left
from .conftest import copy_of, fresh_copy, git_head


def status_runs(calls: list[str]) -> tuple[int, int]:
    """(the early scan's status calls, the save path's own status calls)."""
    runs = [c for c in calls if "status --porcelain=v2" in c]
    early = [c for c in runs if c.startswith("-C ")]
    return len(early), len(runs) - len(early)


def files_head(path: Path) -> str | None:
    found = find_repo(str(path))
    assert found is not None
    with open(os.path.join(found.git_dir, "HEAD"), encoding="utf-8") as fh:
        return head_commit(found.common_dir, fh.read())


# --- HEAD's commit read from files as git reads it, and the early scan taken ---------------


def _packed(repo: Repo) -> Repo:
    repo.git("pack-refs", "--all")
    assert not (repo.path / ".git/refs/heads/main").exists()
    return repo


def _detached(repo: Repo) -> Repo:
    repo.git("checkout", "-q", "--detach")
    return repo


def _packed_detached(repo: Repo) -> Repo:
    return _detached(_packed(repo))


def _worktree_packed(repo: Repo) -> Repo:
    """A linked worktree on a branch that is in packed-refs only (HEAD in the worktree's
    git dir, the ref in the common dir)."""
    repo.git("branch", "side")
    repo.git("pack-refs", "--all")
    wt = Repo(repo.path.parent / "wt")
    repo.git("worktree", "add", "-q", str(wt.path), "side")
    assert not (repo.path / ".git/refs/heads/side").exists()
    return wt


SHAPES = {
    "packed": _packed,
    "detached": _detached,
    "packed-detached": _packed_detached,
    "worktree-packed": _worktree_packed,
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_head_commit_agrees_with_git_and_the_early_scan_is_taken(repo: Repo, shape: str) -> None:
    work = SHAPES[shape](repo)
    assert files_head(work.path) == git_head(work)
    work.write("src/app.py", "changed\n")
    work.write("new.txt", "untracked\n")
    calls = logged(work, "save", "-m", shape)
    assert status_runs(calls) == (1, 0)  # the early scan's result used, none run again
    w, u = saved_paths(
        work, work.git("for-each-ref", "--format=%(refname)", "refs/checkpoints").split()[-1]
    )
    assert "src/app.py" in w and u == ["new.txt"]
    assert work.git("show", "HEAD:src/app.py") == "print('hello')\n"


def test_an_unborn_branch_takes_the_early_scan_and_saves_as_the_plain_path(
    empty_repo: Repo, tmp_path: Path
) -> None:
    empty_repo.write("a.txt", "staged\n")
    empty_repo.git("add", "a.txt")
    empty_repo.write("b.txt", "untracked\n")
    assert files_head(empty_repo.path) is None and git_head(empty_repo) is None
    twin = copy_of(empty_repo, tmp_path / "twin")
    calls = logged(empty_repo, "save", "-m", "unborn")
    assert status_runs(calls) == (1, 0)
    assert run_plain(twin, "save", "-m", "unborn").returncode == 0
    ref = "refs/checkpoints/main/cp_001"
    assert saved_paths(empty_repo, ref) == saved_paths(twin, ref) == (["a.txt"], ["b.txt"])


def test_a_head_symref_to_a_symref_is_never_a_wrong_commit(repo: Repo) -> None:
    """HEAD -> refs/heads/alias -> refs/heads/main: head_commit gives None (git knows);
    the early scan is then dropped (base differs), a slower path, never a wrong base."""
    repo.git("symbolic-ref", "refs/heads/alias", "refs/heads/main")
    repo.git("symbolic-ref", "HEAD", "refs/heads/alias")
    assert files_head(repo.path) in (None, git_head(repo))
    repo.write("src/app.py", "changed\n")
    calls = logged(repo, "save", "-m", "alias")
    assert sum(status_runs(calls)) >= 1
    base = repo.git("log", "-1", "--format=%P", "refs/checkpoints/alias/cp_001", check=False)
    if not base:  # the task may be named for main
        refs = repo.git("for-each-ref", "--format=%(refname)", "refs/checkpoints").split()
        base = repo.git("log", "-1", "--format=%P", refs[-1])
    assert base.split()[0] == git_head(repo)
    assert scratch_left(repo.path / ".git") == [] and lock_free(repo.path / ".git")


def test_an_unknown_ref_storage_fails_as_the_plain_path_and_leaves_no_scratch(
    repo: Repo, tmp_path: Path
) -> None:
    """extensions.refStorage (reftable) on this git (2.39): git refuses the repository;
    the early scan must not turn that into something else."""
    repo.git("config", "core.repositoryformatversion", "1")
    repo.git("config", "extensions.refStorage", "reftable")
    twin = copy_of(repo, tmp_path / "twin")
    ours = launch(repo, "save", "-m", "x", expect=None)
    theirs = run_plain(twin, "save", "-m", "x")
    assert ours.returncode == theirs.returncode != 0
    no_traceback(ours)
    assert len(ours.stderr.strip().splitlines()) == 1, ours.stderr
    assert scratch_left(repo.path / ".git") == [] and lock_free(repo.path / ".git")


# --- a repository the early scan will not write into, but git takes ------------------------


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the repository away")
def test_a_foreign_repository_allowed_by_safe_directory_saves_as_the_plain_path(
    repo: Repo, tmp_path: Path
) -> None:
    """Owned by another user, allowed by safe.directory='*': the early scan will not write
    into it (fast/prescan._ours says no), so the save takes the plain path (slower), and
    must succeed as `python -m git_checkpoint` does."""
    home = Path(os.environ["HOME"])
    with open(home / ".gitconfig", "a", encoding="utf-8") as fh:
        fh.write("[safe]\n\tdirectory = *\n")
    repo.write("src/app.py", "changed\n")
    repo.write("new.txt", "untracked\n")
    twin = copy_of(repo, tmp_path / "twin")
    for r in (repo, twin):
        for dirpath, dirnames, filenames in os.walk(r.path):
            for name in [*dirnames, *filenames]:
                os.lchown(os.path.join(dirpath, name), 4242, 4242)
        os.lchown(r.path, 4242, 4242)
    calls = logged(repo, "save", "-m", "foreign")
    assert status_runs(calls) == (0, 1)  # no early scan: the plain path's own status
    proc = run_plain(twin, "save", "-m", "foreign")
    assert proc.returncode == 0, proc.stderr
    ref = "refs/checkpoints/main/cp_001"
    assert saved_paths(repo, ref) == saved_paths(twin, ref)
    assert scratch_left(repo.path / ".git") == [] and lock_free(repo.path / ".git")


def test_a_split_index_saves_as_the_plain_path(repo: Repo, tmp_path: Path) -> None:
    repo.git("config", "core.splitIndex", "true")
    repo.git("update-index", "--split-index")
    repo.write("src/app.py", "changed\n")
    repo.write("README.md", "staged\n")
    repo.git("add", "README.md")
    repo.write("new.txt", "untracked\n")
    twin = copy_of(repo, tmp_path / "twin")
    calls = logged(repo, "save", "-m", "split")
    assert status_runs(calls)[0] == 1
    proc = run_plain(twin, "save", "-m", "split")
    assert proc.returncode == 0, proc.stderr
    ref = "refs/checkpoints/main/cp_001"
    assert trees(repo, ref) == trees(twin, ref)
    assert scratch_left(repo.path / ".git") == [] and lock_free(repo.path / ".git")
    assert repo.git("status", "--porcelain") == twin.git("status", "--porcelain")


# --- repositories found differently by the walk and by git ---------------------------------


def _worktree_elsewhere(repo: Repo, tmp_path: Path, name: str) -> tuple[Path, Path]:
    """A git dir in HOLDER/.git whose core.worktree names another folder (git's work
    tree; the walk up from HOLDER takes HOLDER for it)."""
    holder = tmp_path / f"{name}-holder"
    holder.mkdir()
    tree = tmp_path / f"{name}-tree"
    subprocess.run(["cp", "-a", str(repo.path), str(tree)], check=True)
    (tree / ".git").rename(holder / ".git")
    subprocess.run(["git", "config", "core.worktree", str(tree)], cwd=holder, check=True)
    (tree / "src/app.py").write_text("changed\n")
    (tree / "new.txt").write_text("untracked\n")
    return holder, tree


def test_core_worktree_elsewhere_fails_as_the_plain_path(repo: Repo, tmp_path: Path) -> None:
    holder, _ = _worktree_elsewhere(repo, tmp_path, "ours")
    twin_holder, _ = _worktree_elsewhere(repo, tmp_path, "twin")
    ours = launch(repo, "save", "-m", "x", expect=None, cwd=holder)
    theirs = run_plain(repo, "save", "-m", "x", cwd=twin_holder)
    # Both exit 4 (`not a git repository`, said of the same git call): the save path
    # runs git in the work tree core.worktree names, which has no .git (not the early
    # scan's doing).
    assert (ours.returncode, ours.stderr) == (theirs.returncode, theirs.stderr)
    no_traceback(ours)
    assert scratch_left(holder / ".git") == [] and lock_free(holder / ".git")


# --- bytes git takes that the early scan's Python does not ---------------------------------


def test_a_nul_in_heads_symref_saves_as_the_plain_path(repo: Repo, tmp_path: Path) -> None:
    repo.write("src/app.py", "changed\n")
    (repo.path / ".git/HEAD").write_bytes(b"ref: refs/heads/ma\0in\n")
    twin = copy_of(repo, tmp_path / "twin")
    theirs = run_plain(twin, "save", "-m", "x")
    assert theirs.returncode == 0, theirs.stderr
    ours = launch(repo, "save", "-m", "x", expect=None)
    no_traceback(ours)
    assert ours.returncode == theirs.returncode
    assert scratch_left(repo.path / ".git") == []


def test_a_git_file_with_a_nul_fails_as_the_plain_path(repo: Repo, tmp_path: Path) -> None:
    work = tmp_path / "gitfile"
    work.mkdir()
    (work / ".git").write_bytes(b"gitdir: " + str(repo.path / ".g").encode() + b"\0it\n")
    theirs = run_plain(repo, "save", "-m", "x", cwd=work)
    ours = launch(repo, "save", "-m", "x", expect=None, cwd=work)
    no_traceback(ours)
    assert (ours.returncode, ours.stderr) == (theirs.returncode, theirs.stderr)


# --- odd workspaces, worktrees and submodules ----------------------------------------------


def _sparse(repo: Repo) -> None:
    repo.write("in/i", "i\n")
    repo.write("out/o", "o\n")
    repo.commit_all("tree")
    repo.git("sparse-checkout", "set", "in")
    repo.write("in/i", "i2\n")
    repo.write("in/new", "n\n")


def _flagged(repo: Repo) -> None:
    repo.write("a", "a\n")
    repo.write("b", "b\n")
    repo.commit_all("ab")
    repo.git("update-index", "--assume-unchanged", "a")
    repo.git("update-index", "--skip-worktree", "b")
    repo.write("a", "a2\n")
    repo.write("b", "b2\n")
    repo.write("README.md", "changed\n")


def _no_index(repo: Repo) -> None:
    (repo.path / ".git/index").unlink()
    repo.write("README.md", "changed\n")


def _unicode(repo: Repo) -> None:
    repo.write("fi le ü.txt", "x\n")
    repo.commit_all("u")
    repo.write("fi le ü.txt", "y\n")
    repo.write("néw dir/ñ", "n\n")


def _intent(repo: Repo) -> None:
    repo.write("planned.py", "p\n")
    repo.git("add", "-N", "planned.py")


def _staged(repo: Repo) -> None:
    repo.write("src/app.py", "staged\n")
    repo.git("add", "src/app.py")
    repo.write("src/app.py", "unstaged\n")
    repo.write("new/untracked.txt", "u\n")
    repo.write("x.log", "ignored\n")


ODD = {
    "sparse": _sparse,
    "assume-unchanged+skip-worktree": _flagged,
    "no-index-file": _no_index,
    "unicode-and-spaces": _unicode,
    "intent-to-add": _intent,
    "staged-and-unstaged": _staged,
}


@pytest.mark.parametrize("where", ["top", "subfolder", "symlinked"])
@pytest.mark.parametrize("case", sorted(ODD))
def test_the_early_scan_saves_what_the_plain_path_saves(
    tmp_path: Path, case: str, where: str
) -> None:
    """The same workspace saved through the launcher (early scan) and through cli.main
    (no early scan): the same W, base, I and U trees."""
    a = make_repo(tmp_path / "a w")
    a.write("README.md", "# project\n")
    a.write("src/app.py", "print('hello')\n")
    a.write(".gitignore", "*.log\n")
    a.commit_all("initial")
    ODD[case](a)
    b = fresh_copy(a, tmp_path / "b w")
    cwd_a, cwd_b = a.path, b.path
    if where == "subfolder":
        for r in (a, b):  # a sparse checkout has no src/: a plain folder then
            (r.path / "src").mkdir(exist_ok=True)
        cwd_a, cwd_b = a.path / "src", b.path / "src"
    elif where == "symlinked":
        link = tmp_path / "link"
        link.symlink_to(a.path)
        cwd_a = link
    early = a.cp("save", "-m", "same", cwd=cwd_a)
    plain = run_plain(b, "save", "-m", "same", cwd=cwd_b)
    assert plain.returncode == 0, plain.stderr
    no_traceback(early)
    assert trees(a, latest_ref(a)) == trees(b, latest_ref(b))
    assert scratch_left(a.path / ".git") == []


def test_a_linked_worktree_saves_and_restores_through_the_early_scan(repo: Repo) -> None:
    wt = Repo(repo.path.parent / "wt")
    repo.git("worktree", "add", "-q", str(wt.path))
    wt.write("src/app.py", "in the worktree\n")
    calls = logged(wt, "save", "-m", "wt")
    assert len(early_calls(calls)) == 3
    wt.write("src/app.py", "later\n")
    calls = logged(wt, "restore", "cp_001")
    assert len(early_calls(calls)) == 3
    assert (wt.path / "src/app.py").read_text() == "in the worktree\n"
    assert lock_free(repo.path / ".git")
    assert scratch_left(repo.path / ".git/worktrees/wt") == []


def test_a_submodule_work_tree_saves_through_the_early_scan(repo: Repo, tmp_path: Path) -> None:
    sub = make_repo(tmp_path / "subsrc")
    sub.write("s.txt", "s\n")
    sub.commit_all("s")
    repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub.path), "mod")
    repo.git("commit", "-qm", "sub")
    mod = Repo(repo.path / "mod")
    mod.write("s.txt", "s2\n")
    calls = logged(mod, "save", "-m", "in the submodule")
    assert len(early_calls(calls)) == 3
    assert mod.git("show", f"{latest_ref(mod)}:s.txt") == "s2\n"
    assert scratch_left(repo.path / ".git/modules/mod") == []
