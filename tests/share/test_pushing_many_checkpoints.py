"""A push of many checkpoints names them in a scratch repository's one packed-refs file
(git writes each ref of a repository as a file of its own): what lands on the remote,
the hooks and config that act on the push, a shallow clone, and a kill at any point are
as for a push of a few."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pygit2

from git_checkpoint.share.remotes import PUSH_ELSEWHERE_FROM

from ..conftest import Repo
from ..fault_injection import Runner
from ..fault_injection import checkpoint as checkpoint  # the fixture
from ..servers import bare_repo, publish
from .test_a_killed_push_or_fetch_is_finished_by_the_next import _points

MANY = PUSH_ELSEWHERE_FROM


def _many(repo: Repo, count: int = MANY) -> dict[str, str]:
    """`count` checkpoints of task main: one saved, the others its commit under ids of
    their own (a long-running fleet's task); ref -> commit."""
    repo.write("src/app.py", "print('v1')\n")
    repo.cp("save", "-m", "first")
    store = pygit2.Repository(str(repo.path))
    first = store.revparse_single("refs/checkpoints/main/cp_001").peel(pygit2.Commit)
    lines = []
    for n in range(2, count + 1):
        cp = f"cp_{n:03d}"
        oid = store.create_commit(
            None,
            first.author,
            first.committer,
            first.message.replace("cp_001", cp, 2),
            first.tree_id,
            list(first.parent_ids),
        )
        lines.append(f"create refs/checkpoints/main/{cp} {oid}\n")
    subprocess.run(
        ["git", "update-ref", "--stdin"], cwd=repo.path, input="".join(lines).encode(), check=True
    )
    subprocess.run(["git", "pack-refs", "--all"], cwd=repo.path, check=True)
    return _refs(repo.path)


def _refs(path: Path) -> dict[str, str]:
    out = subprocess.run(
        ["git", "for-each-ref", "--format=%(refname) %(objectname)", "refs/checkpoints/"],
        cwd=path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return dict(line.split() for line in out.splitlines())


def _scratch_folders(path: Path) -> list[Path]:
    return sorted((path / ".git").glob("checkpoint-refs-*"))


def _temporary_refs(path: Path) -> str:
    return subprocess.run(
        ["git", "for-each-ref", "refs/notes/checkpoint-tmp/"],
        cwd=path,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def _server_saying_push_options(tmp_path: Path) -> tuple[Path, Path]:
    """A bare server whose pre-receive hook writes the push options it was given, sorted,
    to the returned file."""
    server = bare_repo(tmp_path / "server.git")
    subprocess.run(["git", "config", "receive.advertisePushOptions", "true"], cwd=server)
    said = tmp_path / "push-options"
    (server / "hooks").mkdir(exist_ok=True)
    (server / "hooks" / "pre-receive").write_text(
        f'#!/bin/sh\nenv | grep ^GIT_PUSH_OPTION_[0-9] | cut -d= -f2 | sort > "{said}"\n'
        "cat > /dev/null\n"
    )
    (server / "hooks" / "pre-receive").chmod(0o755)
    return server, said


def test_many_checkpoints_land_with_this_repositorys_hooks_and_config(
    repo: Repo, tmp_path: Path
) -> None:
    server, said = _server_saying_push_options(tmp_path)
    a = publish(repo, server.as_uri())
    wanted = _many(a)
    a.git("config", "push.pushOption", "from-this-repository")
    seen = tmp_path / "pre-push"
    hook = a.path / ".git" / "hooks" / "pre-push"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(f'#!/bin/sh\ncat >> "{seen}"\n')
    hook.chmod(0o755)

    pushed = a.cp("push")

    assert f"pushed {MANY} checkpoints" in pushed.stdout, pushed.stdout
    assert _refs(server) == wanted
    # The repository's pre-push hook saw every ref, and its config reached the remote.
    assert len(seen.read_text().splitlines()) == MANY
    assert said.read_text().split() == ["from-this-repository"]
    assert _scratch_folders(a.path) == []
    assert _temporary_refs(a.path) == ""


def test_a_shallow_clone_pushes_many_checkpoints(repo: Repo, tmp_path: Path) -> None:
    origin = bare_repo(tmp_path / "origin.git")
    full = publish(repo, origin.as_uri())
    full.write("src/app.py", "print('second')\n")
    full.commit_all("second")
    full.git("push", "-q", "origin", "main")
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", origin.as_uri(), str(tmp_path / "shallow")],
        check=True,
    )
    shallow = Repo(tmp_path / "shallow")
    assert (shallow.path / ".git" / "shallow").exists()
    wanted = _many(shallow)
    # A remote without the history: git's own refusal, through the shallow boundary,
    # said as git says it (no name of it is taken).
    empty = bare_repo(tmp_path / "empty.git")
    shallow.git("remote", "add", "empty", empty.as_uri())
    refused = shallow.cp("push", "empty", expect=4)
    said = r"main/cp_\d+: \[remote rejected\] \(shallow update not allowed\)"
    assert re.search(said, refused.stderr), refused.stderr
    assert "taken" not in refused.stderr

    pushed = shallow.cp("push", "origin")

    assert f"pushed {MANY} checkpoints" in pushed.stdout, pushed.stdout
    assert _refs(origin) == wanted


def test_a_killed_push_of_many_is_finished_by_the_next(
    checkpoint: Runner, repo: Repo, tmp_path: Path
) -> None:
    server = bare_repo(tmp_path / "server.git")
    a = publish(repo, server.as_uri())
    wanted = _many(a)
    template = tmp_path / "server-template.git"
    shutil.copytree(server, template)
    counted = checkpoint(a.path, "push", kill_at=0)
    assert counted.code == 0, counted.line()
    assert any("--git-dir=" in call for call in counted.calls), counted.calls
    # The kill points this way of pushing adds to those of a push of a few (swept in
    # test_a_killed_push_or_fetch_is_finished_by_the_next): from the first git call
    # about the scratch repository on, and each file system call that builds or
    # removes it.
    first = next(n for n, call in enumerate(counted.calls, 1) if "--git-path hooks" in call)
    scratch = [n for n, call in enumerate(counted.fs, 1) if "checkpoint-refs-" in call]
    assert scratch, counted.fs
    points = [
        (n, mode) for n, mode in _points(counted.calls, counted.fs) if mode != "fs" and n >= first
    ]
    points += [(n, "fs") for n in sorted({scratch[0], scratch[len(scratch) // 2], scratch[-1]})]
    left = 0
    for n, mode in points:
        where = tmp_path / f"{mode}-{n}"
        shutil.copytree(a.path, where, symlinks=True)
        shutil.rmtree(server)
        shutil.copytree(template, server)
        checkpoint(where, "push", kill_at=n, mode=mode)
        assert _refs(where) == wanted, (mode, n)
        left += len(_scratch_folders(where))
        again = checkpoint(where, "push", kill_at=None)
        assert again.code == 0, (mode, n, again.line())
        assert _refs(server) == wanted, (mode, n)
        assert _scratch_folders(where) == [], (mode, n)
        assert _temporary_refs(where) == "", (mode, n)
        shutil.rmtree(where)
    assert left  # some kill points leave the scratch repository: the next push removed it
