"""Retention: `prune` with a fixed clock keeps exactly the policy and nothing a restore
or the task record needs; `drop` and `prune` say how to bring a checkpoint back."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
from pathlib import Path

from ..conftest import Repo


def day(n: int) -> dict[str, str]:
    """A fixed clock: noon on day n (day 1 is 2026-03-01)."""
    when = dt.datetime(2026, 2, 28, 12, tzinfo=dt.UTC) + dt.timedelta(days=n)
    return {"GIT_CHECKPOINT_NOW": when.strftime("%Y-%m-%dT%H:%M:%SZ")}


def refs(repo: Repo, task: str = "main") -> list[str]:
    out = repo.git("for-each-ref", "--format=%(refname:lstrip=3)", f"refs/checkpoints/{task}/")
    return sorted(out.split(), key=lambda x: int(x[3:]))


def save_days(repo: Repo, days: list[int]) -> None:
    for n in days:
        repo.write("src/app.py", f"print({n})\n")
        repo.cp("save", "-m", f"day {n}", env=day(n))


def policy(repo: Repo, text: str) -> None:
    repo.write(".checkpoint.yaml", f"retention: {text}\n")
    repo.commit_all("policy")


def test_keep_last_and_max_age_with_a_fixed_clock(repo: Repo) -> None:
    policy(repo, "{keep_last: 3, max_age: 10d, keep_promoted: true}")
    save_days(repo, [1, 2, 3, 20, 21, 22, 23])  # cp_001..cp_007
    proc = repo.cp("prune", "--dry-run", "--json", env=day(25))
    plan = json.loads(proc.stdout)
    assert [d["id"] for d in plan["removed"]] == ["cp_001", "cp_002", "cp_003", "cp_004"]
    assert refs(repo) == [f"cp_00{i}" for i in range(1, 8)]  # dry run: nothing gone
    # Day 32: cp_005 is older than 10d too (cp_006 is exactly 10d: it stays).
    out = repo.cp("prune", env=day(32)).stdout
    assert refs(repo) == ["cp_006", "cp_007"]
    assert "removed main/cp_005 (older than 10d)" in out
    assert "removed main/cp_001 (beyond the newest 3 checkpoints)" in out
    commit = json.loads(repo.cp("log", "--json").stdout)["events"][0]["commit"]
    assert f"undo with: git update-ref refs/checkpoints/main/cp_005 {commit}" in out


def test_latest_always_stays(repo: Repo) -> None:
    policy(repo, "{keep_last: 1, max_age: 1d}")
    save_days(repo, [1, 2])
    repo.cp("prune", env=day(28))
    assert refs(repo) == ["cp_002"]


def test_never_removes_what_something_needs(repo: Repo) -> None:
    repo.write(
        ".checkpoint.yaml",
        "retention: {keep_last: 1, max_age: 1d, keep_safety: 0}\n"
        "verifiers:\n  - {name: ok, command: 'true'}\n",
    )
    repo.commit_all("policy")
    save_days(repo, [1, 2, 3, 4, 5, 6])  # cp_001..cp_006
    repo.cp("promote", "cp_002", "--force", "--reason", "reviewed", env=day(6))
    repo.cp("verify", "cp_003", env=day(6))  # passes: promoted by evidence
    # Restore cp_004 (safety cp_007 is taken), then undo (safety cp_008).
    repo.cp("restore", "cp_004", env=day(7))
    repo.cp("undo", env=day(7))
    before = refs(repo)
    proc = repo.cp("prune", "--json", env=day(30))
    result = json.loads(proc.stdout)
    kept = {d["id"]: d["reason"] for d in result["kept"]}
    assert kept["cp_002"] == "promoted"
    assert kept["cp_003"] in ("promoted", "the task's last good checkpoint")
    assert kept["cp_006"] == "the task's latest checkpoint"
    assert "undo" in kept["cp_008"]
    removed = [d["id"] for d in result["removed"]]
    assert removed == ["cp_001", "cp_004", "cp_005", "cp_007"]
    assert refs(repo) == sorted(set(before) - set(removed), key=lambda x: int(x[3:]))
    repo.cp("undo", env=day(30))  # the latest safety checkpoint still works


def test_pending_restore_journal_keeps_its_checkpoints(repo: Repo) -> None:
    policy(repo, "{keep_last: 1, max_age: 1d, keep_safety: 0}")
    save_days(repo, [1, 2, 3])
    # An interrupted restore of cp_001: its journal names cp_001 and the safety cp_004.
    target = repo.git("rev-parse", "refs/checkpoints/main/cp_001").strip()
    repo.cp("restore", "cp_001", env=day(4))
    safety = repo.git("rev-parse", "refs/checkpoints/main/cp_004").strip()
    journal = {
        "target": target,
        "target_name": "main/cp_001",
        "safety": safety,
        "safety_name": "main/cp_004",
        "head_from": None,
        "head_to": None,
        "move_head": False,
        "started_at": "2026-03-04T12:00:00Z",
        "pid": 1,
    }
    (repo.path / ".git/checkpoint/restore-journal.json").write_text(json.dumps(journal))
    save_days(repo, [5])  # cp_005: a newer safety (none) and latest
    result = json.loads(repo.cp("prune", "--json", env=day(30)).stdout)
    kept = {d["id"]: d["reason"] for d in result["kept"]}
    assert "pending restore" in kept["cp_001"]
    assert "pending restore" in kept["cp_004"]
    assert [d["id"] for d in result["removed"]] == ["cp_002", "cp_003"]


def test_safety_checkpoints_have_their_own_count(repo: Repo) -> None:
    policy(repo, "{keep_last: 50, max_age: 100d, keep_safety: 2}")
    save_days(repo, [1, 2])
    for _ in range(2):
        repo.cp("restore", "cp_001", env=day(3))  # safety cp_003, then cp_005 after undo
        repo.cp("undo", env=day(3))
    safeties = json.loads(repo.cp("list", "--json").stdout)["checkpoints"]
    ids = [c["id"] for c in safeties if c["safety"]]
    assert len(ids) == 4
    result = json.loads(repo.cp("prune", "--json", env=day(4)).stdout)
    assert [d["id"] for d in result["removed"]] == ids[:2]
    assert all("safety" in d["reason"] for d in result["removed"])


def test_auto_prunes_after_each_save(repo: Repo) -> None:
    policy(repo, "{keep_last: 2, auto: true}")
    save_days(repo, [1, 2])
    repo.write("src/app.py", "print(3)\n")
    out = repo.cp("save", env=day(3)).stdout
    assert "pruned 1 by the retention policy: cp_001" in out
    assert refs(repo) == ["cp_002", "cp_003"]


def test_all_and_task(repo: Repo) -> None:
    policy(repo, "{keep_last: 1}")
    save_days(repo, [1, 2])
    repo.write("src/app.py", "other\n")
    repo.cp("save", "--task", "other", env=day(1))
    repo.write("src/app.py", "other 2\n")
    repo.cp("save", "--task", "other", env=day(2))
    repo.cp("prune", "--task", "other", env=day(3))
    assert refs(repo, "other") == ["cp_002"]
    assert refs(repo) == ["cp_001", "cp_002"]
    repo.cp("prune", "--all", env=day(3))
    assert refs(repo) == ["cp_002"]
    err = repo.cp("prune", "--all", "--task", "x", expect=2).stderr
    assert "exclude each other" in err


def test_bad_policy_and_bad_clock(repo: Repo) -> None:
    repo.write(".checkpoint.yaml", "retention: {auto: maybe}\n")
    err = repo.cp("prune", expect=2).stderr
    assert "retention.auto must be true or false" in err
    (repo.path / ".checkpoint.yaml").unlink()
    repo.write("x", "1")
    err = repo.cp("save", env={"GIT_CHECKPOINT_NOW": "tuesday"}, expect=2).stderr
    assert "GIT_CHECKPOINT_NOW" in err and "Traceback" not in err


def test_drop_logs_and_says_how_to_get_it_back(repo: Repo) -> None:
    save_days(repo, [1])
    commit = repo.git("rev-parse", "refs/checkpoints/main/cp_001").strip()
    out = repo.cp("drop", "cp_001").stdout
    assert f"git update-ref refs/checkpoints/main/cp_001 {commit}" in out
    event = json.loads(repo.cp("log", "--json").stdout)["events"][0]
    assert (event["op"], event["commit"]) == ("drop", commit)
    repo.git("update-ref", "refs/checkpoints/main/cp_001", commit)
    repo.cp("show", "cp_001")


def test_what_undo_needs_in_another_worktree_stays(repo: Repo, tmp_path: Path) -> None:
    policy(repo, "{keep_last: 1, max_age: 100d, keep_safety: 0}")
    save_days(repo, [1, 2])  # cp_001, cp_002
    other = Repo(tmp_path / "other")
    repo.git("worktree", "add", "-q", str(other.path))
    env = {**day(3), "CHECKPOINT_TASK": "main"}
    other.cp("restore", "cp_001", env=env)  # safety cp_003, undone from the other worktree
    repo.cp("restore", "cp_001", env=day(3))  # safety cp_004
    repo.cp("restore", "cp_002", env=day(3))  # safety cp_005
    result = json.loads(repo.cp("prune", "--json", env=day(4)).stdout)
    assert [d["id"] for d in result["removed"]] == ["cp_001", "cp_004"]
    assert {d["id"]: d["reason"] for d in result["kept"]}["cp_003"] == "what undo goes back to"
    other.cp("undo", env=env)


def test_auto_prunes_after_hook_and_guard_saves(repo: Repo) -> None:
    policy(repo, "{keep_last: 2, auto: true}")
    save_days(repo, [1, 2])  # cp_001, cp_002
    fixture = Path(__file__).parents[1] / "fixtures/hooks/claude-code/UserPromptSubmit.json"
    repo.write("src/app.py", "print('before a prompt')\n")
    subprocess.run(
        ["git-checkpoint-hook", "claude-code", "UserPromptSubmit"],
        input=fixture.read_text().replace("__CWD__", str(repo.path)),
        cwd=repo.path,
        text=True,
        env={**os.environ, **day(3)},
        check=True,
    )
    assert refs(repo) == ["cp_002", "cp_003"]  # the hook's auto-save pruned cp_001
    repo.write("src/app.py", "print('before rm')\n")
    repo.cp("guard", "--", "rm", "-f", "nothing-here", env=day(3))
    assert refs(repo) == ["cp_003", "cp_004"]
