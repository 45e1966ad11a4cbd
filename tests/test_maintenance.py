"""git's auto maintenance after a command that wrote objects (maintenance.py): asked for
only when git would act, by git's own thresholds and settings, never in the output, never
holding the checkpoint lock, and never after a command that failed."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from git_checkpoint.gitcore import maintenance

from .conftest import Repo
from .test_hooks_git import diverged


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
