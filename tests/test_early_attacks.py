"""Attacks on the early scan (early.py, launch.py, the save path's use of it).

The installed `git-checkpoint` takes the checkpoint lock, copies the index twice and
starts status / write-tree / ls-files -v before it imports the rest of the tool. These
tests go through that launcher (`Repo.cp` runs `git checkpoint`, which finds the venv's
`git-checkpoint` first on PATH) and try to make it lose work, claim a state that never
existed, hold its own lock, or write where it should not.

Eight breaks found here were strict xfails until fixed (early.py: both index copies
before any git, the lock compared by its real path, HEAD noted with the copy, nothing
written into a git dir git would not take or into someone else's; store.save_trees_of:
only a save takes trees from the quick state); every test now passes.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import BIN, Repo, make_repo
from .helpers import fingerprint

REAL_GIT = os.path.realpath(shutil.which("git") or "/usr/bin/git")
FAULT_DIR = Path(__file__).parent / "fault_git"
LAUNCHER = os.path.join(BIN, "git-checkpoint")  # launch.main: the early scan's entry

# A git that runs $EA_EDIT (a shell line, in the work tree) once the early scan's status
# (`git -C ROOT status ...`) has read the work tree, before handing its output over: a
# change made between the early scan and the rest of the command, at a fixed point.
EDIT_AFTER_SCAN = """#!/bin/sh
if [ "$1" = "-C" ] && [ "$3" = "status" ] && [ -n "$EA_EDIT" ]; then
    out="$2/.git/ea-status-out"
    "$EA_REAL" "$@" > "$out"
    rc=$?
    (cd "$2" && unset GIT_INDEX_FILE GIT_OPTIONAL_LOCKS && eval "$EA_EDIT")
    cat "$out"
    rm -f "$out"
    exit "$rc"
fi
exec "$EA_REAL" "$@"
"""


# --- helpers ------------------------------------------------------------------------------


def git_wrapper_env(folder: Path, script: str, **variables: str) -> dict[str, str]:
    """`script` installed as `git` in `folder`, first on PATH, with `variables`."""
    folder.mkdir(exist_ok=True)
    wrapper = folder / "git"
    wrapper.write_text(script)
    wrapper.chmod(0o755)
    return {"PATH": f"{folder}{os.pathsep}{os.environ['PATH']}", **variables}


def edit_after_scan_env(tmp_path: Path, edit: str) -> dict[str, str]:
    return git_wrapper_env(tmp_path / "edit-git", EDIT_AFTER_SCAN, EA_REAL=REAL_GIT, EA_EDIT=edit)


def launch(
    repo: Repo,
    *args: str,
    expect: int | None = 0,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run the installed `git-checkpoint` (launch.main) itself, as `git checkpoint` would,
    but without git in between: git puts its exec-path first on PATH, so a `git` wrapper
    in front of PATH would see only the `git checkpoint` call, not the tool's git calls."""
    proc = subprocess.run(
        [LAUNCHER, *args],
        cwd=cwd or repo.path,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    if expect is not None and proc.returncode != expect:
        raise AssertionError(
            f"git-checkpoint {' '.join(args)}: exit {proc.returncode}, wanted {expect}\n"
            f"stdout: {proc.stdout}\nstderr: {proc.stderr}"
        )
    return proc


def logged(repo: Repo, *args: str, expect: int | None = 0, **kw: str) -> list[str]:
    """Run `git checkpoint ARGS` with tests/fault_git/git counting (never killing): the
    arguments of each git call it made."""
    counter = repo.path.parent / "ea-calls"
    counter.unlink(missing_ok=True)
    log = Path(f"{counter}.log")
    log.unlink(missing_ok=True)
    env = {
        "PATH": f"{FAULT_DIR}{os.pathsep}{os.environ['PATH']}",
        "FI_REAL_GIT": REAL_GIT,
        "FI_COUNTER": str(counter),
        "FI_KILL_AT": "0",
        "FI_MODE": "before",
        **kw,
    }
    launch(repo, *args, expect=expect, env=env)
    return log.read_text().splitlines() if log.exists() else []


def early_calls(calls: list[str]) -> list[str]:
    """The early scan's children: the only git calls made with `-C ROOT`."""
    return [c for c in calls if c.startswith("-C ")]


def scratch_left(git_dir: Path) -> list[str]:
    return sorted(p.name for p in git_dir.glob("checkpoint-*"))


def lock_free(common_dir: Path) -> bool:
    path = common_dir / "checkpoint" / "lock"
    if not path.exists():
        return True
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False
    finally:
        os.close(fd)


def look(repo: Repo) -> tuple[object, str, str, str]:
    """Files (all of them, ignored ones too), the index with marks, status, HEAD."""
    return (
        fingerprint(repo.path),
        repo.git("ls-files", "-s", "-v"),
        repo.git("status", "--porcelain", "--untracked-files=all"),
        (repo.path / ".git" / "HEAD").read_text() + repo.git("rev-parse", "HEAD", check=False),
    )


def latest_ref(repo: Repo) -> str:
    refs = repo.git("for-each-ref", "--sort=refname", "--format=%(refname)", "refs/checkpoints")
    return refs.split()[-1]


def saved_paths(repo: Repo, ref: str) -> tuple[list[str], list[str]]:
    """(paths in W, paths in the overlay U) of a checkpoint."""
    parents = repo.git("log", "-1", "--format=%P", ref).split()
    w = repo.git("ls-tree", "-r", "-z", "--name-only", ref).split("\0")
    u: list[str] = []
    head = repo.git("rev-parse", "-q", "--verify", "HEAD", check=False).strip()
    overlay_at = 2 if head and parents and parents[0] == head else 1
    if len(parents) > overlay_at:
        u = repo.git("ls-tree", "-r", "-z", "--name-only", parents[overlay_at]).split("\0")
    return [p for p in w if p], [p for p in u if p]


def trees(repo: Repo, ref: str) -> tuple[str, ...]:
    """W, then each parent's tree (base, I, U): what a checkpoint holds."""
    parents = repo.git("log", "-1", "--format=%P", ref).split()
    return tuple(repo.git("rev-parse", f"{c}^{{tree}}").strip() for c in [ref, *parents])


def blob_stored(repo: Repo, content: bytes) -> bool:
    oid = repo.git("hash-object", "--stdin", input=content).strip()
    found = subprocess.run(
        ["git", "cat-file", "-e", oid], cwd=repo.path, capture_output=True, check=False
    )
    return found.returncode == 0


def run_plain(
    repo: Repo, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`python -m git_checkpoint ARGS`: cli.main without the launcher (no early scan),
    with `env` added."""
    return subprocess.run(
        [sys.executable, "-m", "git_checkpoint", *args],
        cwd=cwd or repo.path,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def no_traceback(proc: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr


# --- 1. fault injection through the launcher ------------------------------------------------


def _kill_run(repo: Repo, args: tuple[str, ...], n: int, mode: str) -> tuple[int, list[str]]:
    counter = repo.path.parent / f"fi-{repo.path.name}"
    counter.unlink(missing_ok=True)
    log = Path(f"{counter}.log")
    log.unlink(missing_ok=True)
    env = {
        **os.environ,
        "PATH": f"{FAULT_DIR}{os.pathsep}{os.environ['PATH']}",
        "FI_REAL_GIT": REAL_GIT,
        "FI_COUNTER": str(counter),
        "FI_KILL_AT": str(n),
        "FI_MODE": mode,
    }
    proc = subprocess.run(
        [LAUNCHER, *args], cwd=repo.path, env=env, capture_output=True, text=True, timeout=120
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, log.read_text().splitlines() if log.exists() else []


def _save_template(tmp_path: Path) -> Repo:
    repo = make_repo(tmp_path / "tpl")
    repo.write("a.txt", "a\n")
    repo.write("src/b.py", "b\n")
    repo.write(".gitignore", "*.log\n")
    repo.commit_all("base")
    repo.cp("save", "-m", "base")
    repo.write("a.txt", "a2\n")  # unstaged
    repo.write("src/b.py", "staged\n")
    repo.git("add", "src/b.py")
    repo.write("src/b.py", "unstaged on top\n")
    repo.write("notes.txt", "overlay\n")
    repo.write("debug.log", "ignored\n")
    return repo


def _copy(repo: Repo, where: Path) -> Repo:
    shutil.rmtree(where, ignore_errors=True)
    shutil.copytree(repo.path, where, symlinks=True)
    return Repo(where)


def test_save_killed_at_every_git_call_keeps_the_workspace_and_frees_the_lock(
    tmp_path: Path,
) -> None:
    """SIGKILL at each git call of a save (the early children included, which also go
    through PATH's git), before and after the call: the work tree, index and HEAD are
    untouched, the lock is free, the next save works. (Scratch folders a kill leaves in
    .git are reported by doctor only after an hour: doctor.SCRATCH_AGE.)"""
    template = _save_template(tmp_path)
    counted = _copy(template, tmp_path / "count")
    code, calls = _kill_run(counted, ("save", "-m", "two"), 0, "before")
    assert code == 0 and len(early_calls(calls)) == 3, calls
    for mode in ("before", "after"):
        for n in range(1, len(calls) + 1):
            work = _copy(template, tmp_path / "w")
            before = look(work)
            code, _ = _kill_run(work, ("save", "-m", "two"), n, mode)
            assert code == -9, (mode, n, code)
            time.sleep(0.05)  # the early children, orphaned, finish on their own
            assert look(work) == before, (mode, n)
            assert lock_free(work.path / ".git"), (mode, n)
            again = work.cp("save", "-m", "again")
            no_traceback(again)
            assert look(work) == before, (mode, n)
            left = scratch_left(work.path / ".git")
            if left:  # what doctor reports once it is an hour old
                old = time.time() - 7200
                for name in left:
                    os.utime(work.path / ".git" / name, (old, old))
                doctor = work.cp("doctor", expect=None)
                assert left[0] in doctor.stdout + doctor.stderr, (mode, n)
            ref = latest_ref(work)
            assert work.git("show", f"{ref}:src/b.py") == "unstaged on top\n"


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("mode", ["before", "after"])
def test_restore_killed_in_its_early_scan_changes_nothing(
    tmp_path: Path, n: int, mode: str
) -> None:
    """A restore killed at one of its early children has begun nothing: no journal,
    workspace as it was, lock free; restore then works."""
    repo = _save_template(tmp_path)
    before = look(repo)
    code, calls = _kill_run(repo, ("restore", "cp_001"), n, mode)
    assert code == -9
    assert all(c.startswith("-C ") for c in calls), calls  # killed in the early scan
    assert look(repo) == before
    assert not (repo.path / ".git/checkpoint/restore-journal.json").exists()
    assert lock_free(repo.path / ".git")
    repo.cp("restore", "cp_001")
    assert (repo.path / "src/b.py").read_text() == "b\n"


# --- 2. races -----------------------------------------------------------------------------


def test_the_attacks_go_through_the_early_scan(repo: Repo) -> None:
    """Guard for this file: `git checkpoint save` here does start the early scan."""
    repo.write("src/app.py", "changed\n")
    calls = logged(repo, "save", "-m", "x")
    assert len(early_calls(calls)) == 3, calls


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


# --- 3. odd repositories ------------------------------------------------------------------


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
    b = _copy(a, tmp_path / "b w")
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


def test_an_unmerged_index_is_refused_and_leaves_nothing(repo: Repo) -> None:
    repo.write("f", "base\n")
    repo.commit_all("f")
    repo.git("checkout", "-q", "-b", "other")
    repo.write("f", "other\n")
    repo.commit_all("other")
    repo.git("checkout", "-q", "main")
    repo.write("f", "mine\n")
    repo.commit_all("mine")
    repo.git("merge", "other", check=False)
    before = look(repo)
    for args in (("save", "-m", "x"), ("restore", "cp_001")):
        proc = repo.cp(*args, expect=None)
        assert proc.returncode in (2, 3), proc.stderr
        no_traceback(proc)
    assert look(repo) == before
    assert scratch_left(repo.path / ".git") == []
    assert lock_free(repo.path / ".git")


@pytest.mark.parametrize("var", ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"])
def test_git_variables_in_the_environment_mean_no_early_scan(repo: Repo, var: str) -> None:
    repo.write("src/app.py", "changed\n")
    value = {
        "GIT_DIR": str(repo.path / ".git"),
        "GIT_WORK_TREE": str(repo.path),
        "GIT_INDEX_FILE": str(repo.path / ".git/index"),
    }[var]
    calls = logged(repo, "save", "-m", "x", **{var: value})
    assert early_calls(calls) == []
    assert repo.git("show", f"{latest_ref(repo)}:src/app.py") == "changed\n"


def test_a_symlinked_dot_git_does_not_wait_for_its_own_lock(repo: Repo, tmp_path: Path) -> None:
    real = tmp_path / "gitdir-elsewhere"
    (repo.path / ".git").rename(real)
    (repo.path / ".git").symlink_to(real)
    repo.git("config", "checkpoint.lockTimeout", "2")
    repo.write("src/app.py", "changed\n")
    started = time.monotonic()
    proc = repo.cp("save", "-m", "x", expect=None)
    took = time.monotonic() - started
    assert proc.returncode == 0 and took < 1.5, (proc.returncode, took, proc.stderr)


def test_a_pruned_worktree_git_file_recreates_nothing(repo: Repo) -> None:
    wt = Repo(repo.path.parent / "wt")
    repo.git("worktree", "add", "-q", str(wt.path))
    admin = repo.path / ".git/worktrees/wt"
    shutil.rmtree(admin)
    proc = wt.cp("save", "-m", "x", expect=2)
    no_traceback(proc)
    assert not admin.exists(), sorted(str(p) for p in admin.rglob("*"))


def test_a_git_file_naming_nowhere_creates_no_folders(tmp_path: Path) -> None:
    work = tmp_path / "work"
    work.mkdir()
    (work / ".git").write_text("gitdir: ../nowhere/deep\n")
    proc = Repo(work).cp("save", "-m", "x", expect=2)
    no_traceback(proc)
    assert not (tmp_path / "nowhere").exists()


def test_an_empty_dot_git_folder_in_a_subfolder_is_not_written(repo: Repo) -> None:
    (repo.path / "sub/.git").mkdir(parents=True)
    repo.write("sub/file.txt", "s\n")
    repo.write("src/app.py", "changed\n")
    repo.cp("save", "-m", "x", cwd=repo.path / "sub")
    assert list((repo.path / "sub/.git").iterdir()) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the repository away")
def test_an_untrusted_repository_gets_no_state_written_by_another_user(repo: Repo) -> None:
    repo.write("src/app.py", "changed\n")
    for dirpath, dirnames, filenames in os.walk(repo.path):
        for name in [*dirnames, *filenames]:
            os.lchown(os.path.join(dirpath, name), 4242, 4242)
    os.lchown(repo.path, 4242, 4242)
    proc = repo.cp("save", "-m", "x", expect=None)
    assert proc.returncode != 0  # git: dubious ownership
    no_traceback(proc)
    made = repo.path / ".git/checkpoint"
    assert not made.exists() or made.stat().st_uid == 4242


# --- 4. overlay limits and secrets ----------------------------------------------------------


def test_an_overlay_over_its_file_limit_is_refused_before_hashing(repo: Repo) -> None:
    repo.write(".checkpoint.yaml", "limits: {overlay_max_files: 3}\n")
    repo.write("src/app.py", "changed\n")
    contents = [f"untracked number {i}\n".encode() for i in range(5)]
    for i, data in enumerate(contents):
        repo.write(f"gen/f{i}.txt", data)
    proc = repo.cp("save", "-m", "x", expect=3)
    assert "overlay too large" in proc.stderr
    no_traceback(proc)
    assert repo.git("for-each-ref", "refs/checkpoints") == ""
    assert not any(blob_stored(repo, data) for data in contents)
    assert scratch_left(repo.path / ".git") == []
    assert not list((repo.path / ".git/checkpoint").glob("quick/pending-*"))


def test_an_overlay_over_its_byte_limit_is_refused_before_hashing(repo: Repo) -> None:
    repo.write(".checkpoint.yaml", "limits: {overlay_max_bytes: 4096}\n")
    big = b"B" * 10_000 + b" unique\n"
    repo.write("big.bin", big)
    proc = repo.cp("save", "-m", "x", expect=3)
    assert "overlay too large" in proc.stderr
    assert repo.git("for-each-ref", "refs/checkpoints") == ""
    assert not blob_stored(repo, big)


@pytest.mark.parametrize("mode", ["block", "warn"])
def test_a_secret_named_file_never_reaches_the_object_store(repo: Repo, mode: str) -> None:
    repo.write(".checkpoint.yaml", f"secrets: {{on_save: {mode}}}\n")
    secret = b"API_KEY=early-attack-0123456789\n"
    repo.write(".env", secret)
    repo.write("notes.txt", "fine\n")
    proc = repo.cp("save", "-m", "x", expect=3 if mode == "block" else 0)
    no_traceback(proc)
    assert ".env" in proc.stderr + proc.stdout
    assert not blob_stored(repo, secret)
    if mode == "warn":
        _, u = saved_paths(repo, latest_ref(repo))
        assert "notes.txt" in u and ".env" not in u


# --- 5. nesting and the lock ----------------------------------------------------------------


def test_a_nested_checkpoint_from_a_git_hook_waits_no_longer_than_lock_timeout(
    repo: Repo,
) -> None:
    """A reference-transaction hook that runs `git checkpoint save` while the outer save
    (holding the lock the launcher took) creates its ref: the inner one gives up after
    checkpoint.lockTimeout, the outer one finishes."""
    repo.git("config", "checkpoint.lockTimeout", "1")
    log = repo.path.parent / "inner.log"
    hook = repo.path / ".git/hooks/reference-transaction"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(
        "#!/bin/sh\n"
        'case "$1" in committed) ;; *) exit 0 ;; esac\n'
        f"git checkpoint save -m inner >> '{log}' 2>&1\n"
        f"echo \"inner exit $?\" >> '{log}'\n"
        "exit 0\n"
    )
    hook.chmod(0o755)
    repo.write("src/app.py", "changed\n")
    started = time.monotonic()
    proc = repo.cp("save", "-m", "outer", timeout=60)
    took = time.monotonic() - started
    assert "cp_001" in proc.stdout
    text = log.read_text()
    assert "another git-checkpoint is running" in text and "inner exit 3" in text, text
    assert took < 15, took
    assert lock_free(repo.path / ".git")


def test_a_lock_held_elsewhere_starts_nothing_and_times_out_cleanly(repo: Repo) -> None:
    repo.git("config", "checkpoint.lockTimeout", "1")
    state_dir = repo.path / ".git/checkpoint"
    state_dir.mkdir(exist_ok=True)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl, sys, time; f = open(sys.argv[1], 'a'); "
            "fcntl.flock(f, fcntl.LOCK_EX); print('held', flush=True); time.sleep(30)",
            str(state_dir / "lock"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        before = look(repo)
        calls = logged(repo, "save", "-m", "x", expect=3)
        assert early_calls(calls) == []
        assert look(repo) == before
        assert scratch_left(repo.path / ".git") == []
    finally:
        holder.kill()
        holder.wait()


def test_a_bad_config_after_the_early_scan_leaves_nothing(repo: Repo) -> None:
    """The scan starts before the configuration is read: a command that then fails on
    it (exit 2) waits for the children, removes their folder and frees the lock."""
    repo.write(".checkpoint.yaml", "limits: {overlay_max_files: -4}\n")
    calls = logged(repo, "save", "-m", "x", expect=2)
    assert len(early_calls(calls)) == 3
    assert scratch_left(repo.path / ".git") == []
    assert lock_free(repo.path / ".git")


# --- 6. a tampered quick state ---------------------------------------------------------------


def _saved_with_quick_state(repo: Repo) -> Path:
    repo.write("src/app.py", "staged\n")
    repo.git("add", "src/app.py")
    repo.write("src/app.py", "unstaged\n")
    time.sleep(1.1)  # nothing racy: the save keeps its quick state
    repo.cp("save", "-m", "one")
    path = repo.path / ".git/checkpoint/quick/state.json"
    assert path.exists()
    return path


def _tamper(path: Path, trees: object) -> None:
    data = json.loads(path.read_text())
    data["trees"] = trees
    path.write_text(json.dumps(data))


@pytest.mark.parametrize(
    "bad",
    [
        "x",
        [1, 2],
        None,
        {"index": 5, "overlay": []},
        {"index": "zzz", "overlay": None},
        {"index": "", "overlay": None},
        {"index": "4b825dc642cb6eb9a060e54bf8d69288fbee4904", "overlay": "not-a-tree"},
    ],
)
def test_garbage_trees_in_the_quick_state_do_not_crash(repo: Repo, bad: object) -> None:
    path = _saved_with_quick_state(repo)
    _tamper(path, bad)
    proc = repo.cp("save", "-m", "again", expect=None)
    no_traceback(proc)
    assert proc.returncode == 0, proc.stderr
    repo.write("src/app.py", "elsewhere\n")
    proc = repo.cp("restore", "cp_001", expect=None)
    no_traceback(proc)
    assert proc.returncode in (0, 3), proc.stderr


def test_a_malformed_tree_in_the_quick_state_does_not_reach_a_restore(repo: Repo) -> None:
    """Only a save takes trees from the quick state (store.save_trees_of); a restore
    asks git what the checkpoint holds."""
    path = _saved_with_quick_state(repo)
    staged = repo.git("ls-files", "-s")
    _tamper(path, {"index": "zzz", "overlay": None})
    repo.write("src/app.py", "elsewhere\n")
    repo.cp("restore", "cp_001")
    assert repo.git("ls-files", "-s") == staged


def test_a_wrong_tree_in_the_quick_state_does_not_steer_a_restore(repo: Repo) -> None:
    path = _saved_with_quick_state(repo)
    staged = repo.git("ls-files", "-s")
    _tamper(path, {"index": "4b825dc642cb6eb9a060e54bf8d69288fbee4904", "overlay": None})
    repo.write("src/app.py", "elsewhere\n")
    repo.cp("restore", "cp_001", expect=None)
    assert repo.git("ls-files", "-s") == staged
