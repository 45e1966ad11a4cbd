"""A fetched event dated after the fetch that brought it counts as seen at that fetch
(storage/notes.py), also when the fetch is killed right after it merged the notes: the
next fetch finds those lines merged already, so the fetch that brings them is the one
that must record them. Killed through tests/fault_injection.py."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from ..conftest import Repo
from ..fault_injection import Runner
from ..fault_injection import checkpoint as checkpoint  # the fixture
from ..servers import bare_repo, clone, publish


def test_a_fetch_killed_after_merging_notes_never_lets_a_forged_date_stand(
    repo: Repo, tmp_path: Path, checkpoint: Runner
) -> None:
    url = bare_repo(tmp_path / "server.git").as_uri()
    a = publish(repo, url)
    a.write("src/app.py", "print('a')\n")
    a.cp("save", "-m", "one")
    a.cp("push", "origin", "cp_001")
    b = clone(url, tmp_path / "b")
    b.cp("fetch")
    commit = b.git("rev-parse", "refs/checkpoints/remotes/origin/main/cp_001").strip()
    forged = {"at": "9999-12-31T00:00:00Z", "event": "promoted", "id": "f0f0f0f0f0f0"}
    b.git("notes", "--ref=checkpoints", "add", "-f", "-m", json.dumps(forged), commit)
    b.git("push", "-q", "origin", "refs/notes/checkpoints:refs/notes/checkpoints", "--force")

    counted = Repo(tmp_path / "counted")
    shutil.copytree(a.path, counted.path, symlinks=True)
    calls = checkpoint(counted.path, "fetch").calls
    merge = next(n for n, call in enumerate(calls, 1) if "notes" in call and " merge " in call)
    killed = checkpoint(a.path, "fetch", kill_at=merge, mode="after")
    assert killed.code == -9, killed.line()
    assert "9999-12-31" in a.git("notes", "--ref=checkpoints", "show", commit)  # merged
    a.cp("fetch")
    a.write(".checkpoint.yaml", "verifiers:\n  - {name: unit, command: 'false'}\n")
    a.cp("verify", "cp_001", expect=1)
    assert a.cp_json("list")["checkpoints"][-1]["status"] == "rejected"
