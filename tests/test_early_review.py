"""Review of the early-scan fixes (4f8b036, 6fb1472, 2c29cc7, e7edee5): HEAD's commit
from files, the repositories the early scan refuses, a moved HEAD, and failures of the
overlay hashed on a thread. Each outcome through the launcher (`git-checkpoint`, with
the early scan) is compared with the plain path (`python -m git_checkpoint`, without).
Three breaks found here (a NUL in HEAD or in a .git file: a traceback; an untracked file
gone before hashing: a failed save) were strict xfails until fixed.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from git_checkpoint.gitcore.locate import find_repo, head_commit

from .conftest import Repo
from .test_early_attacks import (
    REAL_GIT,
    edit_after_scan_env,
    git_wrapper_env,
    launch,
    lock_free,
    logged,
    no_traceback,
    run_plain,
    saved_paths,
    scratch_left,
    trees,
)

# A git that runs $RV_EDIT (a shell line, in the work tree) before the first
# `update-index --add` it sees: that call hashes the overlay (_overlay_tree), after the
# scan listed it and its limits and stat data were taken.
EDIT_BEFORE_ADD = """#!/bin/sh
for a in "$@"; do
    if [ "$a" = "update-index" ] && [ ! -f "$RV_DONE" ]; then
        case " $* " in *" --add "*) : > "$RV_DONE"; eval "$RV_EDIT";; esac
    fi
done
exec "$RV_REAL" "$@"
"""


def edit_before_add_env(tmp_path: Path, edit: str) -> dict[str, str]:
    done = tmp_path / "add-git-done"
    done.unlink(missing_ok=True)
    return git_wrapper_env(
        tmp_path / "add-git", EDIT_BEFORE_ADD, RV_REAL=REAL_GIT, RV_EDIT=edit, RV_DONE=str(done)
    )


def status_runs(calls: list[str]) -> tuple[int, int]:
    """(the early scan's status calls, the save path's own status calls)."""
    runs = [c for c in calls if "status --porcelain=v2" in c]
    early = [c for c in runs if c.startswith("-C ")]
    return len(early), len(runs) - len(early)


def git_head(repo: Repo) -> str | None:
    out = repo.git("rev-parse", "-q", "--verify", "HEAD^{commit}", check=False).strip()
    return out or None


def files_head(path: Path) -> str | None:
    found = find_repo(str(path))
    assert found is not None
    with open(os.path.join(found.git_dir, "HEAD"), encoding="utf-8") as fh:
        return head_commit(found.common_dir, fh.read())


def copy_of(repo: Repo, where: Path) -> Repo:
    subprocess.run(["cp", "-a", str(repo.path), str(where)], check=True)
    return Repo(where)


# --- 1. head_commit against git, and the early scan taken (not dropped) ---------------------


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


# --- 1b. a repository the early scan will not write into, but git takes -----------------------


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the repository away")
def test_a_foreign_repository_allowed_by_safe_directory_saves_as_the_plain_path(
    repo: Repo, tmp_path: Path
) -> None:
    """Owned by another user, allowed by safe.directory='*': _ours says no, so the save
    takes the plain path (slower), and must succeed as `python -m git_checkpoint` does."""
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


# --- 2. a moved HEAD: the early scan dropped, nothing left behind ----------------------------


def test_a_commit_during_the_save_drops_the_early_scan_and_leaves_nothing(
    repo: Repo, tmp_path: Path
) -> None:
    repo.write("src/app.py", "v2\n")
    repo.write("new.txt", "untracked\n")
    env = edit_after_scan_env(tmp_path, '"$EA_REAL" commit -q -a -m during')
    launch(repo, "save", "-m", "during", env=env)
    ref = "refs/checkpoints/main/cp_001"
    base = repo.git("log", "-1", "--format=%P", ref).split()[0]
    assert base == git_head(repo)  # the new HEAD, with the index as it now is
    assert repo.git("show", f"{ref}^2:src/app.py") == "v2\n"
    assert saved_paths(repo, ref)[1] == ["new.txt"]
    assert scratch_left(repo.path / ".git") == []
    assert lock_free(repo.path / ".git")
    assert not list((repo.path / ".git/checkpoint").glob("quick/pending-*"))
    launch(repo, "save", "-m", "after")  # the next save is not stuck on anything


def test_a_branch_switch_during_a_restore_drops_the_early_scan_and_leaves_nothing(
    repo: Repo, tmp_path: Path
) -> None:
    repo.write("src/app.py", "saved\n")
    launch(repo, "save", "-m", "one")
    repo.write("src/app.py", "later\n")
    repo.git("branch", "other")
    env = edit_after_scan_env(tmp_path, '"$EA_REAL" symbolic-ref HEAD refs/heads/other')
    proc = launch(repo, "restore", "main/cp_001", expect=None, env=env)
    no_traceback(proc)
    assert proc.returncode == 0, proc.stderr  # same commit: the early scan may stay
    assert (repo.path / "src/app.py").read_text() == "saved\n"
    assert scratch_left(repo.path / ".git") == []
    assert lock_free(repo.path / ".git")


# --- 3. failures in the overlay hashed on a thread ----------------------------------------


def _overlay_repo(repo: Repo) -> None:
    for i in range(4):
        repo.write(f"gen/f{i}.txt", f"untracked {i}\n")


def test_a_refused_overlay_on_the_thread_is_one_line_exit_3_as_the_plain_path(
    repo: Repo, tmp_path: Path
) -> None:
    repo.write(".checkpoint.yaml", "limits: {overlay_max_files: 2}\n")
    repo.write("src/app.py", "changed\n")  # W's graft runs beside the refusal
    _overlay_repo(repo)
    twin = copy_of(repo, tmp_path / "twin")
    ours = launch(repo, "save", "-m", "x", expect=3)
    theirs = run_plain(twin, "save", "-m", "x")
    assert theirs.returncode == 3
    assert ours.stderr == theirs.stderr and len(ours.stderr.splitlines()) == 1
    assert scratch_left(repo.path / ".git") == [] and lock_free(repo.path / ".git")


def test_an_untracked_file_deleted_before_hashing_ends_alike_without_traceback(
    repo: Repo, tmp_path: Path
) -> None:
    """The overlay's file list and stat data taken, then the file goes before
    `update-index --add` hashes it: whatever happens, the launcher does as the plain path
    does, in one line, with nothing left behind."""
    _overlay_repo(repo)
    twin = copy_of(repo, tmp_path / "twin")
    ours = launch(
        repo, "save", "-m", "x", expect=None, env=edit_before_add_env(tmp_path, "rm -f gen/f1.txt")
    )
    theirs = run_plain(
        twin, "save", "-m", "x", env=edit_before_add_env(tmp_path, "rm -f gen/f1.txt")
    )
    assert ours.returncode == theirs.returncode
    no_traceback(ours)
    assert len(ours.stderr.strip().splitlines()) <= 1, ours.stderr
    assert scratch_left(repo.path / ".git") == [] and lock_free(repo.path / ".git")
    assert not list((repo.path / ".git/checkpoint").glob("quick/pending-*"))


# A git that, after the first `status` it runs (the early scan's `-C ROOT status` or the
# plain path's own), runs $RV_EDIT in $RV_ROOT before handing status's output over.
EDIT_AFTER_STATUS = """#!/bin/sh
for a in "$@"; do
    if [ "$a" = "status" ] && [ ! -f "$RV_DONE" ]; then
        : > "$RV_DONE"
        out="$RV_DONE.out"
        "$RV_REAL" "$@" > "$out"
        rc=$?
        (cd "$RV_ROOT" && unset GIT_INDEX_FILE && eval "$RV_EDIT")
        cat "$out"
        exit "$rc"
    fi
done
exec "$RV_REAL" "$@"
"""


def edit_after_status_env(tmp_path: Path, root: Path, edit: str) -> dict[str, str]:
    env = edit_before_add_env(tmp_path, edit)
    script = Path(env["PATH"].split(os.pathsep)[0]) / "git"
    script.write_text(EDIT_AFTER_STATUS)
    return {**env, "RV_ROOT": str(root)}


def test_an_untracked_folder_replaced_by_a_file_after_the_scan_ends_alike(
    repo: Repo, tmp_path: Path
) -> None:
    """gen/ listed by status, then replaced by a file `gen`: the overlay's lstat of
    gen/f0.txt is NotADirectoryError (an OSError, on the thread in the launcher)."""
    _overlay_repo(repo)
    twin = copy_of(repo, tmp_path / "twin")
    edit = "rm -rf gen && echo now-a-file > gen"
    ours = launch(
        repo, "save", "-m", "x", expect=None, env=edit_after_status_env(tmp_path, repo.path, edit)
    )
    theirs = run_plain(
        twin, "save", "-m", "x", env=edit_after_status_env(tmp_path, twin.path, edit)
    )
    assert ours.returncode == theirs.returncode
    assert ours.stderr.replace(str(repo.path), "ROOT") == theirs.stderr.replace(
        str(twin.path), "ROOT"
    )
    no_traceback(ours)
    assert len(ours.stderr.strip().splitlines()) <= 1, ours.stderr
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


@pytest.mark.parametrize("entry", ["launcher", "plain"])
def test_a_save_survives_an_untracked_file_that_vanishes_before_hashing(
    repo: Repo, tmp_path: Path, entry: str
) -> None:
    _overlay_repo(repo)
    env = edit_before_add_env(tmp_path, "rm -f gen/f1.txt")
    if entry == "launcher":
        proc = launch(repo, "save", "-m", "x", expect=None, env=env)
    else:
        proc = run_plain(repo, "save", "-m", "x", env=env)
    assert proc.returncode == 0, proc.stderr
    assert saved_paths(repo, "refs/checkpoints/main/cp_001")[1] == [
        "gen/f0.txt",
        "gen/f2.txt",
        "gen/f3.txt",
    ]


# --- 1c. repositories found differently by the walk and by git -------------------------------


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
    # Both exit 4 (`for-each-ref ... not a git repository`): the save path runs git in
    # the work tree core.worktree names, which has no .git (not the early scan's doing).
    assert (ours.returncode, ours.stderr) == (theirs.returncode, theirs.stderr)
    no_traceback(ours)
    assert scratch_left(holder / ".git") == [] and lock_free(holder / ".git")


# --- 1d. bytes git takes that the early scan's Python does not --------------------------------


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
