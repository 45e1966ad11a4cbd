"""`drop`: each name it is given, once, logged, with the command that brings the
checkpoint back; an unknown name drops nothing."""

from __future__ import annotations

import shlex
import subprocess

from ..conftest import Repo
from ..helpers import checkpoint_refs, one_line_error, rev


def test_drop_prints_the_undo_command(three: Repo) -> None:
    ref = "refs/checkpoints/main/cp_002"
    commit = rev(three, ref)
    out = three.cp("drop", "cp_002").stdout
    assert ref not in checkpoint_refs(three)
    assert f"git update-ref {ref} {commit}" in out
    undo = next(line for line in out.splitlines() if "git update-ref" in line)
    argv = shlex.split(undo[undo.index("git update-ref") :])
    subprocess.run(argv, cwd=three.path, check=True)
    assert rev(three, ref) == commit
    assert three.cp_json("show", "cp_002")["commit"] == commit


def test_drop_json_and_several_names(three: Repo) -> None:
    other = rev(three, "refs/checkpoints/other/cp_001")
    first = rev(three, "refs/checkpoints/main/cp_001")
    data = three.cp_json("drop", "other/cp_001", first[:9], "@")
    dropped = {d["ref"]: d["commit"] for d in data["dropped"]}
    assert set(dropped) == {
        "refs/checkpoints/other/cp_001",
        "refs/checkpoints/main/cp_001",
        "refs/checkpoints/main/cp_003",
    }
    assert dropped["refs/checkpoints/other/cp_001"] == other
    assert dropped["refs/checkpoints/main/cp_001"] == first
    assert checkpoint_refs(three) == ["refs/checkpoints/main/cp_002"]


def test_drop_with_an_unknown_name_drops_nothing(three: Repo) -> None:
    before = checkpoint_refs(three)
    proc = three.cp("drop", "cp_001", "cp_042", "cp_002", expect=2)
    assert "cp_042" in one_line_error(proc.stderr)
    assert checkpoint_refs(three) == before
    assert three.cp_json("log")["events"][0]["op"] == "save"


def test_drop_same_checkpoint_twice_in_one_call(three: Repo) -> None:
    data = three.cp_json("drop", "cp_001", "main/cp_001")
    assert len(data["dropped"]) == 1
    three.cp("drop", "cp_001", expect=2)


def test_drop_is_logged(three: Repo) -> None:
    commit = rev(three, "refs/checkpoints/main/cp_003")
    three.cp("drop", "@")
    event = three.cp_json("log")["events"][0]
    assert event["op"] == "drop"
    assert event["checkpoint"] == "cp_003"
    assert event["commit"] == commit
    assert three.cp_json("show", "@")["checkpoint_id"] == "cp_002"
