"""git's auto maintenance after a command that wrote objects (gitcore/maintenance): asked
for only when git would act, by git's own reading of its thresholds and settings, never
in the output, never holding the checkpoint lock, never after a command that failed, and
never in the way of an agent: a hook's save leaves it to the agent's next git command,
and nothing of it is left running."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from git_checkpoint.gitcore import maintenance

from ..conftest import Repo
from ..helpers import blob, diverged


def packs(repo: Repo) -> int:
    return len(list((repo.path / ".git/objects/pack").glob("*.pack")))


def with_packs(repo: Repo, count: int, tag: str = "") -> None:
    """`count` more packs, each of one commit's new objects."""
    before = packs(repo)
    for n in range(count):
        repo.write(f"f{n}.txt", f"file {n} {tag}\n")
        repo.git("add", "-A")  # (git commit's own auto maintenance kept out of it)
        repo.git("-c", "maintenance.auto=false", "commit", "-q", "-m", f"commit {n} {tag}")
        repo.git("repack", "-q", "-d")  # the loose objects since the last repack
    assert packs(repo) == before + count


def fake_objects(objects: Path, loose: int = 0, packed: int = 0, kept: int = 0) -> None:
    (objects / "17").mkdir(parents=True, exist_ok=True)
    (objects / "pack").mkdir(parents=True, exist_ok=True)
    for n in range(loose):
        (objects / "17" / f"{n:038x}").write_bytes(b"")
    (objects / "17" / "tmp_obj_123456").write_bytes(b"")  # not an object: not counted
    for n in range(packed + kept):
        (objects / "pack" / f"pack-{n:040x}.pack").write_bytes(b"")
        if n < kept:
            (objects / "pack" / f"pack-{n:040x}.keep").write_bytes(b"")


@pytest.mark.parametrize(
    ("loose", "packed", "kept", "config", "expected"),
    [
        (0, 0, 0, [], False),
        (27, 50, 0, [], False),  # git's thresholds: more than 6700 / 256 loose, 50 packs
        (28, 0, 0, [], True),
        (0, 51, 0, [], True),
        (0, 50, 5, [], False),  # a kept pack does not count
        (28, 0, 0, [("gc.auto", "0")], False),  # gc.auto=0: never
        (0, 51, 0, [("gc.auto", "0")], False),
        (0, 51, 0, [("gc.autopacklimit", "0")], False),  # 0: packs never count
        (28, 0, 0, [("gc.autopacklimit", "0")], True),
        (2, 0, 0, [("gc.auto", "300")], False),  # threshold (300 + 255) // 256 = 2
        (3, 0, 0, [("gc.auto", "300")], True),
        (1, 0, 0, [("gc.auto", "256")], False),  # threshold 1
        (28, 0, 0, [("gc.auto", "7k")], False),  # 7,168: threshold 28
        (29, 0, 0, [("gc.auto", "7k")], True),
        (0, 2, 0, [("gc.autopacklimit", "1")], True),
        (28, 51, 0, [("maintenance.auto", "false")], False),
        (28, 51, 0, [("maintenance.auto", "0")], False),
        (28, 0, 0, [("maintenance.auto", "false"), ("maintenance.auto", "true")], True),
        (28, 0, 0, [("gc.auto", "nonsense")], True),  # git's default; git says what's wrong
    ],
)
def test_due_follows_gits_need_to_gc(
    tmp_path: Path,
    loose: int,
    packed: int,
    kept: int,
    config: list[tuple[str, str]],
    expected: bool,
) -> None:
    fake_objects(tmp_path, loose, packed, kept)
    assert maintenance.due(tmp_path, config) is expected


def test_no_object_folders_is_not_due(tmp_path: Path) -> None:
    assert maintenance.due(tmp_path / "nowhere", []) is False


def test_save_runs_gits_auto_maintenance_when_due(repo: Repo) -> None:
    with_packs(repo, 3)
    repo.git("config", "gc.autoPackLimit", "2")
    repo.git("config", "gc.autoDetach", "false")  # so its work is done when save returns
    repo.write("app.py", "edited\n")
    out = repo.cp_json("save", "-m", "x", "--json")  # stdout stays the JSON answer
    assert packs(repo) == 1
    # What the checkpoint stored is all still there (gc keeps what refs reach).
    repo.write("app.py", "edited again\n")
    repo.cp("restore", out["checkpoint_id"])
    assert (repo.path / "app.py").read_text() == "edited\n"
    repo.git("fsck", "--no-progress")


@pytest.mark.parametrize(
    "setting", [("maintenance.auto", "false"), ("gc.auto", "0"), ("gc.autoPackLimit", "5")]
)
def test_no_maintenance_when_git_would_not(repo: Repo, setting: tuple[str, str]) -> None:
    with_packs(repo, 3)
    repo.git("config", "gc.autoPackLimit", "2")
    repo.git("config", "gc.autoDetach", "false")
    repo.git("config", *setting)
    repo.write("app.py", "edited\n")
    repo.cp("save", "-m", "x")
    assert packs(repo) == 3


def test_auto_save_and_restore_run_it_too(repo: Repo) -> None:
    repo.git("config", "gc.autoDetach", "false")
    repo.write("app.py", "edited\n")
    first = repo.cp_json("save", "-m", "x", "--json")["checkpoint_id"]
    with_packs(repo, 3)
    repo.git("config", "gc.autoPackLimit", "2")
    repo.write("app.py", "edited twice\n")
    repo.cp("save", "--auto")
    assert packs(repo) == 1
    with_packs(repo, 3, "again")  # 1 + 3: past 2 again
    repo.cp("restore", "--keep-head", first)
    assert packs(repo) == 1


def test_not_after_a_command_that_failed(repo: Repo) -> None:
    with_packs(repo, 3)
    repo.git("config", "gc.autoPackLimit", "2")
    repo.git("config", "gc.autoDetach", "false")
    proc = repo.cp("restore", "cp_999", expect=None)
    assert proc.returncode != 0
    assert packs(repo) == 3


def test_maintenance_never_holds_the_checkpoint_lock(repo: Repo) -> None:
    """A detached gc (or anything a pre-auto-gc hook leaves running) outlives the
    command: it must not have our lock's descriptor, or the next command waits for it."""
    with_packs(repo, 3)
    repo.git("config", "gc.autoPackLimit", "2")
    repo.git("config", "checkpoint.lockTimeout", "1")
    hook = repo.path / ".git/hooks/pre-auto-gc"
    hook.parent.mkdir(exist_ok=True)
    marker = repo.path.parent / "hook-ran"
    # The hook leaves a child with every descriptor it inherited, for 10 s, and says no.
    hook.write_text(f"#!/bin/sh\ntouch '{marker}'\nsleep 10 &\nexit 1\n")
    hook.chmod(0o755)
    repo.write("app.py", "edited\n")
    repo.cp("save", "-m", "first")
    assert marker.exists()  # maintenance ran, and its hook left the sleeper behind
    repo.write("app.py", "edited again\n")
    started = time.monotonic()
    repo.cp("save", "-m", "second")  # lockTimeout 1 s: a held lock would refuse it
    assert time.monotonic() - started < 5
    assert packs(repo) == 3  # the hook said no
    assert json.loads(repo.cp("list", "--json").stdout)


def gc_hook_log(repo: Repo) -> Path:
    """A pre-auto-gc hook that logs who asked (1: a save of our hook) and says no."""
    log = repo.path.parent / "auto-gc.log"
    hook = repo.path / ".git/hooks/pre-auto-gc"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(
        f"#!/bin/sh\necho \"asked:${{GIT_CHECKPOINT_HOOK_ACTIVE:-}}\" >> '{log}'\nexit 1\n"
    )
    hook.chmod(0o755)
    return log


def asked(log: Path) -> list[str]:
    return log.read_text().split() if log.exists() else []


def test_a_save_from_a_git_hook_leaves_maintenance_to_git(repo: Repo) -> None:
    """Inside pre-rebase git holds its locks and runs auto maintenance itself after."""
    diverged(repo)
    with_packs(repo, 3)
    repo.git("config", "gc.autoPackLimit", "2")
    log = gc_hook_log(repo)
    repo.write("scratch.txt", "untracked work\n")
    repo.cp("hooks", "install", "--git")
    repo.git("rebase", "-q", "main")
    saved = repo.git("for-each-ref", "--format=%(subject)", "refs/checkpoints/")
    assert "before rebase onto main" in saved
    assert "asked:1" not in asked(log)


def test_a_save_from_an_agent_hook_leaves_it_to_the_next_command(repo: Repo) -> None:
    """The tool call never waits for git's part, nor meets its ref locks after."""
    with_packs(repo, 3)
    repo.git("config", "gc.autoPackLimit", "2")
    log = gc_hook_log(repo)
    repo.write("app.py", "edited\n")
    payload = {
        "session_id": "s",
        "cwd": str(repo.path),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "git reset --hard"},
    }
    proc = subprocess.run(
        ["git-checkpoint-hook", "claude-code", "PreToolUse"],
        input=json.dumps(payload),
        cwd=repo.path,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 0 and "checkpoint saved" in proc.stderr, proc.stderr
    assert asked(log) == []
    repo.write("app.py", "edited again\n")
    repo.cp("save", "-m", "the next command")
    assert asked(log) == ["asked:"]


def test_run_maintains_once_after_its_loop(repo: Repo) -> None:
    repo.write(".checkpoint.yaml", "verifiers:\n  - name: v\n    command: 'true'\n")
    repo.git("add", "-A")
    repo.git("-c", "maintenance.auto=false", "commit", "-q", "-m", "verifier")
    with_packs(repo, 3)
    repo.git("config", "gc.autoPackLimit", "2")
    repo.git("config", "gc.autoDetach", "false")
    log = gc_hook_log(repo)
    repo.cp("run", "--", "sh", "-c", "echo attempt > attempt.txt")
    assert asked(log) == ["asked:"]  # once, by the command, not by its hooks


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("00", False),  # git_parse_maybe_bool falls back to an integer: zero is false
        ("0x0", False),
        ("0k", False),
        ("-0", False),
        ("maybe", False),  # git dies on it (`bad boolean`) before it would maintain
        ("99999999999", False),  # past an int: refused as well
        ("", False),
        ("2", True),
        ("ON", True),
        ("Yes", True),
        ("true", True),
    ],
)
def test_maintenance_auto_is_read_as_git_reads_a_boolean(
    tmp_path: Path, value: str, expected: bool
) -> None:
    fake_objects(tmp_path, loose=28)
    assert maintenance.due(tmp_path, [("maintenance.auto", value)]) is expected


@pytest.mark.parametrize(
    ("value", "loose", "expected"),
    [
        ("0x10", 2, True),  # 16: threshold 1 (strtoimax, base 0)
        ("010", 2, True),  # octal 8: threshold 1
        ("-0x1", 99, False),  # negative: never
        ("08", 27, False),  # git refuses it: git's default, threshold 27
        ("08", 28, True),
        (" 300", 3, True),  # strtoimax skips leading blanks
    ],
)
def test_gc_auto_is_read_as_git_reads_a_number(
    tmp_path: Path, value: str, loose: int, expected: bool
) -> None:
    fake_objects(tmp_path, loose=loose)
    assert maintenance.due(tmp_path, [("gc.auto", value)]) is expected


def pre_auto_gc(repo: Repo, body: str) -> Path:
    """A pre-auto-gc hook running `body`, logging each time it is asked."""
    log = repo.path.parent / "auto-gc.log"
    hook = repo.path / ".git/hooks/pre-auto-gc"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(f"#!/bin/sh\necho asked >> '{log}'\n{body}\n")
    hook.chmod(0o755)
    return log


def test_maintenance_auto_zero_spelled_00_turns_it_off(repo: Repo) -> None:
    """`git maintenance run --auto` does not read maintenance.auto itself (git's commit
    checks it before asking): 00 is read as git reads it, false, and no gc runs against
    the user's setting."""
    with_packs(repo, 3)
    repo.git("config", "gc.autoPackLimit", "2")
    repo.git("config", "maintenance.auto", "00")
    log = pre_auto_gc(repo, "exit 1")
    repo.write("app.py", "edited\n")
    repo.cp("save", "-m", "x")
    assert not log.exists()


def agent_hook(repo: Repo, timeout: float = 60) -> tuple[subprocess.CompletedProcess[str], float]:
    payload = {
        "session_id": "s",
        "cwd": str(repo.path),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "git reset --hard"},
    }
    started = time.monotonic()
    proc = subprocess.run(
        ["git-checkpoint-hook", "claude-code", "PreToolUse"],
        input=json.dumps(payload),
        cwd=repo.path,
        capture_output=True,
        text=True,
        check=False,
        timeout=timeout,
    )
    return proc, time.monotonic() - started


def test_an_agent_hook_never_waits_for_a_slow_pre_auto_gc_hook(repo: Repo) -> None:
    with_packs(repo, 3)
    repo.git("config", "gc.autoPackLimit", "2")
    log = pre_auto_gc(repo, "sleep 15\nexit 1")
    repo.write("app.py", "edited\n")
    proc, took = agent_hook(repo)
    assert proc.returncode == 0 and "checkpoint saved" in proc.stderr, proc.stderr
    assert proc.stdout == ""
    assert took < 8, f"the hook took {took:.1f} s"
    assert not log.exists()  # the next command of ours, or git's own commit, asks


def test_a_ctrl_c_during_maintenance_still_reports_the_save(repo: Repo) -> None:
    with_packs(repo, 3)
    repo.git("config", "gc.autoPackLimit", "2")
    started = repo.path.parent / "hook-started"
    pre_auto_gc(repo, f"touch '{started}'\nsleep 20\nexit 1")
    repo.write("app.py", "edited\n")
    proc = subprocess.Popen(
        ["git", "checkpoint", "save", "-m", "x", "--json"],
        cwd=repo.path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own group: the Ctrl-C goes to all of it, as a tty's
    )
    deadline = time.monotonic() + 30
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert started.exists()
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    saved = repo.git("for-each-ref", "--format=%(refname)", "refs/checkpoints/")
    assert "cp_001" in saved  # the save went through before maintenance was asked
    answer = json.loads(out)
    assert answer.get("checkpoint_id") == "cp_001", (answer, err)


def seventeens(tag: str) -> dict[str, bytes]:
    """Three files whose blobs land in objects/17 (the folder git counts for gc.auto)."""
    found: dict[str, bytes] = {}
    k = 0
    while len(found) < 3:
        body = f"{tag} {k}\n".encode()
        if hashlib.sha1(b"blob %d\0" % len(body) + body).hexdigest().startswith("17"):
            found[f"s{len(found)}.txt"] = body
        k += 1
    return found


AGENT = """
import hashlib, os, subprocess, sys, time
tag = "attempt " + os.environ["CHECKPOINT_ATTEMPT"]
k = n = 0
while n < 3:
    body = f"{tag} {k}\\n".encode()
    if hashlib.sha1(b"blob %d\\0" % len(body) + body).hexdigest().startswith("17"):
        open(f"s{n}.txt", "wb").write(body)
        n += 1
    k += 1
time.sleep(3)  # the gc the last save or restore started has finished by now
stats = subprocess.run(["ps", "--ppid", str(os.getppid()), "-o", "stat="],
                       capture_output=True, text=True).stdout.split()
with open(sys.argv[1], "a") as log:
    log.write(f"{sum(s.startswith('Z') for s in stats)}\\n")
"""


def test_run_leaves_no_zombie_gc_behind(repo: Repo, tmp_path: Path) -> None:
    repo.git("config", "gc.auto", "256")  # more than 1 loose object in objects/17: due
    repo.write(
        ".checkpoint.yaml",
        'verifiers:\n  - name: v\n    command: "exit 1"\n    required: true\n    timeout: 60\n',
    )
    repo.git("add", "-A")
    repo.git("-c", "maintenance.auto=false", "commit", "-q", "-m", "verifier")
    for name, body in seventeens("before").items():
        repo.write(name, body)
    agent = tmp_path / "agent.py"
    agent.write_text(AGENT)
    log = tmp_path / "zombies.log"
    repo.cp("run", "--attempts", "3", "--", sys.executable, str(agent), str(log), expect=1)
    zombies = [int(n) for n in log.read_text().split()]
    assert len(zombies) == 3
    assert zombies == [0, 0, 0]


# --- auto maintenance after an agent hook's save --------------------------------------

SLOW_PRUNE = r"""#!/bin/sh
# a slow pack-refs: the prune of the packed loose refs/heads/main holds its lock 3 s
[ "$1" = prepared ] || exit 0
if grep -q " 0\{40\} refs/heads/main$"; then sleep 3; fi
exit 0
"""


def _loose_17(repo: Repo, count: int) -> None:
    """`count` loose objects in objects/17 (git's gc --auto sample folder)."""
    import hashlib

    n = 0
    while count:
        data = f"seventeen {n}\n".encode()
        n += 1
        if hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest().startswith("17"):
            blob(repo, data)
            count -= 1


def _agent_hook(repo: Repo) -> subprocess.CompletedProcess[str]:
    import json

    payload = {
        "session_id": "s",
        "cwd": str(repo.path),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "git reset --hard"},
    }
    return subprocess.run(
        ["git-checkpoint-hook", "claude-code", "PreToolUse"], input=json.dumps(payload),
        cwd=repo.path, capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip


def _settle(repo: Repo) -> None:
    import time

    git_dir = repo.path / ".git"
    for _ in range(100):
        try:
            locks = list(git_dir.rglob("*.lock"))
        except FileNotFoundError:  # a folder a gc pruned while it was walked: not settled
            locks = [git_dir]
        if not locks and not (git_dir / "gc.pid").exists():
            return
        time.sleep(0.1)


def test_the_agents_next_git_command_does_not_meet_maintenances_ref_locks(repo: Repo) -> None:
    repo.git("config", "gc.auto", "256")
    repo.git("config", "gc.pruneExpire", "now")
    hook = repo.path / ".git" / "hooks" / "reference-transaction"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(SLOW_PRUNE)
    hook.chmod(0o755)
    _loose_17(repo, 3)
    repo.write("a.txt", "work\n")
    try:
        proc = _agent_hook(repo)
        assert proc.returncode == 0 and "checkpoint saved" in proc.stderr, proc.stderr
        import time

        time.sleep(0.5)  # the agent's command starts (pack-refs is under way)
        repo.git("add", "-A")
        repo.git("-c", "maintenance.auto=false", "commit", "-q", "-m", "the agent's commit")
    finally:
        _settle(repo)


def test_no_leftover_processes_after_the_hooks_maintenance(repo: Repo) -> None:
    """Hook, then a CLI save, five times, with maintenance due each time: once settled,
    no git process of this repository is left, none a zombie, and the repository is sound."""
    repo.git("config", "gc.auto", "256")
    repo.git("config", "gc.pruneExpire", "now")
    for n in range(5):
        _settle(repo)  # (loose objects written while a gc prunes may find no folder)
        _loose_17(repo, 3)
        repo.write(f"n{n}.txt", f"{n}\n")
        proc = _agent_hook(repo)
        assert proc.returncode == 0 and "checkpoint saved" in proc.stderr, proc.stderr
        repo.cp("save", "-m", f"cli {n}")
    _settle(repo)
    ps = subprocess.run(["ps", "-eo", "stat=,ppid=,args="], capture_output=True, text=True).stdout
    zombies = [line.split() for line in ps.splitlines() if line.startswith("Z") and "git" in line]
    # Ours would be this test's children (orphans belong to init, which reaps them
    # lazily on this VM; other tests' processes run beside this one under xdist).
    assert [z for z in zombies if z[1] == str(os.getpid())] == []
    assert repo.git("fsck", "--strict", "--no-dangling") == ""
