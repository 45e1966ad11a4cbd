"""A promotion made on another machine and fetched back counts for `status` and `resume`:
the task's last good checkpoint is the newest one its notes call promoted, not only the
one this machine's task record last wrote."""

from __future__ import annotations

import json
from pathlib import Path

from ..conftest import Repo
from ..servers import bare_repo, clone, publish


def test_a_fetched_promotion_is_the_last_good_checkpoint(repo: Repo, tmp_path: Path) -> None:
    url = bare_repo(tmp_path / "server.git").as_uri()
    a = publish(repo, url)
    a.write("x.txt", "1\n")
    a.cp("save", "-m", "one")
    a.cp("promote", "cp_001", "--force", "--reason", "the base")
    a.write("x.txt", "2\n")
    a.cp("save", "-m", "two")
    a.cp("push", "origin", "cp_001", "cp_002")
    assert "last good checkpoint: cp_001" in a.cp("status").stdout

    b = clone(url, tmp_path / "b")
    b.cp("fetch")
    b.cp("promote", "origin/main/cp_002", "--force", "--reason", "reviewed on B")
    b.cp("push", "origin", "origin/main/cp_002")
    a.cp("fetch")

    assert a.cp_json("list")["checkpoints"][-1]["status"] == "promoted"
    assert "last good checkpoint: cp_002" in a.cp("status").stdout
    assert a.cp_json("resume")["last_good_checkpoint"] == "cp_002"


def test_a_fetched_event_dated_in_the_future_never_outranks_a_later_local_one(
    repo: Repo, tmp_path: Path
) -> None:
    url = bare_repo(tmp_path / "server.git").as_uri()
    a = publish(repo, url)
    a.write("src/app.py", "print('a')\n")
    a.cp("save", "-m", "one")
    a.cp("push", "origin", "cp_001")
    # Another machine's promotion, dated far ahead (a wrong clock, or a forged date).
    b = clone(url, tmp_path / "b")
    b.cp("fetch")
    commit = b.git("rev-parse", "refs/checkpoints/remotes/origin/main/cp_001").strip()
    forged = {"at": "9999-12-31T00:00:00Z", "event": "promoted", "id": "f0f0f0f0f0f0"}
    b.git("notes", "--ref=checkpoints", "add", "-f", "-m", json.dumps(forged), commit)
    b.git("push", "-q", "origin", "refs/notes/checkpoints:refs/notes/checkpoints", "--force")
    a.cp("fetch")
    assert a.cp_json("list")["checkpoints"][-1]["status"] == "promoted"
    # A failing local verify after that fetch is the latest word.
    a.write(".checkpoint.yaml", "verifiers:\n  - {name: unit, command: 'false'}\n")
    a.cp("verify", "cp_001", expect=1)
    listed = a.cp_json("list")["checkpoints"][-1]
    assert listed["status"] == "rejected"
    assert "last good checkpoint: cp_001" not in a.cp("status").stdout
    assert a.cp_json("resume")["last_good_checkpoint"] != "cp_001"
