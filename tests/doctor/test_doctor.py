"""`git checkpoint doctor` on a healthy repository and on broken ones: a checklist, exit 1
with the fix for each problem, and a round trip that leaves nothing behind."""

from __future__ import annotations

import json
import os

from ..conftest import Repo


def checks(repo: Repo, expect: int) -> dict[str, dict[str, str]]:
    result = repo.cp_json("doctor", expect=expect)
    assert result["exit_code"] == expect
    return {c["name"]: c for c in result["checks"]}


def test_healthy_repository(repo: Repo) -> None:
    repo.write(".checkpoint.yaml", "verifiers:\n  - {name: unit, command: 'true'}\n")
    repo.commit_all("config")
    repo.write("src/app.py", "print('work in progress')\n")
    before = repo.git("status", "--porcelain", "--untracked-files=all")
    out = repo.cp("doctor").stdout
    assert out.strip().endswith("all good")
    for name in ("git", "pygit2", "config", "hooks", "sharing", "leftovers", "round trip"):
        assert f"  {name}: " in out
    assert "ok    round trip: save, mutate, restore, compare, undo" in out
    # It left nothing behind: no worktree, no probe checkpoints, the workspace untouched.
    assert len(repo.git("worktree", "list").splitlines()) == 1
    assert repo.git("for-each-ref", "refs/checkpoints/") == ""
    assert repo.git("status", "--porcelain", "--untracked-files=all") == before
    found = checks(repo, 0)
    assert found["config"]["status"] == "ok"
    assert found["hooks"]["status"] == "note"  # optional: a note, with how to install them


def test_broken_config_is_a_failure_with_its_fix(repo: Repo) -> None:
    repo.write(".checkpoint.yaml", "verifiers:\n  - {name: unit, comand: 'true'}\n")
    proc = repo.cp("doctor", expect=1)
    assert "FAIL  config: " in proc.stdout and ".checkpoint.yaml:2:" in proc.stdout
    assert "fix: correct the file or key it names" in proc.stdout
    assert "round trip: save, mutate" in proc.stdout  # still tested, with the defaults
    assert proc.stdout.strip().endswith("1 problem found")


def test_interrupted_restore_and_leftovers(repo: Repo) -> None:
    repo.cp("save")
    commit = repo.git("rev-parse", "refs/checkpoints/main/cp_001").strip()
    journal = {
        "target": commit,
        "target_name": "main/cp_001",
        "safety": commit,
        "safety_name": "main/cp_001",
        "head_from": None,
        "head_to": None,
        "move_head": False,
        "started_at": "2026-01-01T00:00:00Z",
        "pid": 1,
    }
    (repo.path / ".git/checkpoint").mkdir(exist_ok=True)
    (repo.path / ".git/checkpoint/restore-journal.json").write_text(json.dumps(journal))
    scratch = repo.path / ".git/checkpoint-abc123"
    scratch.mkdir()
    assert "lock" not in checks(repo, 1)  # a fresh one may belong to a running command
    os.utime(scratch, (1_700_000_000, 1_700_000_000))
    found = checks(repo, 1)
    assert found["restore"]["status"] == "fail"
    assert "interrupted" in found["restore"]["detail"]
    assert found["restore"]["fix"] == "git checkpoint restore --continue, or git checkpoint undo"
    assert found["lock"]["status"] == "fail" and "rm -rf" in found["lock"]["fix"]


def test_fetch_refspec_that_would_overwrite_checkpoints(repo: Repo, tmp_path: object) -> None:
    repo.git("remote", "add", "origin", "https://example.invalid/x.git")
    repo.git("config", "--add", "remote.origin.fetch", "+refs/checkpoints/*:refs/checkpoints/*")
    found = checks(repo, 1)
    assert found["sharing"]["status"] == "fail"
    assert found["sharing"]["fix"].startswith("git config --unset remote.origin.fetch")
    repo.git(
        "config", "--unset", "remote.origin.fetch", r"\+refs/checkpoints/\*:refs/checkpoints/\*"
    )
    assert checks(repo, 0)["sharing"]["status"] == "ok"


def test_outdated_hooks(repo: Repo) -> None:
    repo.cp("hooks", "install", "--git")
    assert checks(repo, 0)["hooks"]["status"] == "ok"
    hook = next(p for p in (repo.path / ".git/hooks").iterdir() if p.name != "README")
    hook.write_text(hook.read_text() + "# an older version\n")
    found = checks(repo, 1)
    assert found["hooks"]["status"] == "fail" and "hooks install" in found["hooks"]["fix"]


def test_unborn_head_skips_the_round_trip(empty_repo: Repo) -> None:
    found = checks(empty_repo, 0)
    assert found["round trip"]["status"] == "note"
