"""A restore of some paths (`restore cp_001 -- src`) killed at any of its git calls or
file system calls: `restore --continue` leaves what the whole run leaves, `undo` the state
before it, byte for byte (tests/fault_injection.py kills it; test_kill_points.py says
what "leaves" compares). Outside the paths nothing changes, also when the work tree
changed there between the kill and the `--continue`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ..conftest import Repo, make_repo
from ..fault_injection import Runner, git
from ..fault_injection import checkpoint as checkpoint  # the fixture
from ..helpers import Fingerprint
from .test_kill_points import JOURNAL, Look, copy, differences, fs_matters, look, pack, read_only

OP = ("restore", "cp_001", "--", "src")


def _template(path: Path) -> Repo:
    repo = make_repo(path)
    repo.write("src/a.py", "a1\n")
    repo.write("src/b.py", "b1\n")
    repo.write("docs/d.md", "d1\n")
    repo.write(".gitignore", "*.log\n")
    repo.write("run.sh", "#!/bin/sh\n", mode=0o755)
    repo.commit_all("base")
    repo.write("src/a.py", "a2 staged\n")
    repo.git("add", "src/a.py")
    repo.write("src/a.py", "a2\n")
    repo.write("src/new.py", "new\n")
    repo.write("docs/d.md", "d2\n")
    repo.cp("save", "-m", "good")
    repo.write("src/a.py", "broken\n")
    repo.git("add", "src/a.py")
    (repo.path / "src/new.py").unlink()
    repo.write("src/extra.py", "the agent's\n")
    repo.write("docs/d.md", "d3, kept\n")
    repo.write("notes.txt", "kept too\n")
    repo.write("src/debug.log", "ignored, never touched\n")
    pack(repo.path)
    return repo


def _outside(seen: Look) -> tuple[Fingerprint, list[str]]:
    files = {p: v for p, v in seen.files.items() if not p.startswith("src/")}
    index = [line for line in seen.index.splitlines() if "\tsrc/" not in line]
    return files, index


def test_every_kill_point_of_a_path_restore_recovers(checkpoint: Runner, tmp_path: Path) -> None:
    template = _template(tmp_path / "start").path
    before = look(template)
    whole_at = copy(template, tmp_path / "whole")
    whole = checkpoint(whole_at, *OP)
    assert whole.code == 0, whole.line()
    after = look(whole_at)
    assert _outside(after) == _outside(before) and after.head == before.head
    wrong: list[str] = []
    seen: set[str] = set()
    for mode, calls in (("before", whole.calls), ("after", whole.calls), ("fs", whole.fs)):
        for n, call in enumerate(calls, 1):
            if (mode == "fs" and not fs_matters(call)) or (mode == "after" and read_only(call)):
                continue
            killed = copy(template, tmp_path / "killed")
            run = checkpoint(killed, *OP, kill_at=n, mode=mode)
            assert run.code == -9, f"not killed at {mode} {n}: {run.line()}"
            now = look(killed)
            key = repr(now) + str((killed / JOURNAL).exists())
            if key in seen or not (killed / JOURNAL).exists():
                shutil.rmtree(killed)
                continue
            seen.add(key)
            undone = copy(killed, tmp_path / "undone")
            for args, where, want in (
                (("restore", "--continue"), killed, after),
                (("undo",), undone, before),
            ):
                again = checkpoint(where, *args, kill_at=None)
                got = look(where)
                if again.code != 0 or got != want or (where / JOURNAL).exists():
                    wrong.append(
                        f"kill {mode} {n} ({call[:40]}), {' '.join(args)}: {again.line()}; "
                        f"{differences(got, want)}"
                    )
                shutil.rmtree(where)
    assert seen, "no kill point left a restore to continue"
    assert not wrong, "\n".join(wrong)


def test_continue_keeps_what_changed_outside_the_paths_since_the_kill(
    checkpoint: Runner, tmp_path: Path
) -> None:
    template = _template(tmp_path / "start").path
    whole = checkpoint(copy(template, tmp_path / "whole"), *OP)
    # The last kill point before the work tree is touched, with the journal written.
    for n in range(len(whole.calls), 0, -1):
        killed = copy(template, tmp_path / f"killed-{n}")
        checkpoint(killed, *OP, kill_at=n, mode="before")
        if (killed / JOURNAL).exists() and json.loads((killed / JOURNAL).read_text())["safety"]:
            break
        shutil.rmtree(killed)
    else:
        pytest.fail("no kill point leaves a journal with its safety checkpoint")
    (killed / "docs/d.md").write_text("edited after the kill\n")
    (killed / "notes.txt").unlink()
    done = checkpoint(killed, "restore", "--continue", kill_at=None)
    assert done.code == 0, done.line()
    assert (killed / "src/new.py").read_text() == "new\n"
    assert (killed / "docs/d.md").read_text() == "edited after the kill\n"
    assert not (killed / "notes.txt").exists()
    assert git(killed, "status", "--porcelain", "--", "docs") == " M docs/d.md\n"
