"""Ctrl-C (SIGINT, to git-checkpoint alone or to its whole process group as a terminal
sends it) at any moment of a save, a restore, an undo, a push or a run: one line
`git checkpoint: interrupted` (with the way on, for a half-done restore), exit 130,
every git child done and the lock free by the exit, no scratch folder left, and the
next command works. A second Ctrl-C, or one that lands in a finalizer, is no
different."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ..conftest import BIN, Repo
from ..launcher import (
    LAUNCHER,
    REAL_GIT,
    launch,
    launch_via_shell,
    lock_free,
    scratch,
    wrapper_env,
)

INTERRUPTED = "git checkpoint: interrupted\n"


def start(repo: Repo, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [LAUNCHER, *args], cwd=repo.path, env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
    )  # fmt: skip


def wait_for(path: Path, seconds: float = 20) -> int:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if path.exists() and path.read_text().strip():
            return int(path.read_text().split()[0])
        time.sleep(0.05)
    raise AssertionError(f"{path} never written")


def alive(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[1].split()[0] != "Z"
    except OSError:
        return False


def run_in_session(repo: Repo, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """The launcher in a session of its own: `kill -INT 0` in a wrapper git is a Ctrl-C
    at the terminal (every process of the group gets it), without reaching pytest."""
    return subprocess.run(
        [LAUNCHER, *args], cwd=repo.path, env={**os.environ, **env}, capture_output=True,
        text=True, check=False, timeout=60, start_new_session=True,
    )  # fmt: skip


def test_ctrl_c_to_us_alone_while_git_waits_on_a_remote_exits(repo: Repo, tmp_path: Path) -> None:
    """`push` runs `git ls-remote` over ssh; the remote does not answer. SIGINT sent to
    git-checkpoint alone (`kill -INT`, an IDE's or agent harness's stop button), three
    times: it is out within seconds, exit 130, one line, rather than waiting for git to
    end by itself (here 30 s, two ssh tries of 15 s; with a black-holed host never)."""
    repo.cp("save", "-m", "one")
    pids = tmp_path / "ssh.pids"
    ssh = tmp_path / "slow-ssh"
    ssh.write_text(f'#!/bin/sh\necho $$ >> "{pids}"\nexec sleep 15\n')
    ssh.chmod(0o755)
    repo.git("remote", "add", "origin", "ssh://example.invalid/x.git")
    repo.git("config", "core.sshCommand", str(ssh))
    proc = start(repo, "push", "origin")
    try:
        wait_for(pids)
        for _ in range(3):
            os.kill(proc.pid, signal.SIGINT)
            time.sleep(0.3)
        try:
            _, err = proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            err = "still running 5 s after three SIGINTs"
    finally:
        for pid in pids.read_text().split() if pids.exists() else []:
            if alive(int(pid)):
                os.kill(int(pid), signal.SIGKILL)
        proc.communicate(timeout=60)
    assert (proc.returncode, err) == (130, INTERRUPTED)


def test_a_second_ctrl_c_at_startup_is_still_one_line(repo: Repo, tmp_path: Path) -> None:
    """Ctrl-C twice, 0.2 s apart, while the launcher imports and its early scan's git
    still runs. The second lands while the early scan (fast/prescan) waits for its git
    on the way out: save, restore and undo still exit 130 with one line, leave no
    scratch folder (.git/checkpoint-*/, the index copies) and free the lock; no
    traceback from the launcher or the console's exit, no death by SIGINT."""
    repo.write("new.txt", "new\n")
    repo.cp("save", "-m", "one")
    repo.write("new.txt", "changed\n")
    body = (
        'case " $* " in *" status "*) kill -INT $PPID; sleep 0.2; kill -INT $PPID; sleep 0.3;; esac'
    )
    env = wrapper_env(tmp_path, body)
    seen = []
    for args in (["save", "-m", "two"], ["restore", "cp_001"], ["undo"]):
        proc = start(repo, *args, env=env)
        _, err = proc.communicate(timeout=60)
        seen.append((args[0], proc.returncode, err.splitlines()[-1:], err.count("\n")))
    assert seen == [(a, 130, [INTERRUPTED.strip()], 1) for a in ("save", "restore", "undo")]
    assert scratch(repo) == []
    assert lock_free(repo.path / ".git")


def test_a_second_ctrl_c_while_restore_reads_objects_is_one_line(
    repo: Repo, tmp_path: Path
) -> None:
    """A second Ctrl-C 0.1 s after the first, while restore's `cat-file --batch` child
    (gitcore/catfile) still runs: exit 130 and `interrupted`, nothing more on stderr (no
    `Exception ignored in` a finalizer waiting for cat-file, where a KeyboardInterrupt
    could only be printed)."""
    for i in range(20):
        repo.write(f"d/f{i}.txt", f"one {i}\n")
    repo.cp("save", "-m", "one")
    for i in range(20):
        repo.write(f"d/f{i}.txt", f"two {i}\n")
    marker = tmp_path / "once"
    body = (
        f'case " $* " in *" cat-file --batch "*) if mkdir "{marker}" 2>/dev/null; then'
        " kill -INT $PPID; sleep 0.1; kill -INT $PPID; sleep 0.3; fi;; esac"
    )
    proc = start(repo, "restore", "cp_001", env=wrapper_env(tmp_path, body))
    _, err = proc.communicate(timeout=60)
    assert marker.exists()
    assert (proc.returncode, err) == (130, INTERRUPTED)


def test_a_second_ctrl_c_during_run_still_stops_the_agent(repo: Repo, tmp_path: Path) -> None:
    """`run -- AGENT` where the agent ignores SIGINT (asks "really quit?", say): one
    Ctrl-C stops it 5 s later (runloop/loop kills it), and a second Ctrl-C within those
    5 s must not skip the kill: exit 130, and the agent is gone, not left running
    orphaned and editing the workspace (the README: Ctrl-C stops the agent)."""
    repo.write(".checkpoint.yaml", "verifiers:\n  - name: ok\n    command: 'true'\n")
    repo.commit_all("config")
    pidfile = tmp_path / "agent.pid"
    agent = f"trap '' INT; echo $$ > '{pidfile}'; exec sleep 30"
    proc = start(repo, "run", "--", "sh", "-c", agent)
    pid = wait_for(pidfile)
    try:
        os.kill(proc.pid, signal.SIGINT)
        time.sleep(0.5)
        os.kill(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=30)
        left = alive(pid)
    finally:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)
    assert proc.returncode == 130, err
    assert not left, "the agent still runs after git checkpoint run exited"


# A Ctrl-C that lands while a finalizer runs (Popen.__del__, wherever the last reference
# to a finished child goes, or a weakref callback): Python cannot raise out of a
# finalizer, so the handler delivers it again just after it, rather than letting it be
# printed as `Exception ignored in ... KeyboardInterrupt` and lost.
SCRIPT = """

import os, signal
from git_checkpoint.core.interrupts import interrupt_once
interrupt_once()
class Child:
    def __del__(self):
        os.kill(os.getpid(), signal.SIGINT)  # the handler runs inside the finalizer
        for _ in range(1000):
            pass
try:
    Child()
    for _ in range(10 ** 7):
        pass
    print("carried on")
except KeyboardInterrupt:
    print("interrupted")
"""


WEAKREF = """
import os, signal, weakref
from git_checkpoint.core.interrupts import interrupt_once
interrupt_once()
class Thing:
    pass
def callback():
    os.kill(os.getpid(), signal.SIGINT)
    for _ in range(1000):
        pass
try:
    thing = Thing()
    weakref.finalize(thing, callback)
    del thing
    for _ in range(10 ** 7):
        pass
    print("carried on")
except KeyboardInterrupt:
    print("interrupted")
"""


def python_script(
    script: str, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """`python -c script args…` with this checkout's package, in a clean environment."""
    root = Path(__file__).resolve().parents[2]
    return subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", **(env or {}), "PYTHONPATH": str(root)},
    )


@pytest.mark.parametrize("script", [SCRIPT, WEAKREF], ids=["__del__", "weakref callback"])
def test_a_ctrl_c_inside_a_finalizer_still_interrupts(script: str) -> None:
    for _ in range(3):
        proc = python_script(script)
        assert proc.stdout == "interrupted\n", proc.stdout + proc.stderr
        assert "Exception ignored" not in proc.stderr and "Traceback" not in proc.stderr


def test_a_ctrl_c_in_the_middle_of_a_restore_says_how_to_go_on(repo: Repo, tmp_path: Path) -> None:
    """A Ctrl-C after the first file was replaced says at once, in its one line, that the
    restore is half done and the way on (`--continue`, `undo`), not only `interrupted`."""
    repo.write("src/app.py", "print('saved')\n")
    repo.git("add", "src/app.py")  # staged: the written file's stat data is refreshed
    repo.cp("save", "-m", "one")
    repo.write("src/app.py", "print('attempt')\n")
    script = 'case " $* " in *" --refresh "*) kill -INT 0;; esac'  # after the writes
    proc = run_in_session(repo, wrapper_env(tmp_path, script), "restore", "cp_001")
    assert proc.returncode == 130
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    assert "interrupted, the restore of main/cp_001 half done" in proc.stderr
    assert "restore --continue" in proc.stderr and "undo" in proc.stderr
    repo.cp("restore", "--continue")
    assert (repo.path / "src" / "app.py").read_text() == "print('saved')\n"


def test_ctrl_c_while_the_checkpoint_is_written_on_a_thread_waits_for_git(
    repo: Repo, tmp_path: Path
) -> None:
    """A save writes the checkpoint on a thread beside the secrets scan. Ctrl-C once the
    scan is done reaches the main thread while it waits for that thread: exit 130 must
    mean every git child is done (the console's promise) and the lock free, so no
    `git update-ref` still runs to create, a second later, a cp_002 the user was told
    was interrupted (with no event logged)."""
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
    runs on the thread that stores the checkpoint (its git child is update-ref; the
    commits are written in-process), the save still says `interrupted`, exit 130, not
    `git update-ref … failed: exit -2`, exit 4 (a git failure, design §7): the
    interruption wins over the failure it caused. Six tries, as the moment varies."""
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


@pytest.mark.parametrize("command", ["save", "restore"])
def test_ctrl_c_at_startup_is_one_line_and_leaves_no_scratch_folder(
    repo: Repo, tmp_path: Path, command: str
) -> None:
    """SIGINT while the launcher starts the early scan (here: sent by the scan's own
    status as it starts): no Python traceback, no death by SIGINT (-2) but exit 130 and
    one line, and no <git dir>/checkpoint-*/ with the index copies left behind (doctor
    would call that `nothing left over` for an hour)."""
    repo.write("new.txt", "new\n")
    repo.cp("save", "-m", "one")
    repo.write("new.txt", "changed\n")
    env = wrapper_env(tmp_path, 'case " $* " in *" status "*) kill -INT $PPID;; esac')
    proc = launch_via_shell(repo, command, env=env)
    assert "Traceback" not in proc.stderr, proc.stderr
    assert (proc.returncode, proc.stderr) == (130, "git checkpoint: interrupted\n")
    assert scratch(repo) == []


def test_ctrl_c_while_the_scan_is_read_waits_for_its_git_children(
    repo: Repo, tmp_path: Path
) -> None:
    """SIGINT while the save waits for ls-files -v, status still running: the command
    exits 130 only once its `git status` is done too, not leaving it running as an
    orphan on an index copy that is gone and past the released lock (the console
    promises every child is done by the exit)."""
    repo.write("new.txt", "new\n")
    mark = tmp_path / "status-done"
    body = (
        'case " $* " in *" ls-files "*) sleep 1.5; kill -INT $PPID;; esac\n'
        'case " $* " in *" status "*) sleep 3; "$REAL" "$@"; rc=$?; touch "$MARK"; exit $rc;;'
        " esac"
    )
    proc = launch_via_shell(
        repo, "save", env=wrapper_env(tmp_path, body, REAL=REAL_GIT, MARK=str(mark))
    )
    assert (proc.returncode, proc.stderr) == (130, "git checkpoint: interrupted\n")
    assert mark.exists(), "git-checkpoint exited while its git status still ran"


@pytest.mark.parametrize("server", ["served", "alone"])
def test_a_ctrl_c_at_any_moment_of_a_save_is_one_line(
    repo: Repo, tmp_path: Path, server: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SIGINT at 25 moments of a save, from its first git call (the early scan's
    status: Python's own start, before any line of ours, is not ours to say) to its
    end, with the command server and without: each save ends saved (exit 0) or
    interrupted (`git checkpoint: interrupted`, exit 130); never with a traceback,
    whatever it was running (an import, threads starting, the early scan's clean-up
    at the exit). After each, the lock is free and no scratch folder is left; after
    them all, a save works."""
    mark = tmp_path / "began"
    env = wrapper_env(tmp_path, 'case " $* " in *" status "*) : >> "$MARK";; esac', MARK=str(mark))
    if server == "alone":
        env["GIT_CHECKPOINT_SERVER"] = "off"
    else:
        monkeypatch.delenv("GIT_CHECKPOINT_SERVER")
    launch(repo, "status", env=env)  # (the server started, when it is on)
    seen = set()
    for step in range(25):
        repo.write("src/app.py", f"print({step})\n")
        repo.write(f"new-{step}.txt", "new\n")
        mark.unlink(missing_ok=True)
        proc = start(repo, "save", "-m", f"step {step}", env=env)
        deadline = time.monotonic() + 30
        while not mark.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.001)
        time.sleep(step * 0.01)
        os.kill(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert (proc.returncode, err) in ((0, ""), (130, INTERRUPTED)), (proc.returncode, err)
        assert lock_free(repo.path / ".git"), f"the lock is held after step {step}"
        assert scratch(repo) == [], f"a scratch folder is left after step {step}"
        seen.add(proc.returncode)
    assert 130 in seen
    launch(repo, "save", "-m", "after", env=env)


def test_a_ctrl_c_at_any_moment_of_a_hooks_save_leaves_nothing_running_or_behind(
    repo: Repo, tmp_path: Path
) -> None:
    """SIGINT at 20 moments of an agent hook's save (a risky command about to run),
    from its first git call on: the hook still exits 0, with at most its one line, and
    by then no git of its own runs, the lock is free and no scratch folder is left."""
    mark = tmp_path / "began"
    env = {
        **os.environ,
        **wrapper_env(tmp_path, ': >> "$MARK"', MARK=str(mark)),
        "GIT_CHECKPOINT_SERVER": "off",
    }
    repo.cp("save", "-m", "base")
    payload = json.dumps(
        {"tool_name": "Bash", "tool_input": {"command": "rm -rf build"}, "cwd": str(repo.path)}
    )
    for step in range(20):
        for n in range(40):
            repo.write(f"src/file-{n}.py", f"print({step})\n")
        mark.unlink(missing_ok=True)
        proc = subprocess.Popen(
            [os.path.join(BIN, "git-checkpoint-hook"), "claude-code", "PreToolUse"],
            cwd=repo.path, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert proc.stdin is not None
        proc.stdin.write(payload)
        proc.stdin.close()
        deadline = time.monotonic() + 30
        while not mark.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.001)
        time.sleep(step * 0.008)
        os.kill(proc.pid, signal.SIGINT)
        assert proc.stdout is not None and proc.stderr is not None
        err = proc.stderr.read()
        proc.stdout.read()
        assert proc.wait(timeout=60) == 0, err
        assert err == "" or (
            err.count("\n") == 1
            and err.startswith(("git-checkpoint: interrupted;", "git-checkpoint: checkpoint saved"))
        ), err
        assert lock_free(repo.path / ".git"), f"the lock is held after step {step}"
        assert scratch(repo) == [], f"a scratch folder is left after step {step}"


IMPORTING = """
import os, signal, sys, time
sys.path.insert(0, sys.argv[1])
from git_checkpoint.core.interrupts import interrupt_once
interrupt_once()
try:
    import slow_module
    time.sleep(5)
    print("never interrupted")
except KeyboardInterrupt:
    whole = getattr(sys.modules.get("slow_module"), "DONE", False)
    print("interrupted after the import" if whole else "interrupted inside the import")
"""


def test_a_ctrl_c_during_an_import_is_raised_once_it_is_done(tmp_path: Path) -> None:
    """A Ctrl-C raised inside the import system can leave its lock held, and the next
    import on another thread then waits for ever (a save hung so). It comes just after
    the import instead: the module is whole, and the KeyboardInterrupt follows."""
    (tmp_path / "slow_module.py").write_text(
        "import os, signal, time\n"
        "os.kill(os.getpid(), signal.SIGINT)\n"
        "time.sleep(0.2)\n"
        "DONE = True\n"
    )
    proc = python_script(IMPORTING, str(tmp_path))
    assert (proc.stdout, proc.stderr) == ("interrupted after the import\n", "")


AT_THE_EXIT = """
import os, signal, time
from git_checkpoint.core.interrupts import interrupt_once
from git_checkpoint.entry import console
interrupt_once()
def cleanup():
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(1)
console.entry(lambda: print("done"), cleanup)
"""


def test_a_ctrl_c_as_the_command_ends_is_one_line(tmp_path: Path) -> None:
    """A Ctrl-C that comes after the command, while the launcher cleans up (the early
    scan's children, its scratch folder): exit 130 and one line, as for any other
    moment, not a traceback from the exit."""
    proc = python_script(AT_THE_EXIT)
    assert (proc.returncode, proc.stdout, proc.stderr) == (130, "done\n", INTERRUPTED)


DISCARD = """
import os, signal, threading
from git_checkpoint.core.interrupts import interrupt_once
from git_checkpoint.fast.prescan import start
interrupt_once()
prescan = start()
assert prescan.scan is not None and prescan.lock is not None, "no early scan started"
threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
try:
    prescan.discard()
    print("not interrupted")
except KeyboardInterrupt:
    print("interrupted")
"""


def test_a_ctrl_c_while_the_early_scan_is_dropped_still_frees_the_lock_and_folder(
    repo: Repo, tmp_path: Path
) -> None:
    """The early scan nobody took is dropped at the exit: its git children waited for,
    its scratch folder removed, the lock released. A Ctrl-C in the middle of that (here
    while a slow `git status` is waited for) still gets all of it done, then is
    raised."""
    env = wrapper_env(tmp_path, 'case " $* " in *" status "*) sleep 1;; esac')
    proc = python_script(DISCARD, cwd=repo.path, env={**os.environ, **env})
    assert (proc.stdout, proc.stderr) == ("interrupted\n", "")
    assert lock_free(repo.path / ".git")
    assert scratch(repo) == []
