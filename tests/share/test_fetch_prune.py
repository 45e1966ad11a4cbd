"""`fetch --prune` drops the fetched checkpoints the remote no longer has, names each
with its commit, and logs it first, so `git update-ref` brings it back; nothing else
is touched (the remote's other checkpoints, this clone's own, another remote's)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from ..conftest import Repo
from ..servers import bare_repo, clone, publish

FETCHED = "refs/checkpoints/remotes/origin/main/"


def refs(repo: Repo) -> list[str]:
    return repo.git("for-each-ref", "--format=%(refname)", "refs/checkpoints/").split()


def test_fetch_prune_drops_what_the_remote_dropped(repo: Repo, tmp_path: Path) -> None:
    server = bare_repo(tmp_path / "server.git")
    a = publish(repo, server.as_uri())
    for n in (1, 2):
        a.write("src/app.py", f"print({n})\n")
        a.cp("save", "-m", f"step {n}")
    a.cp("push")
    other = bare_repo(tmp_path / "other.git")  # a second remote, with the same checkpoints
    a.git("push", "-q", other.as_uri(), "refs/checkpoints/*:refs/checkpoints/*")

    b = clone(server.as_uri(), tmp_path / "b")
    b.git("remote", "add", "other", other.as_uri())
    b.write("b.txt", "b\n")
    b.cp("save", "--task", "b-work", "-m", "b's own")
    b.cp("fetch")
    b.cp("fetch", "other")
    b.cp("verify", "origin/main/cp_001")
    gone = b.git("rev-parse", FETCHED + "cp_001").strip()
    subprocess.run(
        ["git", "-C", str(server), "update-ref", "-d", "refs/checkpoints/main/cp_001"], check=True
    )

    before = refs(b)
    assert "no new checkpoints on origin" in b.cp("fetch").stdout
    assert refs(b) == before  # without --prune nothing goes
    proc = b.cp("push")  # its evidence cannot go back: said, not an error
    assert "origin no longer has origin/main/cp_001" in proc.stderr
    assert "git checkpoint fetch --prune origin" in proc.stderr

    proc = b.cp("fetch", "--prune")
    lines = proc.stdout.splitlines()
    assert "pruned 1 checkpoint that origin no longer has:" in lines
    assert f"  origin/main/cp_001 (was {gone[:12]})" in lines
    assert f"git update-ref {FETCHED}cp_001 {gone}" in proc.stdout
    assert refs(b) == [r for r in before if r != FETCHED + "cp_001"]
    logged = [e for e in b.cp_json("log")["events"] if e["op"] == "fetch-prune"]
    assert [(e["checkpoint"], e["commit"], e["ref"]) for e in logged] == [
        ("origin/main/cp_001", gone, FETCHED + "cp_001")
    ]
    assert b.cp_json("fetch", "--prune")["pruned"] == []  # said once

    b.git("update-ref", logged[0]["ref"], logged[0]["commit"])  # brought back from the log
    shown = b.cp_json("show", "origin/main/cp_001")
    assert shown["commit"] == gone and shown["status"] == "promoted"  # its notes stayed


def test_fetch_prune_keeps_what_this_fetch_brought(repo: Repo, tmp_path: Path) -> None:
    url = bare_repo(tmp_path / "server.git").as_uri()
    a = publish(repo, url)
    a.write("src/app.py", "print(1)\n")
    a.cp("save")
    a.cp("push")
    b = clone(url, tmp_path / "b")
    data = b.cp_json("fetch", "--prune")
    assert data["new"] == ["origin/main/cp_001"] and data["pruned"] == []
    assert refs(b) == [FETCHED + "cp_001"]
