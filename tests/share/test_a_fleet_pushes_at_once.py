"""A fleet: many machines push their checkpoints and evidence to one remote at the same
moment, each under its own task prefix. Every push exits 0 and every checkpoint and
every verifier result arrives, through a bare repository, git daemon and smart HTTP."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from ..conftest import Repo
from ..servers import bare_repo, clone, git_daemon, http_server, publish, remote_refs


@contextlib.contextmanager
def served(kind: str, base: Path) -> Iterator[str]:
    """The URL of an empty bare repository behind one kind of server."""
    base.mkdir()
    bare_repo(base / "project.git")
    if kind == "file":
        yield (base / "project.git").as_uri()
    elif kind == "git":
        with git_daemon(base) as url:
            yield url + "project.git"
    else:
        with http_server(base) as url:
            yield url + "project.git"


def _machines(url: str, count: int, tmp_path: Path) -> list[Repo]:
    """`count` clones of the remote, each with a prefix of its own, a checkpoint and a
    verifier's result on it."""
    template = clone(url, tmp_path / "template")

    def machine(i: int) -> Repo:
        path = tmp_path / f"runner-{i}"
        shutil.copytree(template.path, path, symlinks=True)
        m = Repo(path)
        m.git("config", "checkpoint.taskPrefix", f"runner-{i}/")
        m.write("src/app.py", f"print({i})\n")
        m.cp("save", "-m", f"runner {i}")
        m.cp("verify")
        return m

    with ThreadPoolExecutor(max_workers=4) as pool:  # (set up side by side; they push at once)
        return list(pool.map(machine, range(count)))


def _push_at_once(machines: list[Repo]) -> None:
    def push(m: Repo) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["git", "checkpoint", "push", "origin"],
            cwd=m.path, capture_output=True, text=True, env=dict(os.environ), check=False,
            timeout=240,
        )  # fmt: skip

    with ThreadPoolExecutor(max_workers=len(machines)) as pool:
        results = list(pool.map(push, machines))
    failed = [(i, r.returncode, r.stderr[-400:]) for i, r in enumerate(results) if r.returncode]
    assert not failed, failed


def _everything_arrived(reader: Repo, machines: list[Repo]) -> None:
    refs = remote_refs(reader)
    commits = {
        f"refs/checkpoints/runner-{i}/main/cp_001": m.git(
            "rev-parse", "refs/checkpoints/main/cp_001"
        ).strip()
        for i, m in enumerate(machines)
    }
    assert {r: refs.get(r) for r in commits} == commits
    # Every machine's evidence is in the remote's notes.
    reader.git("fetch", "-q", "origin", "+refs/notes/checkpoints:refs/notes/fleet")
    for ref, commit in commits.items():
        note = reader.git("notes", "--ref=refs/notes/fleet", "show", commit)
        events = [json.loads(line) for line in note.splitlines() if line.strip()]
        assert [e["event"] for e in events if e["event"] == "verifier"] == ["verifier"], ref
        assert any(e["event"] == "promoted" for e in events), ref
    # ...and a fetch brings every one of them, promoted.
    reader.cp("fetch")
    listed = reader.cp_json("list", "--remote", "origin")["checkpoints"]
    assert sorted(c["name"] for c in listed) == sorted(
        f"origin/runner-{i}/main/cp_001" for i in range(len(machines))
    )
    assert {c["status"] for c in listed} == {"promoted"}


@pytest.mark.parametrize("count", [8, 32])
def test_every_push_of_a_fleet_lands_through_each_kind_of_remote(
    repo: Repo, tmp_path: Path, count: int
) -> None:
    with served("file", tmp_path / "setup") as url:
        publish(repo, url)
        machines = _machines(url, count, tmp_path)
    for kind in ("file", "git", "http"):
        with served(kind, tmp_path / kind) as url:
            repo.git("remote", "set-url", "origin", url)
            repo.git("push", "-q", "origin", "main")
            for m in machines:
                m.git("remote", "set-url", "origin", url)
            _push_at_once(machines)
            reader = clone(url, tmp_path / f"reader-{kind}")
            _everything_arrived(reader, machines)
