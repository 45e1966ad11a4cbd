"""push, fetch, list --remote, review and restore across machines, against real servers
on loopback: a bare repository over file://, git daemon (git://) and smart HTTP."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..conftest import Repo
from ..servers import bare_repo, clone, git_daemon, http_server, publish, remote_refs


@pytest.fixture(params=["file", "git", "http"])
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The URL of an empty bare repository behind one kind of server."""
    base = tmp_path / "server"
    base.mkdir()
    bare_repo(base / "project.git")
    if request.param == "file":
        yield (base / "project.git").as_uri()
    elif request.param == "git":
        with git_daemon(base) as url:
            yield url + "project.git"
    else:
        with http_server(base) as url:
            yield url + "project.git"


def test_round_trip_two_machines(repo: Repo, served: str, tmp_path: Path) -> None:
    a = publish(repo, served)
    a.write("src/app.py", "print('fixed')\n")
    a.write("notes/plan.md", "untracked plan\n")
    assert "checkpoint saved: cp_001" in a.cp("save", "-m", "the fix").stdout
    a.cp("verify")
    out = a.cp("push").stdout
    assert "pushed 1 checkpoint to origin: main/cp_001" in out
    commit = a.git("rev-parse", "refs/checkpoints/main/cp_001").strip()
    assert remote_refs(a)["refs/checkpoints/main/cp_001"] == commit
    assert "refs/notes/checkpoints" in remote_refs(a)

    b = clone(served, tmp_path / "b")
    assert "fetched 1 new checkpoint from origin" in b.cp("fetch").stdout
    assert b.git("for-each-ref", "--format=%(refname)", "refs/checkpoints").split() == [
        "refs/checkpoints/remotes/origin/main/cp_001"
    ]
    listed = b.cp_json("list", "--remote", "origin")["checkpoints"]
    assert [(c["name"], c["status"], c["verifiers"]) for c in listed] == [
        ("origin/main/cp_001", "promoted", {"unit": "passed"})
    ]
    review = b.cp_json("review", "origin/main")["timeline"]
    assert review["remote"] == "origin"
    assert review["entries"][0]["against_base"]["files"] == 2
    shown = b.cp_json("show", "origin/main/cp_001")
    assert "src/app.py" in shown["diffstat"] and shown["overlay_files"] == ["notes/plan.md"]

    before = b.git("status", "--porcelain", "--untracked-files=all")
    diff = b.cp_json("diff", "origin/main/cp_001")  # against the workspace, which stays put
    assert {f["path"] for f in diff["files"]} == {"src/app.py", "notes/plan.md"}
    assert b.git("status", "--porcelain", "--untracked-files=all") == before
    b.cp("restore", "origin/main/cp_001")
    assert (b.path / "src/app.py").read_text() == "print('fixed')\n"
    assert (b.path / "notes/plan.md").read_text() == "untracked plan\n"
    b.cp("verify", "origin/main/cp_001")
    assert "merged into origin's" in b.cp("push", "origin", "origin/main/cp_001").stdout

    a.cp("fetch")
    runs = a.cp_json("review")["timeline"]["entries"][0]["verifiers"]
    assert [r["status"] for r in runs] == ["passed", "passed"]  # A's run and B's run
    events = a.cp_json("show", "cp_001")["events"]
    assert sum(e["event"] == "verifier" for e in events) == 2


def test_push_never_overwrites_and_suggests_as(repo: Repo, tmp_path: Path) -> None:
    url = bare_repo(tmp_path / "server.git").as_uri()
    a = publish(repo, url)
    a.write("a.txt", "machine A\n")
    a.cp("save", "-m", "from A")
    a.cp("push")
    b = clone(url, tmp_path / "b")
    b.write("b.txt", "machine B\n")
    b.cp("save", "-m", "from B")  # also main/cp_001, another commit
    before = remote_refs(b)
    proc = b.cp("push", expect=3)
    assert "already has main/cp_001" in proc.stderr and "--as" in proc.stderr
    assert "taskPrefix" in proc.stderr and "nothing pushed" in proc.stderr
    assert remote_refs(b) == before
    b.cp("push", "--as", "main-b")
    after = remote_refs(b)
    assert after["refs/checkpoints/main/cp_001"] == before["refs/checkpoints/main/cp_001"]
    assert "refs/checkpoints/main-b/cp_001" in after


def test_fleet_task_prefix_keeps_machines_apart(repo: Repo, tmp_path: Path) -> None:
    url = bare_repo(tmp_path / "server.git").as_uri()
    a = publish(repo, url)
    machines = [a, clone(url, tmp_path / "b"), clone(url, tmp_path / "c")]
    for i, m in enumerate(machines):
        m.git("config", "checkpoint.taskPrefix", f"runner-{i}/")
        m.write("work.txt", f"runner {i}\n")
        m.cp("save", "-m", f"runner {i}")
        m.cp("push")
    refs = sorted(r for r in remote_refs(a) if r.startswith("refs/checkpoints/"))
    assert refs == [f"refs/checkpoints/runner-{i}/main/cp_001" for i in range(3)]
    a.cp("fetch")
    names = [c["name"] for c in a.cp_json("list", "--remote", "origin")["checkpoints"]]
    assert names == [f"origin/runner-{i}/main/cp_001" for i in range(3)]
    a.cp("review", "origin/runner-2/main")
    a.git("config", "checkpoint.taskPrefix", "bad..prefix")
    assert "taskprefix" in a.cp("push", expect=2).stderr.lower()


def test_only_what_is_asked_is_pushed(repo: Repo, tmp_path: Path) -> None:
    url = bare_repo(tmp_path / "server.git").as_uri()
    a = publish(repo, url)
    a.write("x.txt", "1\n")
    a.cp("save", "-m", "one")
    a.cp("verify")
    a.write("x.txt", "2\n")
    a.cp("save", "-m", "two")
    a.cp("verify")
    a.cp("restore", "cp_001")  # leaves safety checkpoint cp_003 (local only)
    a.write("y.txt", "other task\n")
    a.cp("save", "--task", "other", "-m", "elsewhere")
    a.cp("push", "origin", "cp_002")
    refs = remote_refs(a)
    assert sorted(r for r in refs if r.startswith("refs/checkpoints/")) == [
        "refs/checkpoints/main/cp_002"
    ]
    # cp_001's note (its verifier output) stayed home: only pushed checkpoints' notes go
    b = clone(url, tmp_path / "b")
    b.git("fetch", "-q", "origin", "refs/notes/checkpoints:refs/notes/checkpoints")
    noted = b.git("notes", "--ref=checkpoints", "list").split()[1::2]
    assert noted == [a.git("rev-parse", "refs/checkpoints/main/cp_002").strip()]
    a.cp("push")  # the task: cp_001, cp_002, never the safety checkpoint
    refs = remote_refs(a)
    assert "refs/checkpoints/main/cp_001" in refs
    assert "refs/checkpoints/main/cp_003" not in refs
    assert not any("/other/" in r for r in refs)
    a.cp("push", "--task", "other")
    assert "refs/checkpoints/other/cp_001" in remote_refs(a)
    assert "already on origin" in a.cp("push", "--all").stdout
    a.cp("push", "origin", "cp_003")  # named: a safety checkpoint may go
    assert "refs/checkpoints/main/cp_003" in remote_refs(a)


def test_diverged_notes_are_merged_never_forced(repo: Repo, tmp_path: Path) -> None:
    url = bare_repo(tmp_path / "server.git").as_uri()
    a = publish(repo, url)
    a.write("x.txt", "1\n")
    a.cp("save")
    a.cp("push")
    b = clone(url, tmp_path / "b")
    b.cp("fetch")
    b.cp("promote", "origin/main/cp_001", "--force", "--reason", "reviewed by B")
    a.cp("verify", "cp_001")  # A's own evidence, after B fetched: notes diverge
    a.cp("push")
    b.cp("push", "origin", "origin/main/cp_001")
    a.cp("fetch")
    kinds = sorted(e["event"] for e in a.cp_json("show", "cp_001")["events"])
    assert kinds == ["forced_promotion", "promoted", "verifier"]
    log = a.git("log", "--format=%P", "refs/notes/checkpoints").splitlines()
    assert any(len(parents.split()) == 2 for parents in log)  # a merge, not a rewrite


def test_push_and_fetch_bad_usage(repo: Repo, tmp_path: Path) -> None:
    assert "no remote named 'origin'" in repo.cp("push", expect=2).stderr
    assert "bad remote name" in repo.cp("fetch", "../x", expect=2).stderr
    url = bare_repo(tmp_path / "server.git").as_uri()
    publish(repo, url)
    assert "no checkpoints" in repo.cp("push", expect=2).stderr
    assert "git checkpoint push origin cp_001" in repo.cp("push", "cp_001", expect=2).stderr
    repo.cp("save", "-m", "x")
    repo.cp("save", "--task", "other", "-m", "y")
    assert "one task" in repo.cp("push", "--all", "--as", "y", expect=2).stderr
    assert "bad task name" in repo.cp("push", "--as", "remotes/x", expect=2).stderr
    assert "no checkpoints fetched" in repo.cp("list", "--remote", "origin", expect=2).stderr
    repo.cp("fetch")
    data = json.loads(repo.cp("fetch", "--json").stdout)
    assert data["new"] == [] and data["notes_merged"] is False


def test_progress_goes_to_stderr_only_on_a_terminal(repo: Repo, tmp_path: Path) -> None:
    import os
    import pty

    url = bare_repo(tmp_path / "server.git").as_uri()
    publish(repo, url)
    repo.write("x.txt", "1\n")
    repo.cp("save")
    quiet = repo.cp("push")  # stderr is a pipe: no progress
    assert quiet.stderr == ""
    repo.write("x.txt", "2\n")
    repo.cp("save")
    master, slave = pty.openpty()
    proc = subprocess.run(
        ["git", "checkpoint", "push"], cwd=repo.path, stdout=subprocess.PIPE, stderr=slave
    )
    os.close(slave)
    seen = os.read(master, 4096).decode()
    os.close(master)
    assert proc.returncode == 0
    assert "pushing 1 checkpoint" in seen and "pushing" not in proc.stdout.decode()


def test_push_goes_where_git_push_goes(repo: Repo, tmp_path: Path) -> None:
    """pushurl is honoured: the collision check and the notes merge ask the push URL."""
    url = bare_repo(tmp_path / "server.git").as_uri()
    publish(repo, url)
    mirror = bare_repo(tmp_path / "stale-mirror.git")
    repo.git("remote", "set-url", "origin", mirror.as_uri())
    repo.git("remote", "set-url", "--push", "origin", url)
    repo.write("x.txt", "1\n")
    repo.cp("save")
    repo.cp("verify")
    repo.cp("push")
    repo.write("x.txt", "2\n")
    repo.cp("save")
    repo.cp("verify")
    repo.cp("push")  # the notes on the push URL are merged, not the mirror's (none)
    server = Repo(tmp_path / "server.git")
    assert server.git("for-each-ref", "--format=%(refname)", "refs/checkpoints").split() == [
        "refs/checkpoints/main/cp_001",
        "refs/checkpoints/main/cp_002",
    ]
    assert len(server.git("notes", "--ref=checkpoints", "list").splitlines()) == 2
    assert mirror.joinpath("refs/checkpoints").exists() is False
