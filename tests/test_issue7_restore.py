"""Issue 7, the restore side: one regression test per finding, named after what broke.

Interruptions are made deterministic with a `git` wrapper first on PATH that, at the
N-th call whose arguments match a pattern, kills git-checkpoint, fails, or does
something to the work tree first (a file turning into a folder mid-restore).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from git_checkpoint.gitcore.pathrules import git_refuses_path

from .conftest import Repo, make_repo
from .helpers import blob, forge_checkpoint, mktree, state

REAL_GIT = os.path.realpath(shutil.which("git") or "/usr/bin/git")
JOURNAL = ".git/checkpoint/restore-journal.json"

WRAPPER = """#!/bin/sh
# Acts at the $TRAP_NTH-th call whose arguments contain $TRAP_ON (real index only) while
# the shell condition $TRAP_WHEN holds.
if [ -z "$GIT_INDEX_FILE" ]; then
  case " $* " in
    *"$TRAP_ON"*)
      sh -c "${TRAP_WHEN:-true}" || exec "$REAL_GIT" "$@"
      n=0; [ -f "$TRAP_COUNT" ] && read -r n < "$TRAP_COUNT"; n=$((n + 1))
      echo "$n" > "$TRAP_COUNT"
      if [ "$n" = "${TRAP_NTH:-1}" ]; then
        case "$TRAP_DO" in
          kill) kill -KILL "$PPID"; exit 137 ;;
          fail) echo "fatal: injected failure" >&2; exit 128 ;;
          *) sh -c "$TRAP_DO" ;;
        esac
      fi ;;
  esac
fi
exec "$REAL_GIT" "$@"
"""
WRAPPER_STAGING = WRAPPER.replace('if [ -z "$GIT_INDEX_FILE" ]; then', "if true; then")


def trapped(
    repo: Repo,
    tmp: Path,
    on: str,
    do: str,
    nth: int = 1,
    any_index: bool = False,
    when: str = "true",
) -> dict[str, str]:
    folder = tmp / f"trap-{time.monotonic_ns()}"
    folder.mkdir()
    script = folder / "git"
    script.write_text(WRAPPER_STAGING if any_index else WRAPPER)
    script.chmod(0o755)
    return {
        "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}",
        "REAL_GIT": REAL_GIT,
        "TRAP_ON": on,
        "TRAP_DO": do,
        "TRAP_NTH": str(nth),
        "TRAP_COUNT": str(folder / "count"),
        "TRAP_WHEN": when,
    }


def direct(repo: Repo, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`git-checkpoint ARGS` without git in front: git would put its own exec path first
    on PATH, and the trap's `git` would not be the one found.
    """
    return subprocess.run(
        [shutil.which("git-checkpoint") or "git-checkpoint", *args],
        cwd=repo.path,
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        check=False,
    )


def interrupted(repo: Repo, tmp: Path, *args: str, on: str, when: str = "true") -> None:
    """Run `git checkpoint ARGS` and kill it at the matching git call."""
    proc = direct(repo, *args, env=trapped(repo, tmp, on, "kill", when=when))
    assert proc.returncode != 0, proc.stdout
    assert (repo.path / JOURNAL).exists(), "the kill came too early or too late"


@pytest.fixture
def two(repo: Repo) -> Repo:
    """cp_001 with a.txt 'one'; then the workspace has a.txt 'two' and b.txt."""
    repo.write("a.txt", "one\n")
    repo.commit_all("a")
    repo.cp("save", "-m", "one")
    repo.write("a.txt", "two\n")
    repo.write("b.txt", "new\n")
    return repo


# --- data loss ------------------------------------------------------------------------------


def test_continue_saves_what_changed_after_the_interruption(two: Repo, tmp_path: Path) -> None:
    interrupted(two, tmp_path, "restore", "cp_001", on="add --refresh")
    assert (two.path / "a.txt").read_text() == "one\n"  # written before the kill
    two.write("a.txt", "edited after the kill\n")
    two.write("c.txt", "made after the kill\n")
    out = two.cp("restore", "--continue").stdout
    assert "workspace matches cp_001" in out
    assert not (two.path / "c.txt").exists()
    two.cp("undo")
    assert (two.path / "a.txt").read_text() == "edited after the kill\n"
    assert (two.path / "c.txt").read_text() == "made after the kill\n"


def _ignored_residue(repo: Repo) -> None:
    """cp_001 ignores nothing; the workspace ignores scratch/, which holds notes."""
    repo.cp("save", "-m", "rules without scratch")
    repo.write(".gitignore", "*.log\nnode_modules/\nscratch/\n")
    repo.write("scratch/notes.txt", "my notes\n")


@pytest.mark.parametrize("recovery", ["continue", "undo"])
def test_killed_before_the_sweep_loses_no_uncovered_file(
    repo: Repo, tmp_path: Path, recovery: str
) -> None:
    _ignored_residue(repo)
    before = state(repo)
    # the first git call once the restored .gitignore is back in place
    interrupted(repo, tmp_path, "restore", "cp_001", on=" ", when="! grep -q scratch .gitignore")
    assert (repo.path / ".gitignore").read_text() == "*.log\nnode_modules/\n"
    if recovery == "undo":
        repo.cp("undo")
        assert state(repo) == before
        return
    repo.cp("restore", "--continue")
    assert not (repo.path / "scratch/notes.txt").exists()
    repo.cp("undo")
    assert (repo.path / "scratch/notes.txt").read_text() == "my notes\n"


def test_names_git_will_not_index_are_left_out_and_never_removed(repo: Repo) -> None:
    repo.cp("save", "-m", "base")
    repo.write(".gitignore", "*.log\n")
    names = ["GIT~1", "git~1", ".git.", ".GIT "]
    for name in names:
        repo.write(name, f"work in {name}\n")
    proc = repo.cp("save", "-m", "odd names")
    assert "left out" in proc.stderr and "GIT~1" in proc.stderr
    repo.cp("restore", "cp_001")
    for name in names:
        assert (repo.path / name).read_text() == f"work in {name}\n"


def test_a_failing_smudge_filter_changes_nothing(two: Repo) -> None:
    two.write(".gitattributes", "*.dat filter=broken\n")
    two.write("x.dat", "data\n")
    two.git("config", "filter.broken.clean", "cat")
    two.git("config", "filter.broken.smudge", "false")
    two.git("config", "filter.broken.required", "true")
    two.cp("save", "-m", "with dat")
    two.write("x.dat", "changed\n")
    (two.path / "b.txt").unlink()
    before = state(two)
    proc = two.cp("restore", "cp_002", expect=4)
    assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert state(two) == before
    assert not (two.path / JOURNAL).exists()


def test_a_full_disk_changes_nothing(tmp_path: Path) -> None:
    mount = tmp_path / "small"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(mount)]).returncode:
        pytest.skip("cannot mount a small tmpfs here (needs root)")
    try:
        repo = make_repo(mount / "work")
        repo.write("a.txt", "one\n")
        repo.commit_all("a")
        repo.write("big.bin", os.urandom(300_000))
        repo.cp("save", "-m", "big")
        (repo.path / "big.bin").unlink()
        repo.write("a.txt", "two\n")
        filler = mount / "filler"
        with open(filler, "wb") as fh:  # leave about 100 KB free
            free = shutil.disk_usage(mount).free
            fh.write(b"\0" * max(0, free - 100_000))
        before = state(repo)
        proc = repo.cp("restore", "cp_001", expect=None)
        assert proc.returncode in (3, 4), proc.stdout
        assert "Traceback" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
        assert state(repo) == before
        filler.unlink()
        repo.cp("restore", "cp_001", expect=None)
        assert (repo.path / "big.bin").exists() or "interrupted" in repo.cp("status").stderr
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_a_write_that_fails_midway_goes_back_by_itself(repo: Repo) -> None:
    if shutil.which("chattr") is None:
        pytest.skip("no chattr")
    repo.write("a.txt", "one\n")
    repo.write("d/b.txt", "one\n")
    repo.commit_all("files")
    repo.cp("save", "-m", "one")
    repo.write("a.txt", "two\n")
    repo.write("d/b.txt", "two\n")
    before = state(repo)
    # An immutable file can be neither written (materialize._overwrite) nor unlinked.
    if subprocess.run(["chattr", "+i", str(repo.path / "d/b.txt")]).returncode:
        pytest.skip("this filesystem has no immutable files")
    try:
        proc = repo.cp("restore", "cp_001", expect=None)
    finally:
        subprocess.run(["chattr", "-i", str(repo.path / "d/b.txt")], check=True)
    assert proc.returncode in (3, 4)
    assert "put back" in proc.stderr and "Traceback" not in proc.stderr
    assert state(repo) == before
    assert not (repo.path / JOURNAL).exists()


def test_a_file_that_becomes_a_folder_mid_restore_is_left_with_its_contents(
    two: Repo, tmp_path: Path
) -> None:
    env = trapped(
        two,
        tmp_path,
        "check-attr",  # the staging step
        "rm a.txt && mkdir a.txt && echo precious > a.txt/new-work.txt",
        any_index=True,
    )
    proc = direct(two, "restore", "cp_001", env=env)
    assert proc.returncode == 3 and "a.txt" in proc.stderr, proc.stderr
    assert (two.path / "a.txt/new-work.txt").read_text() == "precious\n"
    two.cp("restore", "--continue")  # keeps the folder in a safety checkpoint, then finishes
    assert (two.path / "a.txt").read_text() == "one\n"
    two.cp("undo")
    assert (two.path / "a.txt/new-work.txt").read_text() == "precious\n"


# --- git states ----------------------------------------------------------------------------


def _conflict(repo: Repo) -> None:
    repo.write("c.txt", "base\n")
    repo.commit_all("base")
    repo.git("switch", "-q", "-c", "other")
    repo.write("c.txt", "other\n")
    repo.commit_all("other")
    repo.git("switch", "-q", "main")
    repo.write("c.txt", "main\n")
    repo.commit_all("main side")


@pytest.mark.parametrize("operation", ["merge", "cherry-pick", "revert", "rebase", "bisect", "am"])
def test_restore_refuses_while_a_git_operation_is_in_progress(repo: Repo, operation: str) -> None:
    _conflict(repo)
    repo.cp("save", "-m", "before")
    if operation == "merge":
        repo.git("merge", "other", check=False)
    elif operation == "cherry-pick":
        repo.git("cherry-pick", "other", check=False)
    elif operation == "revert":
        repo.write("c.txt", "edited again\n")
        repo.commit_all("edit")
        repo.git("revert", "--no-edit", "HEAD~1", check=False)
    elif operation == "rebase":
        repo.git("rebase", "--exec", "false", "HEAD~1", check=False)
    elif operation == "bisect":
        repo.git("bisect", "start")
    else:
        patch = repo.git("format-patch", "-1", "--stdout", "other")
        repo.git("am", input=patch.encode(), check=False)
    word = {"rebase": "rebase", "am": "am", "bisect": "bisect"}.get(operation, operation)
    before = state(repo)
    proc = repo.cp("restore", "main/cp_001", "--keep-head", expect=3)
    assert word in proc.stderr and "Traceback" not in proc.stderr
    assert state(repo) == before
    for command in (["status"], ["list", "--all"], ["log"], ["show", "main/cp_001"],
                    ["diff", "main/cp_001"], ["resume"]):  # fmt: skip
        assert repo.cp(*command, expect=None).returncode in (0, 1), command


def test_autocrlf_leaves_written_files_clean_in_the_index(repo: Repo) -> None:
    repo.git("config", "core.autocrlf", "true")
    repo.write("t.txt", "a\nb\n")
    repo.commit_all("text")
    repo.git("rm", "-q", "--cached", "-r", ".")
    repo.git("reset", "-q", "--hard")
    repo.cp("save", "-m", "clean")
    repo.write("t.txt", "changed\r\n")
    repo.cp("restore", "cp_001")
    assert repo.git("status", "--porcelain") == ""
    repo.git("switch", "-q", "-c", "elsewhere")  # git itself finds nothing in the way


def test_a_backslash_in_a_name_is_an_ordinary_character(repo: Repo) -> None:
    repo.write("src\\utils\\helper.py", "v1\n")
    repo.commit_all("windows-looking name")
    repo.cp("save", "-m", "v1")
    repo.write("src\\utils\\helper.py", "v2\n")
    repo.cp("restore", "cp_001")
    assert (repo.path / "src\\utils\\helper.py").read_text() == "v1\n"
    repo.cp("undo")
    assert (repo.path / "src\\utils\\helper.py").read_text() == "v2\n"


NAMES = [
    "a",
    "a\\b",
    "src\\utils\\h.py",
    ".git",
    ".GIT",
    ".Git",
    ".git.",
    ".git ",
    ".git. .",
    "git~1",
    "GIT~1",
    "git~2",
    ".gitx",
    "x.git",
    ".git:stream",
    "git~1:x",
    ".git\\x",
    "a/.git/b",
    "a/GIT~1/b",
    "..",
    "a/../b",
    ".",
    ".gitmodules",
    "-x",
    " ",
    "a b",
]


@pytest.mark.parametrize("name", NAMES)
def test_path_rules_refuse_exactly_what_git_refuses(empty_repo: Repo, name: str) -> None:
    oid = blob(empty_repo, b"x")
    proc = subprocess.run(
        ["git", "update-index", "--add", "--cacheinfo", f"100644,{oid},{name}"],
        cwd=empty_repo.path,
        capture_output=True,
        check=False,
    )
    assert git_refuses_path(name) == (proc.returncode != 0), proc.stderr


def test_move_head_never_moves_a_branch_to_another_branchs_checkpoint(repo: Repo) -> None:
    repo.cp("save", "-m", "on main")
    repo.git("switch", "-q", "-c", "feature")
    repo.write("f.txt", "feature work\n")
    repo.commit_all("feature")
    feature = repo.git("rev-parse", "feature").strip()
    proc = repo.cp("restore", "main/cp_001", "--move-head", expect=3)
    assert "git switch main" in proc.stderr and "--keep-head" in proc.stderr
    assert repo.git("rev-parse", "feature").strip() == feature
    repo.cp("restore", "main/cp_001", "--keep-head")
    assert repo.git("rev-parse", "feature").strip() == feature


def test_undo_after_run_with_a_task_undoes_that_run(repo: Repo) -> None:
    repo.cp("save", "-m", "branch task")  # main/cp_001
    repo.write("a.txt", "x\n")
    repo.cp("restore", "cp_001")  # main: an older restore with its safety checkpoint
    repo.write("src/app.py", "print('before run')\n")
    before = state(repo)
    agent = f"{sys.executable} -c \"open('src/app.py','w').write('broken')\""
    repo.write(".checkpoint.yaml", "verifiers:\n  - {name: never, command: 'false'}\n")
    before = state(repo)
    repo.cp("run", "--task", "T", "--attempts", "1", "--", "sh", "-c", agent, expect=1)
    assert state(repo) == before
    repo.cp("undo")  # goes back over the run's rollback: the broken attempt
    assert (repo.path / "src/app.py").read_text() == "broken"


def test_undo_in_a_detached_worktree_undoes_its_own_restore(repo: Repo, tmp_path: Path) -> None:
    repo.git("switch", "-q", "--detach")
    other = tmp_path / "other"
    repo.git("worktree", "add", "-q", "--detach", str(other))
    b = Repo(other)
    for r, word in ((repo, "A"), (b, "B")):
        r.write("src/app.py", f"saved in {word}\n")
        r.cp("save", "-m", word)
        r.write("src/app.py", f"edited in {word}\n")
    repo.cp("restore", "detached/cp_001")
    b.cp("restore", "detached/cp_002")
    repo.cp("undo")
    assert (repo.path / "src/app.py").read_text() == "edited in A\n"
    assert (b.path / "src/app.py").read_text() == "saved in B\n"


def test_a_restore_in_progress_is_not_called_interrupted(two: Repo) -> None:
    (two.path / JOURNAL).parent.mkdir(parents=True, exist_ok=True)
    journal = {
        "target": "0" * 40,
        "target_name": "main/cp_001",
        "safety": "0" * 40,
        "safety_name": "main/cp_002",
        "head_from": None,
        "head_to": None,
        "move_head": False,
        "started_at": "2026-01-01T00:00:00Z",
        "pid": 1,
        "task": "main",
        "kind": "restore",
    }
    (two.path / JOURNAL).write_text(json.dumps(journal))
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl,os,sys,time; fd=os.open(sys.argv[1], os.O_RDWR|os.O_CREAT);"
            "fcntl.flock(fd, fcntl.LOCK_EX); os.write(fd, b'%d\\n' % os.getpid());"
            "print('held', flush=True); time.sleep(30)",
            str(two.path / ".git/checkpoint/lock"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        err = two.cp("list").stderr
        assert f"in progress (pid {holder.pid})" in err and "interrupted" not in err
        assert f"in progress (pid {holder.pid})" in two.cp("status").stdout
    finally:
        holder.kill()
        holder.wait()
    assert "interrupted" in two.cp("list").stderr


def test_drop_keeps_what_a_pending_restore_needs_and_undo_works(two: Repo, tmp_path: Path) -> None:
    before = state(two)
    interrupted(two, tmp_path, "restore", "cp_001", on="add --refresh")
    journal = json.loads((two.path / JOURNAL).read_text())
    proc = two.cp("drop", journal["safety_name"].split("/")[-1], expect=3)
    assert "interrupted restore needs it" in proc.stderr
    two.cp("undo")
    assert state(two) == before


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


# --- hostile input ---------------------------------------------------------------------------


def test_a_checkpoint_with_a_non_regular_config_file_is_refused(repo: Repo) -> None:
    link = blob(repo, b"/dev/zero")
    head_tree = repo.git("rev-parse", "HEAD^{tree}").strip()
    overlay = mktree(repo, [("120000", "blob", link, ".checkpoint.yaml")])
    forge_checkpoint(repo, head_tree, overlay)
    before = state(repo)
    proc = repo.cp("restore", "cp_099", expect=3)
    assert ".checkpoint.yaml" in proc.stderr
    assert state(repo) == before


def test_a_foreign_safety_checkpoint_is_never_undone_to(repo: Repo) -> None:
    head = repo.git("rev-parse", "HEAD").strip()
    repo.write("evil.txt", "attacker\n")
    repo.commit_all("attacker commit")
    evil = repo.git("rev-parse", "HEAD").strip()
    repo.git("reset", "-q", "--hard", head)
    index = repo.git("commit-tree", f"{evil}^{{tree}}", "-p", evil, "-m", "i").strip()
    message = (
        f"checkpoint cp_900 on main: fake\n\nbase_commit: {evil}\ntask: main\n"
        f"checkpoint_id: cp_900\nauto: pre-restore\nhead_after_restore: {head}\n"
    )
    fake = repo.git("commit-tree", f"{evil}^{{tree}}", "-p", evil, "-p", index, "-m", message)
    repo.git("update-ref", "refs/checkpoints/main/cp_900", fake.strip())
    proc = repo.cp("undo", expect=2)
    assert "nothing to undo" in proc.stderr
    assert repo.git("rev-parse", "main").strip() == head


def _raw_tree(repo: Repo, entries: list[tuple[str, str, str]]) -> str:
    data = b"".join(
        f"{mode} {name}".encode() + b"\0" + bytes.fromhex(oid) for mode, name, oid in entries
    )
    return repo.git("hash-object", "-t", "tree", "-w", "--literally", "--stdin", input=data).strip()


@pytest.mark.parametrize("kind", ["duplicate", "unsorted"])
def test_trees_git_fsck_would_flag_are_refused(repo: Repo, kind: str) -> None:
    one, two = blob(repo, b"one\n"), blob(repo, b"two\n")
    readme = repo.git("rev-parse", "HEAD:README.md").strip()
    if kind == "duplicate":
        rows = [("100644", "README.md", readme), ("100644", "x.txt", one), ("100644", "x.txt", two)]
    else:
        rows = [("100644", "z.txt", one), ("100644", "README.md", readme), ("100644", "a.txt", two)]
    overlay = _raw_tree(repo, rows[1:] if kind == "duplicate" else rows)
    forge_checkpoint(repo, repo.git("rev-parse", "HEAD^{tree}").strip(), overlay)
    before = state(repo)
    proc = repo.cp("restore", "cp_099", expect=3)
    assert "out of order" in proc.stderr
    assert state(repo) == before


@pytest.mark.parametrize(
    "field, value", [("pid", "abc"), ("move_head", "yes"), ("continued_from", [1]), ("x", 1)]
)
def test_a_journal_with_wrong_value_types_is_a_one_line_error(
    two: Repo, field: str, value: object
) -> None:
    two.cp("restore", "cp_001")
    journal = {
        "target": "0" * 40, "target_name": "main/cp_001", "safety": "0" * 40,
        "safety_name": "main/cp_002", "head_from": None, "head_to": None, "move_head": False,
        "started_at": "2026-01-01T00:00:00Z", "pid": 1, "task": "main", "kind": "restore",
    }  # fmt: skip
    journal[field] = value
    (two.path / JOURNAL).write_text(json.dumps(journal))
    proc = two.cp("restore", "--continue", expect=2)
    assert "unreadable" in proc.stderr and "Traceback" not in proc.stderr
    two.cp("undo")  # sets the journal aside and undoes the last finished restore
    assert (two.path / "a.txt").read_text() == "two\n"


def test_a_fetched_checkpoint_that_changes_the_verifiers_says_so(repo: Repo) -> None:
    repo.write(".checkpoint.yaml", "verifiers:\n  - {name: evil, command: 'touch PWNED'}\n")
    repo.cp("save", "-m", "brings its own verifiers")
    commit = repo.git("rev-parse", "refs/checkpoints/main/cp_001").strip()
    repo.git("update-ref", "refs/checkpoints/remotes/origin/main/cp_001", commit)
    repo.git("update-ref", "-d", "refs/checkpoints/main/cp_001")
    (repo.path / ".checkpoint.yaml").unlink()
    proc = repo.cp("restore", "origin/main/cp_001")
    assert "warning:" in proc.stderr and "verifier commands" in proc.stderr
    assert not (repo.path / "PWNED").exists()


def test_a_broken_config_brought_back_by_restore_can_be_undone(repo: Repo) -> None:
    repo.write(".checkpoint.yaml", "verifiers: [\n")  # broken YAML
    repo.cp("save", "-m", "broken config", expect=2)  # refused: no checkpoint of it yet
    repo.git("add", ".checkpoint.yaml")
    repo.git("commit", "-q", "-m", "someone committed a broken config")
    (repo.path / ".checkpoint.yaml").write_text("verifiers: []\n")
    repo.cp("save", "-m", "good config")
    repo.git("checkout", "-q", "--", ".checkpoint.yaml")  # the broken one is back on disk
    assert repo.cp("list", expect=2).stderr.count("\n") == 1
    proc = repo.cp("restore", "cp_001")
    assert "using the default settings" in proc.stderr
    assert (repo.path / ".checkpoint.yaml").read_text() == "verifiers: []\n"
    repo.cp("undo")
    assert (repo.path / ".checkpoint.yaml").read_text() == "verifiers: [\n"
