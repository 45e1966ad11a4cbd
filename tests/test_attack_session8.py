"""Attacks on the restore path's fresh changes: symlink swaps (through_folders), files
adopted into the safety checkpoint (hidden by a new rule, then edited), intent-to-add
entries whose file is gone (placeholders), the folder a restore runs in, and a failed
undo of an interrupted restore. Strict xfails name a defect; the rest are guards.

Kills and failures come from a `git` put first on PATH (git-checkpoint is run directly,
not through `git checkpoint`, which would put git's exec path first): it SIGKILLs its
parent, or fails as a held index.lock makes git fail, at one chosen call.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from git_checkpoint.restore.checks import ADOPT_MAX_BYTES

from .conftest import BIN, Repo
from .helpers import fingerprint, state

CP = shutil.which("git-checkpoint", path=BIN)  # the one `git checkpoint` runs in tests
REAL_GIT = shutil.which("git")
needs_cp = pytest.mark.skipif(CP is None or REAL_GIT is None, reason="needs git-checkpoint")
JOURNAL = ".git/checkpoint/restore-journal.json"


def _full_state(repo: Repo) -> tuple[object, ...]:
    """Work tree, index, and what git says of it (intent-to-add and ignored included)."""
    fp, index = state(repo)
    status = repo.git("status", "--porcelain=v2", "--untracked-files=all", "--ignored")
    return fp, index, status


def _direct(
    repo: Repo, wrapper: Path, *args: str, cwd: Path | None = None, **env: str
) -> subprocess.CompletedProcess[str]:
    """git-checkpoint ARGS with `wrapper` (a folder holding a `git`) first on PATH."""
    assert CP is not None
    full = {**os.environ, **env, "PATH": f"{wrapper}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(
        [CP, *args], cwd=cwd or repo.path, env=full, capture_output=True, text=True, check=False
    )


def _wrapper(tmp_path: Path, body: str) -> Path:
    folder = tmp_path / "wrap"
    folder.mkdir(exist_ok=True)
    script = folder / "git"
    script.write_text(f'#!/bin/sh\n{body}\nexec {REAL_GIT} "$@"\n')
    script.chmod(0o755)
    return folder


def _copy(repo: Repo, to: Path) -> Repo:
    shutil.copytree(repo.path, to, symlinks=True)
    return Repo(to)


# --- adoption: a file the target holds, hidden by a new rule and edited --------------------


def _hidden_and_edited(repo: Repo) -> None:
    repo.write("notes/todo.txt", "mine\n")
    repo.cp("save", "-m", "base")
    with open(repo.path / ".gitignore", "a") as fh:
        fh.write("notes/\n")
    repo.write("notes/todo.txt", "the attempt's edit\n")


# Where a SIGKILL lands around the adoption: the first listing of untracked files once
# .gitignore is the target's again, and before/after the adoption's `cat-file commit`
# (store.add_to_overlay, which only the adoption runs).
AFTER_RULES = (
    'if [ "$1 $2 $3" = "ls-files -z -o" ] && ! grep -q notes/ .gitignore; then\n'
    "  kill -KILL $PPID; exit 137\nfi"
)
IN_ADOPTION = {
    "before": 'if [ "$1 $2" = "cat-file commit" ]; then kill -KILL $PPID; exit 137; fi',
    "after": f'if [ "$1 $2" = "cat-file commit" ]; then {REAL_GIT} "$@"; '
    "kill -KILL $PPID; exit 137; fi",
}
KILLS = {"after-rules": AFTER_RULES, **{f"adoption-{k}": v for k, v in IN_ADOPTION.items()}}


@needs_cp
@pytest.mark.parametrize("where", list(KILLS))
def test_undo_after_a_kill_around_the_adoption_gives_the_edit_back(
    repo: Repo, tmp_path: Path, where: str
) -> None:
    _hidden_and_edited(repo)
    attempt = _full_state(repo)
    killed = _direct(repo, _wrapper(tmp_path, KILLS[where]), "restore", "cp_001")
    assert killed.returncode == -9, killed.stderr
    assert (repo.path / JOURNAL).exists()
    assert (repo.path / "notes/todo.txt").read_text() == "the attempt's edit\n"

    repo.cp("undo")
    assert (repo.path / "notes/todo.txt").read_text() == "the attempt's edit\n"
    assert _full_state(repo) == attempt


@needs_cp
@pytest.mark.parametrize("where", list(IN_ADOPTION))
def test_continue_after_a_kill_in_the_adoption_finishes(
    repo: Repo, tmp_path: Path, where: str
) -> None:
    _hidden_and_edited(repo)
    killed = _direct(repo, _wrapper(tmp_path, IN_ADOPTION[where]), "restore", "cp_001")
    assert killed.returncode == -9, killed.stderr
    repo.cp("restore", "--continue")
    assert (repo.path / "notes/todo.txt").read_text() == "mine\n"
    assert repo.git("status", "--porcelain") == "?? notes/\n"  # untracked in cp_001
    assert not (repo.path / JOURNAL).exists()


def test_an_adopted_hard_link_keeps_its_other_name_and_undo_gives_it_back(
    repo: Repo, tmp_path: Path
) -> None:
    _hidden_and_edited(repo)
    other = tmp_path / "other-name.txt"
    os.link(repo.path / "notes/todo.txt", other)
    attempt = _full_state(repo)

    repo.cp("restore", "cp_001")
    assert (repo.path / "notes/todo.txt").read_text() == "mine\n"
    assert other.read_text() == "the attempt's edit\n"  # the other name is not written
    repo.cp("undo")
    assert _full_state(repo) == attempt


def test_an_adopted_symlink_to_outside_is_never_followed(repo: Repo, tmp_path: Path) -> None:
    _hidden_and_edited(repo)
    outside = tmp_path / "outside.txt"
    outside.write_text("outside\n")
    (repo.path / "notes/todo.txt").unlink()
    (repo.path / "notes/todo.txt").symlink_to(outside)
    attempt = _full_state(repo)

    repo.cp("restore", "cp_001")
    assert not (repo.path / "notes/todo.txt").is_symlink()
    assert outside.read_text() == "outside\n"
    repo.cp("undo")
    assert _full_state(repo) == attempt
    assert outside.read_text() == "outside\n"


def test_a_hidden_sparse_file_right_at_the_limit_is_kept_and_given_back(repo: Repo) -> None:
    _hidden_and_edited(repo)
    with open(repo.path / "notes/todo.txt", "r+b") as fh:
        fh.truncate(ADOPT_MAX_BYTES)  # the limit itself is kept; one byte more is refused
        fh.seek(ADOPT_MAX_BYTES - 4)
        fh.write(b"end\n")

    repo.cp("restore", "cp_001")
    assert (repo.path / "notes/todo.txt").read_text() == "mine\n"
    repo.cp("undo")
    with open(repo.path / "notes/todo.txt", "rb") as fh:
        assert fh.read(19) == b"the attempt's edit\n"
        fh.seek(ADOPT_MAX_BYTES - 4)
        assert fh.read() == b"end\n"
    assert os.path.getsize(repo.path / "notes/todo.txt") == ADOPT_MAX_BYTES


def test_a_hidden_fifo_where_the_target_has_a_file_is_refused_with_nothing_changed(
    repo: Repo,
) -> None:
    _hidden_and_edited(repo)
    (repo.path / "notes/todo.txt").unlink()
    os.mkfifo(repo.path / "notes/todo.txt")
    gitignore = (repo.path / ".gitignore").read_text()
    status = repo.git("status", "--porcelain=v2", "--untracked-files=all", "--ignored")

    proc = repo.cp("restore", "cp_001", expect=3, timeout=60)
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert (repo.path / ".gitignore").read_text() == gitignore
    assert repo.git("status", "--porcelain=v2", "--untracked-files=all", "--ignored") == status
    assert stat.S_ISFIFO(os.lstat(repo.path / "notes/todo.txt").st_mode)
    assert not (repo.path / JOURNAL).exists()


def test_a_secret_looking_file_is_never_stored_by_a_restore(repo: Repo) -> None:
    repo.write(".env", "TOKEN=old\n")
    repo.commit_all("env")
    repo.cp("save", "-m", "base")
    repo.git("rm", "-q", "--cached", ".env")
    repo.write(".env", "TOKEN=the-live-one\n")

    repo.cp("restore", "cp_001", expect=None, timeout=30)
    refs = repo.git("for-each-ref", "--format=%(objectname)", "refs/checkpoints/").split()
    for commit in refs:
        stored = repo.git("ls-tree", "-r", "--name-only", f"{commit}^3", check=False)
        assert ".env" not in stored.split(), f"{commit} stores .env"


# --- symlink swaps --------------------------------------------------------------------------


@pytest.mark.parametrize("depth", ["top", "deep"])
def test_a_deep_folder_swapped_for_a_symlink_to_outside_is_never_followed(
    repo: Repo, tmp_path: Path, depth: str
) -> None:
    swapped = "b" if depth == "top" else "a/b/c"
    repo.write(f"{swapped}/x.txt", "tracked x\n")
    repo.write(f"{swapped}/sub/y.txt", "tracked y\n")
    repo.commit_all("folders")
    repo.cp("save", "-m", "base")
    saved = _full_state(repo)
    outside = tmp_path / "outside"
    (outside / "sub").mkdir(parents=True)
    (outside / "x.txt").write_text("outside x\n")
    (outside / "sub/y.txt").write_text("outside y\n")
    (outside / "extra.txt").write_text("outside extra\n")
    shutil.rmtree(repo.path / swapped)
    (repo.path / swapped).symlink_to(outside)
    attempt = _full_state(repo)
    outside_before = fingerprint(outside)

    repo.cp("restore", "cp_001")
    assert _full_state(repo) == saved
    assert fingerprint(outside) == outside_before
    repo.cp("undo")
    assert _full_state(repo) == attempt
    assert fingerprint(outside) == outside_before


def test_an_ignored_symlink_over_a_hidden_folder_is_refused_and_outside_untouched(
    repo: Repo, tmp_path: Path
) -> None:
    _hidden_and_edited(repo)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "todo.txt").write_text("outside\n")
    shutil.rmtree(repo.path / "notes")
    (repo.path / "notes").symlink_to(outside)
    with open(repo.path / ".gitignore", "a") as fh:
        fh.write("notes\n")  # the symlink itself ignored: not managed, never removed
    before = _full_state(repo)

    proc = repo.cp("restore", "cp_001", expect=3)
    assert "symlink" in proc.stderr and "Traceback" not in proc.stderr
    assert _full_state(repo) == before
    assert (outside / "todo.txt").read_text() == "outside\n"


def test_a_folder_swapped_for_a_looping_symlink_comes_back(repo: Repo) -> None:
    repo.write("d/e/f.txt", "f\n")
    repo.commit_all("deep")
    repo.cp("save", "-m", "base")
    saved = _full_state(repo)
    shutil.rmtree(repo.path / "d/e")
    (repo.path / "d/e").symlink_to("e")
    attempt = state(repo)

    repo.cp("restore", "cp_001")
    assert _full_state(repo) == saved
    repo.cp("undo")
    assert state(repo) == attempt


# --- intent-to-add entries whose file is gone -----------------------------------------------


def _marked_then_deleted(repo: Repo, path: str, force: bool = False) -> None:
    repo.write(path, "x\n")
    repo.git("add", "-N", *(["-f"] if force else []), "--", path)
    (repo.path / path).unlink()
    folder = (repo.path / path).parent
    while folder != repo.path and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent


@pytest.mark.parametrize("path", ["new dir/deep/it a.txt", "nl\ndir/x\ny.txt"])
def test_odd_names_come_back_marked_with_no_placeholder_left(repo: Repo, path: str) -> None:
    repo.cp("save", "-m", "base")
    _marked_then_deleted(repo, path)
    repo.cp("save", "-m", "marked")
    marked = _full_state(repo)
    repo.cp("restore", "cp_001")
    assert not (repo.path / path.split("/")[0]).exists()
    repo.cp("undo")
    assert _full_state(repo) == marked
    assert not (repo.path / path).exists()


def test_a_placeholder_in_a_folder_that_holds_ignored_files_leaves_the_folder(
    repo: Repo,
) -> None:
    repo.cp("save", "-m", "base")
    _marked_then_deleted(repo, "shared/ita.txt")
    repo.cp("save", "-m", "marked")
    repo.cp("restore", "cp_001")
    repo.write("shared/keep.log", "ignored, mine\n")  # *.log: never managed
    repo.write("shared/mine.txt", "untracked, mine\n")

    repo.cp("restore", "cp_002")
    assert (repo.path / "shared/keep.log").read_text() == "ignored, mine\n"
    assert sorted(p.name for p in (repo.path / "shared").iterdir()) == ["keep.log"]
    assert "shared/ita.txt" in repo.git("ls-files")
    repo.cp("undo")
    assert (repo.path / "shared/mine.txt").read_text() == "untracked, mine\n"
    assert not (repo.path / "shared/ita.txt").exists()
    assert "shared/ita.txt" not in repo.git("ls-files")


@needs_cp
@pytest.mark.parametrize("mode", ["before", "after"])
def test_a_kill_while_the_placeholder_exists_leaves_undo_and_continue_whole(
    repo: Repo, tmp_path: Path, mode: str
) -> None:
    repo.cp("save", "-m", "base")
    _marked_then_deleted(repo, "p/q/ita.txt")
    repo.cp("save", "-m", "marked")
    repo.cp("restore", "cp_001")
    repo.write("src/app.py", "print('attempt')\n")
    before = _full_state(repo)
    finished = _copy(repo, tmp_path / "finished")
    finished.cp("restore", "cp_002")
    after = _full_state(finished)
    run = "" if mode == "before" else f'{REAL_GIT} "$@"; '
    wrap = _wrapper(
        tmp_path,
        f'if [ "$1 $2" = "add --intent-to-add" ]; then {run}kill -KILL $PPID; exit 137; fi',
    )
    killed = _direct(repo, wrap, "restore", "cp_002")
    assert killed.returncode == -9, killed.stderr
    other = _copy(repo, tmp_path / "other")

    repo.cp("undo")
    assert _full_state(repo) == before
    assert not (repo.path / "p").exists()
    other.cp("restore", "--continue")
    assert _full_state(other) == after
    assert not (other.path / "p").exists()


def test_an_intent_to_add_entry_on_an_ignored_path_comes_back(repo: Repo) -> None:
    repo.cp("save", "-m", "base")
    _marked_then_deleted(repo, "build.log", force=True)  # *.log is ignored
    marked = _full_state(repo)
    repo.cp("restore", "cp_001")
    repo.cp("undo")
    assert _full_state(repo) == marked


# --- the folder a restore runs in ------------------------------------------------------------


def test_a_file_written_where_the_cwd_folder_is_does_not_remove_the_cwd(repo: Repo) -> None:
    repo.write("x", "file\n")
    repo.commit_all("x")
    repo.cp("save", "-m", "base")
    repo.git("rm", "-q", "x")
    repo.write("x/y/new.txt", "n\n")
    here = repo.path / "x" / "y"

    repo.cp("restore", "cp_001", cwd=here, expect=None)
    assert here.is_dir()


def test_the_cwd_deep_in_a_removed_tree_and_the_root_both_stay(repo: Repo) -> None:
    repo.cp("save", "-m", "base")
    repo.write("w/a/b/c/new.py", "x = 1\n")
    repo.write("w/a/other.py", "y = 2\n")
    here = repo.path / "w/a/b"
    repo.cp("restore", "cp_001", cwd=here)
    assert here.is_dir() and not (here / "c").exists()
    assert not (repo.path / "w/a/other.py").exists()
    repo.cp("undo", cwd=here)
    assert (here / "c/new.py").read_text() == "x = 1\n"
    repo.cp("restore", "cp_001", cwd=repo.path)  # the root: nothing above it to keep
    assert not (repo.path / "w").exists()


def test_the_cwd_in_a_linked_worktree_stays(repo: Repo, tmp_path: Path) -> None:
    linked = tmp_path / "linked"
    repo.git("worktree", "add", "-q", "-b", "side", str(linked))
    side = Repo(linked)
    side.cp("save", "-m", "base")
    side.write("deep/er/new.py", "x = 1\n")
    here = linked / "deep" / "er"
    side.cp("restore", "cp_001", cwd=here)
    assert here.is_dir() and list(here.iterdir()) == []
    assert side.git("status", "--porcelain") == ""
    assert not (repo.path / "deep").exists()


# --- a failed undo of an interrupted restore ------------------------------------------------


@needs_cp
def test_undo_and_rollback_both_failing_keep_the_way_back(repo: Repo, tmp_path: Path) -> None:
    for i in (1, 2, 3):
        repo.write(f"f{i}.txt", f"v{i}\n")
    repo.commit_all("files")
    repo.cp("save", "-m", "base")
    _marked_then_deleted(repo, "new/ita.txt")
    repo.write("f1.txt", "staged edit\n")
    repo.git("add", "f1.txt")
    repo.write("f2.txt", "edit\n")
    before = _full_state(repo)
    # The restore killed right after it set the index (its files are written).
    kill = _wrapper(
        tmp_path,
        'if [ "$1 $2" = "update-index -z" ] && [ -z "$GIT_INDEX_FILE" ]; then\n'
        f'  {REAL_GIT} "$@"; kill -KILL $PPID; exit 137\nfi',
    )
    assert _direct(repo, kill, "restore", "cp_001").returncode == -9
    shutil.rmtree(kill)
    # Then an index.lock held by someone else: `git add -N` fails first, then every
    # update of the real index (the undo's rollback's too).
    flag = tmp_path / "held"
    flag.touch()
    held = _wrapper(
        tmp_path,
        f'if [ -e {flag} ]; then case "$1 $2" in\n'
        f'  "add --intent-to-add") touch {flag}.seen; echo "fatal: held" >&2; exit 128;;\n'
        f'  "update-index -z") if [ -e {flag}.seen ] && [ -z "$GIT_INDEX_FILE" ]; then '
        'echo "fatal: held" >&2; exit 128; fi;;\nesac; fi',
    )
    failed = _direct(repo, held, "undo")
    assert failed.returncode == 4 and "failed too" in failed.stderr, failed.stderr
    assert "Traceback" not in failed.stderr
    flag.unlink()

    repo.cp("restore", "--continue")
    repo.cp("undo")
    assert _full_state(repo) == before
    assert "stopped before changing anything" not in failed.stderr  # it had written files
