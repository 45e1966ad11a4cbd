"""Changes that land between the early scan and the rest of the command (an edit, a
commit, a branch switch, an index replaced, a file gone before the overlay is hashed):
the checkpoint holds a state that existed, nothing is vouched for that was not seen,
and a failure is the plain path's, in one line, with nothing left behind."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ..conftest import Repo, make_repo
from ..helpers import saved_paths
from ..launcher import (
    LAUNCHER,
    REAL_GIT,
    edit_after_scan_env,
    git_wrapper_env,
    launch,
    lock_free,
    no_traceback,
    run_plain,
    scratch_left,
)
from .conftest import copy_of, git_head

# --- changes made after the early scan read the workspace ---------------------------------


def test_a_clean_file_edited_after_the_early_scan_is_not_vouched_for(
    repo: Repo, tmp_path: Path
) -> None:
    """A tracked file the early scan saw clean, edited (same size) before the save ends:
    the checkpoint holds the scanned content (a state that existed), and neither the
    quick check nor the next save calls the workspace unchanged."""
    repo.write("src/app.py", "v2\n")  # something to save
    repo.write("README.md", "aaaa\n")
    repo.commit_all("sized")
    repo.write("src/app.py", "v3\n")
    time.sleep(1.1)  # older than quickstate.RACY_NS: the save keeps its quick state
    env = edit_after_scan_env(tmp_path, "printf 'bbbb\\n' > README.md")
    launch(repo, "save", "-m", "one", env=env)
    assert repo.git("show", "refs/checkpoints/main/cp_001:README.md") == "aaaa\n"
    assert (repo.path / ".git/checkpoint/quick/state.json").exists()
    quick = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from git_checkpoint.fast.quickcheck import quick_unchanged; "
            "print(quick_unchanged(sys.argv[1]))",
            str(repo.path),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert quick.stdout.strip() == "False"
    out = repo.cp("save", "-m", "two").stdout
    assert "cp_002" in out, out
    assert repo.git("show", "refs/checkpoints/main/cp_002:README.md") == "bbbb\n"


def test_a_file_edited_after_the_early_scan_of_a_restore_is_left_alone(
    repo: Repo, tmp_path: Path
) -> None:
    """The safety checkpoint comes from a scan ~100 ms older than the writes: a file the
    scan saw clean and the restore must replace, edited in between, is left as it is
    (its content is in no checkpoint) and the restore stops with exit 3."""
    repo.write("src/app.py", "target\n")
    repo.cp("save", "-m", "target")
    repo.write("src/app.py", "print('hello')\n")  # back to the index: clean
    time.sleep(1.1)
    env = edit_after_scan_env(tmp_path, "printf 'precious\\n' > src/app.py")
    proc = launch(repo, "restore", "cp_001", env=env, expect=3)
    assert "changed during the restore" in proc.stderr
    assert (repo.path / "src/app.py").read_text() == "precious\n"
    no_traceback(proc)


def test_an_index_replaced_between_the_two_copies_loses_no_file(tmp_path: Path) -> None:
    """`git rm --cached a` lands between the launcher's two index copies (widened here
    with a long PATH, which posix_spawnp walks while the launcher waits). `a` stays on
    disk throughout, so every checkpoint must hold it: in W (tracked) or in U."""
    for attempt in range(5):
        repo = make_repo(tmp_path / f"race{attempt}")
        repo.write("a", "a\n")
        repo.write("b", "b\n")
        repo.commit_all("i")
        other = repo.path / ".git" / "other-index"
        shutil.copy2(repo.path / ".git/index", other)
        subprocess.run(
            ["git", "rm", "-q", "--cached", "a"],
            cwd=repo.path,
            env={**os.environ, "GIT_INDEX_FILE": str(other)},
            check=True,
        )
        pad = os.pathsep.join(f"/n/{i:x}" for i in range(15000))  # < 128 KiB
        env = {**os.environ, "PATH": f"{pad}{os.pathsep}{os.environ['PATH']}"}
        proc = subprocess.Popen(
            [LAUNCHER, "save", "-m", "race"],
            cwd=repo.path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        git_dir = repo.path / ".git"
        deadline = time.monotonic() + 30
        while proc.poll() is None and time.monotonic() < deadline:
            if any(p.name.startswith("checkpoint-") for p in git_dir.iterdir()) and list(
                git_dir.glob("checkpoint-*/index")
            ):
                os.replace(other, git_dir / "index")  # as git writes an index: a rename
                break
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err
        w, u = saved_paths(repo, "refs/checkpoints/main/cp_001")
        assert "a" in w or "a" in u, f"attempt {attempt}: W={w} U={u}"


def test_a_commit_during_the_save_gives_a_consistent_base_and_index(
    repo: Repo, tmp_path: Path
) -> None:
    repo.write("src/app.py", "v2\n")
    old_head = repo.git("rev-parse", "HEAD").strip()
    env = edit_after_scan_env(tmp_path, '"$EA_REAL" commit -q -a -m during')
    launch(repo, "save", "-m", "during", env=env)
    new_head = repo.git("rev-parse", "HEAD").strip()
    assert new_head != old_head
    ref = "refs/checkpoints/main/cp_001"
    base = repo.git("log", "-1", "--format=%P", ref).split()[0]
    staged = repo.git("show", f"{ref}^2:src/app.py")
    # before the commit: old HEAD, app.py staged as committed originally; after: new HEAD,
    # the index holding v2. Anything else is a state that never was.
    assert (base, staged) in ((old_head, "print('hello')\n"), (new_head, "v2\n"))


# A git that runs $RV_EDIT (a shell line, in the work tree) before the first
# `update-index --add` it sees: that call hashes the overlay (save/overlay), after the
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


# --- a moved HEAD: the early scan dropped, nothing left behind ------------------------------


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


# --- failures in the overlay hashed on a thread --------------------------------------------


def _overlay_repo(repo: Repo) -> None:
    for i in range(4):
        repo.write(f"gen/f{i}.txt", f"untracked {i}\n")


def test_a_refused_overlay_on_the_thread_is_one_line_exit_3_as_the_plain_path(
    repo: Repo, tmp_path: Path
) -> None:
    repo.write(".checkpoint.yaml", "limits: {overlay_max_files: 2, on_exceed: refuse}\n")
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
