"""A promotion made on another machine and fetched back counts for `status` and `resume`:
the task's last good checkpoint is the newest one its notes call promoted, not only the
one this machine's task record last wrote."""

from __future__ import annotations

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
