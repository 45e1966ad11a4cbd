"""restore, undo, --continue and the safety net, on real repositories."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ..conftest import Repo
from ..helpers import fingerprint, state


def agent_mess(repo: Repo) -> None:
    """What a failed attempt leaves behind: every kind of change at once."""
    (repo.path / "README.md").unlink()  # deleted tracked file
    repo.write("src/app.py", "print('broken')\n")  # modified
    repo.write("src/new_module.py", "x = 1\n")  # new untracked
    repo.write("residue/deep/gen.txt", "generated\n")  # new untracked tree
    os.chmod(repo.path / "tool.sh", 0o644)  # chmod -x
    (repo.path / "link").unlink()
    os.symlink("src/app.py", repo.path / "link")  # re-pointed symlink
    repo.git("add", "src/new_module.py")  # staged


@pytest.fixture
def rich(repo: Repo) -> Repo:
    repo.write("tool.sh", "#!/bin/sh\necho hi\n", mode=0o755)
    os.symlink("README.md", repo.path / "link")
    repo.write("data.bin", bytes(range(256)) * 4)
    repo.commit_all("rich")
    repo.write("src/app.py", "print('work in progress')\n")
    repo.git("add", "src/app.py")
    repo.write("src/app.py", "print('work in progress, unstaged part')\n")
    repo.write("notes/todo.txt", "untracked work\n")
    return repo


def outside_files(repo: Repo) -> None:
    """Files restore must never touch: dependencies, ignored logs, secrets."""
    repo.write("node_modules/lib/index.js", "module.exports = 1\n")
    repo.write("debug.log", "ignored log\n")
    repo.write(".env", "SECRET=1\n")


def test_restore_brings_back_every_kind_of_change(rich: Repo) -> None:
    rich.cp("save", "-m", "good")
    before = state(rich)
    agent_mess(rich)
    out = rich.cp("restore", "cp_001").stdout
    assert state(rich) == before
    assert "safety checkpoint: main/cp_002" in out
    assert "removed: residue/deep/gen.txt" in out
    assert "brought back: README.md" in out
    assert out.strip().endswith("workspace matches cp_001")
    assert not (rich.path / "residue").exists()  # emptied folders go too
    # staged and unstaged apart
    assert "unstaged part" not in rich.git("show", ":src/app.py")
    assert "unstaged part" in (rich.path / "src/app.py").read_text()


def test_restore_leaves_everything_outside_the_managed_set(rich: Repo) -> None:
    outside_files(rich)
    rich.cp("save")
    outside = {p: os.lstat(rich.path / p).st_mtime_ns for p in ("debug.log", ".env")}
    fp_before = fingerprint(rich.path)
    agent_mess(rich)
    rich.write("debug.log", "ignored log, changed by the attempt\n")
    rich.write("node_modules/lib/extra.js", "new dep\n")
    rich.cp("restore")
    after = fingerprint(rich.path)
    assert after["debug.log"][1] == b"ignored log, changed by the attempt\n"
    assert after["node_modules/lib/extra.js"][1] == b"new dep\n"
    assert after[".env"] == fp_before[".env"]
    assert os.lstat(rich.path / ".env").st_mtime_ns == outside[".env"]
    managed = {k: v for k, v in after.items() if not k.startswith(("node_modules", "debug.log"))}
    expected = {k: v for k, v in fp_before.items() if not k.startswith(("node_modules", "debug"))}
    assert managed == expected


def test_undo_gives_back_the_exact_pre_restore_state(rich: Repo) -> None:
    rich.cp("save")
    agent_mess(rich)
    messy = state(rich)
    rich.cp("restore")
    assert state(rich) != messy
    out = rich.cp("undo").stdout
    assert state(rich) == messy
    assert "workspace matches" in out
    # and the undo is itself undoable
    rich.cp("undo")
    assert state(rich) != messy
    rich.cp("undo")
    assert state(rich) == messy


def test_only_differing_paths_are_written(rich: Repo) -> None:
    for i in range(50):
        rich.write(f"pkg/m{i}.py", f"v = {i}\n")
    rich.commit_all("more files")
    rich.cp("save")
    rich.git("update-index", "--refresh")
    time.sleep(1.1)  # so a rewrite would show in mtimes
    untouched = {p: os.lstat(rich.path / p).st_mtime_ns for p in ("pkg/m1.py", "pkg/m2.py")}
    stat_line = rich.git("ls-files", "--debug", "pkg/m1.py")
    rich.write("pkg/m3.py", "v = 'changed'\n")
    out = rich.cp_json("restore")
    assert out["brought_back"] == ["pkg/m3.py"]
    assert out["removed"] == []
    assert {p: os.lstat(rich.path / p).st_mtime_ns for p in untouched} == untouched
    assert rich.git("ls-files", "--debug", "pkg/m1.py") == stat_line  # stat cache kept


def test_dry_run_changes_nothing(rich: Repo) -> None:
    rich.cp("save")
    agent_mess(rich)
    before = state(rich)
    refs_before = rich.git("for-each-ref", "refs/checkpoints")
    out = rich.cp("restore", "--dry-run").stdout
    assert "would restore main/cp_001" in out
    assert "would remove: residue/deep/gen.txt" in out
    assert state(rich) == before
    assert rich.git("for-each-ref", "refs/checkpoints") == refs_before
    data = rich.cp_json("restore", "--dry-run")
    assert data["dry_run"] is True and "README.md" in data["would_bring_back"]
    assert data["brought_back"] == [] and data["removed"] == []  # nothing was done


def test_head_moved_refuses_then_move_head_then_undo(rich: Repo) -> None:
    rich.cp("save", "-m", "before commit")
    saved = state(rich)
    base = rich.git("rev-parse", "HEAD").strip()
    rich.write("feature.py", "feature = True\n")
    later = rich.commit_all("agent commit")
    after_commit = state(rich)

    proc = rich.cp("restore", "cp_001", expect=3)
    assert "--move-head" in proc.stderr and "--keep-head" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert state(rich) == after_commit

    out = rich.cp("restore", "cp_001", "--move-head").stdout
    assert rich.git("rev-parse", "HEAD").strip() == base
    assert rich.git("symbolic-ref", "HEAD").strip() == "refs/heads/main"
    assert later[:12] in out  # the commit left behind is named
    assert state(rich) == saved

    rich.cp("undo")
    assert rich.git("rev-parse", "HEAD").strip() == later
    assert state(rich) == after_commit


def test_keep_head_restores_files_over_the_new_head(rich: Repo) -> None:
    rich.cp("save")
    saved_tree = fingerprint(rich.path)
    rich.write("feature.py", "feature = True\n")
    later = rich.commit_all("agent commit")
    rich.cp("restore", "--keep-head")
    assert rich.git("rev-parse", "HEAD").strip() == later
    assert fingerprint(rich.path) == saved_tree  # feature.py was not in the checkpoint


def test_detached_head_is_explained(rich: Repo) -> None:
    rich.cp("save", "--task", "t")
    rich.git("checkout", "-q", "--detach", "HEAD~1")
    proc = rich.cp("restore", "t/cp_001", expect=3)
    assert "detached HEAD" in proc.stderr


def test_unknown_checkpoint_and_bad_flags(rich: Repo) -> None:
    rich.cp("save")
    before = state(rich)
    proc = rich.cp("restore", "cp_042", expect=2)
    assert "unknown checkpoint" in proc.stderr and "Traceback" not in proc.stderr
    rich.cp("restore", "--move-head", "--keep-head", expect=2)
    rich.cp("undo", expect=2)  # nothing to undo yet
    assert state(rich) == before


def test_unborn_head_restore(empty_repo: Repo) -> None:
    empty_repo.write("a.txt", "first\n")
    empty_repo.write("b/c.txt", "second\n")
    empty_repo.git("add", "a.txt")
    empty_repo.cp("save")
    before = state(empty_repo)
    empty_repo.write("a.txt", "changed\n")
    empty_repo.write("junk.txt", "junk\n")
    empty_repo.cp("restore")
    assert state(empty_repo) == before


def test_symlink_in_the_workspace_is_never_followed(repo: Repo, tmp_path: Path) -> None:
    """The user's own symlink to a folder outside; the target has a file below that name."""
    outside = tmp_path / "outside"
    outside.mkdir()
    repo.write("dir/file.txt", "in a real folder\n")
    repo.cp("save")  # checkpoint: dir/ is a real folder with a file
    (repo.path / "dir/file.txt").unlink()
    (repo.path / "dir").rmdir()
    os.symlink(outside, repo.path / "dir")  # now dir -> outside (untracked symlink, managed)
    repo.cp("restore")
    assert list(outside.iterdir()) == []
    assert not (repo.path / "dir").is_symlink()
    assert (repo.path / "dir/file.txt").read_text() == "in a real folder\n"


def test_an_unmanaged_file_in_the_way_is_kept_in_the_safety_checkpoint(repo: Repo) -> None:
    """A file the target tracks, ignored and untracked now: it is kept in the safety
    checkpoint before it is overwritten, so a rollback is not stuck at the attempt, and
    undo gives it back (restore/test_adopted_files.py: too big ones are refused)."""
    repo.write("gen/out.txt", "tracked once\n")
    repo.commit_all("add gen")
    repo.cp("save")
    repo.git("rm", "-q", "--cached", "gen/out.txt")
    repo.write(".gitignore", "*.log\nnode_modules/\ngen/\n")
    repo.write("gen/out.txt", "now an ignored file the user cares about\n")
    repo.commit_all("untrack gen")
    before = state(repo)
    repo.cp("restore", "--keep-head")
    assert (repo.path / "gen/out.txt").read_text() == "tracked once\n"
    repo.cp("undo")
    assert state(repo) == before


# --- interruption, locking, concurrency ---------------------------------------------------


def _many_files(repo: Repo, n: int, text: str) -> None:
    for i in range(n):
        repo.write(f"many/d{i % 30}/f{i}.txt", f"{text} {i}\n" * 20)


@pytest.mark.parametrize("recovery", ["continue", "undo"])
def test_kill_9_mid_restore_then_recover(repo: Repo, recovery: str) -> None:
    _many_files(repo, 3000, "original")
    repo.commit_all("3000 files")
    repo.cp("save", "-m", "good")
    good = state(repo)
    _many_files(repo, 3000, "attempt")
    repo.write("residue.txt", "left by the attempt\n")
    attempt = state(repo)
    journal = repo.path / ".git/checkpoint/restore-journal.json"
    for _ in range(5):
        proc = subprocess.Popen(  # the python process itself: `git` would only be its parent
            ["git-checkpoint", "restore", "cp_001"],
            cwd=repo.path,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        while proc.poll() is None and not journal.exists():
            time.sleep(0.001)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        if journal.exists():
            break
        repo.cp("undo")  # finished before the kill: go back and try again
    assert journal.exists(), "could not interrupt the restore"
    assert json.loads(journal.read_text())["target_name"] == "main/cp_001"

    listed = repo.cp("list")
    assert "interrupted" in listed.stderr
    refused = repo.cp("restore", "cp_001", expect=3)
    assert "--continue" in refused.stderr

    if recovery == "continue":
        out = repo.cp("restore", "--continue").stdout
        assert "workspace matches" in out
        assert state(repo) == good
        repo.cp("undo")
    else:
        repo.cp("undo")
    assert state(repo) == attempt
    assert not journal.exists()
    repo.git("fsck", "--strict")


def test_lock_held_past_its_wait_is_refused(repo: Repo) -> None:
    repo.cp("save")
    repo.git("config", "checkpoint.lockTimeout", "0.3")
    lock = repo.path / ".git/checkpoint/lock"
    with open(lock, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        proc = repo.cp("restore", expect=3)
        save = repo.cp("save", expect=3)
    assert "another git-checkpoint is running" in proc.stderr
    assert "waited" in save.stderr


def test_concurrent_restores_and_saves(rich: Repo) -> None:
    rich.cp("save", "-m", "a")
    a = state(rich)
    rich.write("src/app.py", "print('b')\n")
    rich.write("b-only.txt", "b\n")
    rich.cp("save", "-m", "b")
    b = state(rich)
    commands = [
        ["restore", "cp_001"],
        ["restore", "cp_002"],
        ["save", "-m", "x"],
        ["restore", "cp_001"],
    ]
    procs = [
        subprocess.Popen(
            ["git", "checkpoint", *c],
            cwd=rich.path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for c in commands
    ]
    codes = [p.wait(timeout=120) for p in procs]
    assert codes == [0, 0, 0, 0]
    assert state(rich) in (a, b)
    rich.git("fsck", "--strict")
    ids = [line.split()[0] for line in rich.cp("list").stdout.splitlines()]
    assert len(ids) == len(set(ids))


def test_a_git_child_outliving_us_keeps_the_lock(repo: Repo) -> None:
    """kill -9 of git-checkpoint while git still writes: the next command must wait."""
    script = (
        "import sys\n"
        "from git_checkpoint.storage.lock import locked\n"
        "from git_checkpoint.gitcore.repo import Repo\n"
        "repo = Repo.discover(sys.argv[1])\n"
        "with locked(repo, 5):\n"
        "    repo.run(['-c', 'alias.slow=!sleep 3', 'slow'])\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script, str(repo.path)])
    time.sleep(1.0)
    proc.kill()  # the Python process only; its git child sleeps on
    proc.wait()
    repo.git("config", "checkpoint.lockTimeout", "0.5")
    repo.cp("save", expect=3)
    time.sleep(3)
    repo.cp("save")
