"""Every saver goes through save/session.py: `save`, `save --auto`, the guard, an
agent's hook (a risky Bash call, an edit), git's pre-rebase hook, `verify` without a
checkpoint and the run loop's rollback point. Each policy must hold for each of them,
on the first save (a full capture) and on one after a save (the hook's quick check and
quickbuild, the guard's quick_unchanged): secret-looking names left out, the overlay
limits, retention.auto, the operation log, the task record's hypothesis and next move in
the manifest, and "unchanged since" (no second checkpoint of the same state).
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable

import pytest
import yaml

from ..conftest import Repo

BASE_CONFIG = "verifiers:\n  - {name: ok, command: 'true'}\n"


def refs(repo: Repo, task: str | None = None) -> list[str]:
    where = f"refs/checkpoints/{task}/" if task else "refs/checkpoints/"
    return repo.git("for-each-ref", "--format=%(refname)", where).split()


def stored_paths(repo: Repo, ref: str) -> set[str]:
    paths = set(repo.git("ls-tree", "-r", "--name-only", ref).split("\n"))
    third = repo.git("rev-parse", "-q", "--verify", f"{ref}^3", check=False).strip()
    if third:
        paths |= set(repo.git("ls-tree", "-r", "--name-only", third).split("\n"))
    paths |= set(repo.git("ls-tree", "-r", "--name-only", f"{ref}^2").split("\n"))
    return {p for p in paths if p}


def manifest(repo: Repo, ref: str) -> dict:
    body = repo.git("log", "-1", "--format=%B", ref).split("\n\n", 1)[1]
    return yaml.safe_load(body)


def hook(repo: Repo, *args: str, payload: dict | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git-checkpoint-hook", *args],
        input=json.dumps(payload) if payload is not None else "",
        capture_output=True,
        text=True,
        cwd=repo.path,
        check=False,
        timeout=120,
    )


def by_save(repo: Repo) -> subprocess.CompletedProcess[str]:
    return repo.cp("save", "-m", "by save", expect=None)


def by_save_auto(repo: Repo) -> subprocess.CompletedProcess[str]:
    return repo.cp("save", "--auto", expect=None)


def by_guard(repo: Repo) -> subprocess.CompletedProcess[str]:
    return repo.cp("guard", "--", "rm", "-rf", "no-such-folder", expect=None)


def by_agent_bash(repo: Repo) -> subprocess.CompletedProcess[str]:
    payload = {
        "tool_name": "Bash",
        "tool_input": {"command": "rm -rf no-such-folder"},
        "cwd": str(repo.path),
    }
    return hook(repo, "claude-code", "PreToolUse", payload=payload)


def by_agent_edit(repo: Repo) -> subprocess.CompletedProcess[str]:
    payload = {
        "tool_name": "Edit",
        "tool_input": {"file_path": str(repo.path / "src/app.py")},
        "cwd": str(repo.path),
    }
    return hook(repo, "claude-code", "PreToolUse", payload=payload)


def by_prompt(repo: Repo) -> subprocess.CompletedProcess[str]:
    payload = {"prompt": "next step", "cwd": str(repo.path)}
    return hook(repo, "claude-code", "UserPromptSubmit", payload=payload)


def by_git_hook(repo: Repo) -> subprocess.CompletedProcess[str]:
    return hook(repo, "git", "pre-rebase", "main")


def by_verify(repo: Repo) -> subprocess.CompletedProcess[str]:
    return repo.cp("verify", expect=None)


def by_run(repo: Repo) -> subprocess.CompletedProcess[str]:
    return repo.cp("run", "--", "true", expect=None)


SAVERS: dict[str, Callable[[Repo], subprocess.CompletedProcess[str]]] = {
    "save": by_save,
    "save --auto": by_save_auto,
    "guard": by_guard,
    "agent bash": by_agent_bash,
    "agent edit": by_agent_edit,
    "prompt": by_prompt,
    "git pre-rebase": by_git_hook,
    "verify": by_verify,
    "run": by_run,
}


def setup(repo: Repo, config: str, prior: bool) -> None:
    repo.write(".checkpoint.yaml", BASE_CONFIG + config)
    repo.commit_all("config")
    if prior:
        repo.write("src/app.py", "print('prior')\n")
        repo.cp("save", "-m", "prior")
        time.sleep(1.1)  # the kept state is trusted: the quick check vouches from here on


@pytest.mark.parametrize("prior", [False, True], ids=["first", "after-a-save"])
@pytest.mark.parametrize("saver", list(SAVERS))
def test_secret_looking_names_are_left_out(repo: Repo, saver: str, prior: bool) -> None:
    setup(repo, "", prior)
    before = set(refs(repo))
    repo.write(".env", "API_TOKEN=hunter2\n")
    repo.write("keys/id_rsa", "-----not really-----\n")
    repo.write("work.txt", "new work\n")
    proc = SAVERS[saver](repo)
    new = [r for r in refs(repo) if r not in before]
    assert new, (proc.returncode, proc.stdout, proc.stderr)
    for ref in new:
        stored = stored_paths(repo, ref)
        assert ".env" not in stored and "keys/id_rsa" not in stored, (ref, stored)
    assert any("work.txt" in stored_paths(repo, r) for r in new)


@pytest.mark.parametrize("prior", [False, True], ids=["first", "after-a-save"])
@pytest.mark.parametrize("saver", list(SAVERS))
def test_the_overlay_limit_leaves_out_what_is_over_and_saves_the_rest(
    repo: Repo, saver: str, prior: bool
) -> None:
    setup(repo, "limits: {overlay_max_files: 3}\n", prior)
    before = set(refs(repo))
    for n in range(6):
        repo.write(f"many/file{n}.txt", f"{n}\n")
    repo.write("src/app.py", "print('tracked work')\n")
    proc = SAVERS[saver](repo)
    new = [r for r in refs(repo) if r not in before]
    assert new, (proc.returncode, proc.stdout, proc.stderr)
    for ref in new:
        stored = stored_paths(repo, ref)
        assert not any(p.startswith("many/") for p in stored), (ref, proc.stderr)
    assert "left out: many/ (6 files" in proc.stdout + proc.stderr
    assert proc.returncode == 0, (proc.returncode, proc.stderr)


@pytest.mark.parametrize("prior", [False, True], ids=["first", "after-a-save"])
@pytest.mark.parametrize("saver", list(SAVERS))
def test_the_overlay_limit_refused_stores_none_of_the_overlay(
    repo: Repo, saver: str, prior: bool
) -> None:
    setup(repo, "limits: {overlay_max_files: 3, on_exceed: refuse}\n", prior)
    before = set(refs(repo))
    for n in range(6):
        repo.write(f"many/file{n}.txt", f"{n}\n")
    proc = SAVERS[saver](repo)
    new = [r for r in refs(repo) if r not in before]
    for ref in new:
        stored = stored_paths(repo, ref)
        assert not any(p.startswith("many/") for p in stored), (ref, proc.stderr)
    if saver.startswith(("agent", "git", "prompt")):
        assert proc.returncode == 0
        lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and "no checkpoint saved" in lines[0], proc.stderr
    elif saver == "guard":
        assert "no checkpoint saved" in proc.stderr, proc.stderr
    else:
        assert proc.returncode == 3, (proc.returncode, proc.stderr)


@pytest.mark.parametrize("saver", list(SAVERS))
def test_each_save_is_in_the_operation_log(repo: Repo, saver: str) -> None:
    setup(repo, "", True)
    repo.write("work.txt", "new work\n")
    before = set(refs(repo))
    SAVERS[saver](repo)
    new = sorted(set(refs(repo)) - before)
    assert new
    events = [
        json.loads(line)
        for line in (repo.path / ".git/checkpoint/events.jsonl").read_text().splitlines()
    ]
    saves = {(e.get("task"), e.get("checkpoint")) for e in events if e["op"] == "save"}
    for ref in new:
        _, _, task, cp = ref.split("/", 3)
        if manifest(repo, ref).get("auto") == "pre-restore":
            continue
        assert (task, cp) in saves, (ref, events[-3:])


@pytest.mark.parametrize("saver", list(SAVERS))
def test_the_task_records_hypothesis_reaches_the_manifest(repo: Repo, saver: str) -> None:
    setup(repo, "", False)
    repo.cp("task", "set", "--hypothesis", "the cache is stale", "--next", "clear it")
    repo.write("src/app.py", "print('prior')\n")
    repo.cp("save", "-m", "prior")
    time.sleep(1.1)
    repo.write("work.txt", "new work\n")
    before = set(refs(repo))
    SAVERS[saver](repo)
    new = sorted(set(refs(repo)) - before)
    assert new
    for ref in new:
        m = manifest(repo, ref)
        assert m["hypothesis"] == "the cache is stale", (ref, m)
        assert m["next_move"] == "clear it", (ref, m)


@pytest.mark.parametrize("saver", list(SAVERS))
def test_an_unchanged_workspace_saves_nothing(repo: Repo, saver: str) -> None:
    setup(repo, "", True)
    before = refs(repo)
    proc = SAVERS[saver](repo)
    after = refs(repo)
    new = [r for r in after if r not in before]
    # run: the rollback point is the latest (unchanged); the attempt changes nothing either
    assert new == [], (new, proc.stdout, proc.stderr)


@pytest.mark.parametrize("saver", list(SAVERS))
def test_retention_auto_prunes_after_each_saver(repo: Repo, saver: str) -> None:
    setup(repo, "retention: {keep_last: 1, auto: true, keep_promoted: false}\n", False)
    for n in range(3):
        repo.write("src/app.py", f"print({n})\n")
        repo.cp("save", "-m", f"old {n}")
    time.sleep(1.1)
    repo.write("work.txt", "new work\n")
    SAVERS[saver](repo)
    normal = [r for r in refs(repo, "main") if manifest(repo, r).get("auto") != "pre-restore"]
    assert len(normal) <= 2, normal  # the newest, and (run) its rollback point
