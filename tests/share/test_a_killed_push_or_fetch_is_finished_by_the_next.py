"""`push` and `fetch` killed at each of their git calls (before and after it) and at each
of their own file system calls: the local checkpoints never change, `doctor` names the
temporary refs a killed run left, and the next push or fetch removes them and brings
everything across, notes included."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from ..conftest import Repo
from ..fault_injection import Runner, git
from ..fault_injection import checkpoint as checkpoint  # the fixture
from ..servers import bare_repo, clone, publish

TEMPORARY = ("refs/notes/checkpoint-tmp/", "refs/checkpoint-tmp/")


def _refs(path: Path, *roots: str) -> dict[str, str]:
    out = git(path, "for-each-ref", "--format=%(refname) %(objectname)", *roots)
    return dict(line.split() for line in out.splitlines())


def _notes(path: Path, ref: str = "refs/notes/checkpoints") -> set[str]:
    """Every note line of every checkpoint, as (commit, line)."""
    listed = git(path, "notes", f"--ref={ref}", "list", check=False).split()
    lines = set()
    for blob, commit in zip(listed[0::2], listed[1::2], strict=True):
        for line in git(path, "cat-file", "blob", blob).splitlines():
            lines.add(f"{commit} {line}")
    return lines


# git calls that write nothing: a kill right after one is the kill right before the next.
READ_ONLY = {"ls-remote", "for-each-ref", "rev-parse", "cat-file", "notes", "config", "diff-tree"}


def _points(calls: list[str], fs: list[str]) -> list[tuple[int, str]]:
    """Every kill point that can leave a state of its own: before each git call, after
    each one that writes, and before each of our own file system calls but those in a
    temporary folder or feeding a git child."""
    points = [(n, "before") for n in range(1, len(calls) + 1)]
    points += [(n, "after") for n, call in enumerate(calls, 1) if _verb(call) not in READ_ONLY]
    points += [(n, "fs") for n, call in enumerate(fs, 1) if not _scratch(call)]
    return sorted(points)


def _verb(call: str) -> str:
    """The git command of a logged call (after `-c NAME=VALUE`, `-C DIR` and the like)."""
    words = iter(call.split())
    for word in words:
        if word in ("-c", "-C", "--git-dir", "--work-tree"):
            next(words, None)
        elif not word.startswith("-"):
            return word
    return ""


def _scratch(call: str) -> bool:
    """A file system call that failed (nothing changed) or fed a git child's stdin."""
    what = call.split(" ", 1)[1] if " " in call else ""
    return "[failed" in call or what.startswith("pipe:")


def _leftovers_named_by_doctor(checkpoint: Runner, where: Path) -> int:
    """How many temporary refs the killed run left (each time named by doctor)."""
    left = _refs(where, *TEMPORARY)
    if left:
        doctor = checkpoint(where, "doctor", "--json", kill_at=None)
        checks = json.loads(doctor.out)["checks"]
        assert any("temporary ref" in c["detail"] for c in checks), checks
    return len(left)


def test_a_killed_push_is_finished_by_the_next(
    checkpoint: Runner, repo: Repo, tmp_path: Path
) -> None:
    server = bare_repo(tmp_path / "server.git")
    a = publish(repo, server.as_uri())
    for i in range(3):
        a.write("src/app.py", f"print({i})\n")
        a.cp("save", "-m", f"attempt {i}")
        a.cp("verify")
    bare_template = tmp_path / "server-template.git"
    shutil.copytree(server, bare_template)
    counted = checkpoint(a.path, "push", kill_at=0)
    assert counted.code == 0, counted.line()
    shutil.rmtree(server)
    want_refs = _refs(a.path, "refs/checkpoints/")
    want_notes = _notes(a.path)
    left = 0
    for n, mode in _points(counted.calls, counted.fs):
        where = tmp_path / f"{mode}-{n}"
        shutil.copytree(a.path, where / "a", symlinks=True)
        shutil.copytree(bare_template, server)
        checkpoint(where / "a", "push", kill_at=n, mode=mode)
        assert _refs(where / "a", "refs/checkpoints/") == want_refs, (mode, n)
        left += _leftovers_named_by_doctor(checkpoint, where / "a")
        again = checkpoint(where / "a", "push", kill_at=None)
        assert again.code == 0, (mode, n, again.line())
        assert not _refs(where / "a", *TEMPORARY), (mode, n)
        assert _refs(server, "refs/checkpoints/") == want_refs, (mode, n)
        assert _notes(server) >= want_notes, (mode, n)
        shutil.rmtree(server)
        shutil.rmtree(where)
    assert left  # some kill points leave temporary refs: the sweep saw them cleaned


def test_a_killed_fetch_is_finished_by_the_next(
    checkpoint: Runner, repo: Repo, tmp_path: Path
) -> None:
    url = bare_repo(tmp_path / "server.git").as_uri()
    a = publish(repo, url)
    for i in range(3):
        a.write("src/app.py", f"print({i})\n")
        a.cp("save", "-m", f"attempt {i}")
        a.cp("verify")
    a.cp("push")
    b = clone(url, tmp_path / "b")
    b.write("src/app.py", "print('b')\n")
    b.cp("save", "-m", "b's own")
    b.cp("verify")
    own_notes = _notes(b.path)
    counted = checkpoint(_copy(b.path, tmp_path / "count"), "fetch", kill_at=0)
    assert counted.code == 0, counted.line()
    want_refs = _refs(tmp_path / "count", "refs/checkpoints/")
    want_notes = _notes(tmp_path / "count")
    assert want_notes >= _notes(a.path) | own_notes
    left = 0
    for n, mode in _points(counted.calls, counted.fs):
        where = _copy(b.path, tmp_path / f"{mode}-{n}")
        checkpoint(where, "fetch", kill_at=n, mode=mode)
        assert _notes(where) >= own_notes, (mode, n)  # nothing of B's own lost
        left += _leftovers_named_by_doctor(checkpoint, where)
        again = checkpoint(where, "fetch", kill_at=None)
        assert again.code == 0, (mode, n, again.line())
        assert not _refs(where, *TEMPORARY), (mode, n)
        assert _refs(where, "refs/checkpoints/") == want_refs, (mode, n)
        assert _notes(where) == want_notes, (mode, n)
        shutil.rmtree(where)
    assert left


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, symlinks=True)
    return dst
