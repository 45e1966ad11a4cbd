"""Review of ce77208 (Ctrl-C, closed streams, text that is not UTF-8) and 05757aa.

Ctrl-C was sent at every git call of a save, restore and undo (to the launcher alone,
and to its whole process group as a terminal does): most moments held (one line, exit
130, nothing left, undo / restore --continue recover). The tests below are what did not.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

from .conftest import Repo
from .test_direct_attacks import LAUNCHER, REAL_GIT, scratch, wrapper_env
from .test_early_attacks import lock_free


def run_in_session(repo: Repo, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """The launcher in a session of its own: `kill -INT 0` in a wrapper git is a Ctrl-C
    at the terminal (every process of the group gets it), without reaching pytest."""
    return subprocess.run(
        [LAUNCHER, *args], cwd=repo.path, env={**os.environ, **env}, capture_output=True,
        text=True, check=False, timeout=60, start_new_session=True,
    )  # fmt: skip


def test_ctrl_c_while_the_checkpoint_is_written_on_a_thread_waits_for_git(
    repo: Repo, tmp_path: Path
) -> None:
    """commands/save.py writes the checkpoint (store) on a thread beside the secrets scan
    (gitio.concurrently). Ctrl-C once the scan is done reaches the main thread in
    thread.join(), which raises past the join: the command exits 130, the lock is
    released, while the thread's `git update-ref` still runs; a second later it creates
    cp_002 that the user was told was interrupted, with no event logged. Exit 130 must
    mean every git child is done (console.entry's promise) and the lock free."""
    repo.write("new.txt", "new\n")
    repo.cp("save", "-m", "one")
    repo.write("new.txt", "changed\n")
    mark = tmp_path / "update-ref-done"
    body = (
        'case " $* " in *" update-ref "*) sleep 1; kill -INT $PPID; sleep 1;'
        ' "$REAL" "$@"; rc=$?; touch "$MARK"; exit $rc;; esac'
    )
    env = wrapper_env(tmp_path, body, REAL=REAL_GIT, MARK=str(mark))
    proc = subprocess.run(
        [LAUNCHER, "save", "-m", "two"], cwd=repo.path, env={**os.environ, **env},
        capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip
    done_at_exit, free_at_exit = mark.exists(), lock_free(repo.path / ".git")
    time.sleep(1.5)
    saved = "cp_002" in repo.git("for-each-ref", "refs/checkpoints/")
    assert (proc.returncode, proc.stderr) == (130, "git checkpoint: interrupted\n")
    assert done_at_exit, "exited 130 while its git update-ref still ran"
    assert free_at_exit
    assert scratch(repo) == []
    assert saved == done_at_exit


def test_ctrl_c_that_reaches_git_is_an_interruption_not_a_git_failure(
    repo: Repo, tmp_path: Path
) -> None:
    """A terminal's Ctrl-C reaches the git children too. When the one that dies of it
    runs on the store thread (commit-tree), the save reports `git commit-tree … failed:
    exit -2`, exit 4 (a git failure, design §7), instead of `interrupted`, exit 130:
    concurrently raises the thread's GitFailed, appended before the main thread's
    KeyboardInterrupt. Seen in 2 of 5 runs here and at the matching moments of a
    restore (update-index, write-tree, ls-files): six tries. (The store thread's commits
    are written in-process now, loose.commit_body: its git child is update-ref.)"""
    repo.write("new.txt", "new\n")
    repo.cp("save", "-m", "one")
    script = 'case " $* " in *" commit-tree "*|*" update-ref "*) kill -INT 0;; esac'
    env = wrapper_env(tmp_path, script)
    seen = set()
    for n in range(6):
        repo.write("new.txt", f"changed {n}\n")
        proc = run_in_session(repo, env, "save", "-m", "two")
        seen.add((proc.returncode, proc.stderr))
    assert seen == {(130, "git checkpoint: interrupted\n")}


def test_an_include_path_that_is_not_utf8_saves_a_readable_checkpoint(repo: Repo) -> None:
    """Paths are bytes: `save --include $'lat\\xe9.txt'` of an ignored file exited 0,
    `checkpoint saved: cp_001`, but the manifest it wrote was not valid YAML: `show`,
    `diff` and `list` then called cp_001 malformed (exit 2). The manifest names its
    includes: such a path is refused in one line (exit 2, nothing saved), and its
    folder, included instead, brings the file along."""
    (repo.path / "inc").mkdir()
    name = os.fsdecode(b"inc/lat\xe9.txt")
    (repo.path / name).write_bytes(b"kept\n")
    (repo.path / ".gitignore").write_bytes(b"inc/\n")
    refused = repo.cp("save", "--include", name, "-m", "inc", expect=2)
    assert refused.stderr.count("\n") == 1 and "not UTF-8" in refused.stderr
    assert repo.git("for-each-ref", "refs/checkpoints") == ""
    repo.cp("save", "--include", "inc", "-m", "inc")
    shown = repo.cp("show", "cp_001", expect=None)
    assert shown.returncode == 0, shown.stderr
    assert "malformed" not in repo.cp("list").stdout
    overlay = repo.git("ls-tree", "-r", "--name-only", "-z", "refs/checkpoints/main/cp_001^3")
    assert name in overlay.split("\0")


def test_diff_piped_keeps_the_escape_bytes_of_a_file(repo: Repo) -> None:
    """console.echo strips escape sequences off a terminal (as click.echo did, so not
    new in ce77208), from every line, the patch's too: `git checkpoint diff > x.patch`
    of a file holding `\\033[31m` (a test fixture, a colored log) loses those bytes,
    and the patch no longer applies. Only our own colors should be stripped."""
    repo.write("new.txt", "new\n")
    repo.cp("save", "-m", "one")
    repo.write("log.txt", "\033[31mred\033[0m\n")
    repo.cp("save", "-m", "two")
    proc = repo.cp("diff", "cp_001", "cp_002")
    assert "+\033[31mred\033[0m" in proc.stdout
