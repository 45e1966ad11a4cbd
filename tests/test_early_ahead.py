"""The launcher runs a save's first three git commands (where the repository is, its
config, the task's listing) beside the scan, and gitio.run_git takes their output: once
each, and never after this process has run any other git command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import Repo

# Runs in the repository: starts the early scan as the launcher would, then runs the
# git commands given as JSON lists through gitio.run_git and prints, for each, whether
# the launcher's child served it and what git said.
PROBE = """
import json, os, sys
from git_checkpoint import early, gitio
from git_checkpoint.gitfast import CONFIG_ARGV, DISCOVER_ARGV, REFS_FORMAT
early.start(["save"])
words = {"DISCOVER": list(DISCOVER_ARGV), "CONFIG": list(CONFIG_ARGV),
         "LISTING": ["for-each-ref", f"--format={REFS_FORMAT}", "refs/checkpoints/main/"]}
out = []
for step in json.loads(sys.argv[1]):
    argv = words.get(step[0], step)
    cwd = os.getcwd()
    served = (cwd, *argv) in early._AHEAD
    proc = gitio.run_git(argv, cwd, check=False)
    out.append([served, proc.returncode, proc.stdout.decode("utf-8", "replace")])
early.discard()
print(json.dumps(out))
"""


def probe(repo: Repo, steps: list[list[str]], cwd: Path | None = None) -> list[list[object]]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(steps)],
        cwd=cwd or repo.path,
        capture_output=True,
        text=True,
        env=os.environ,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    result: list[list[object]] = json.loads(proc.stdout)
    return result


def test_each_is_served_once_with_what_git_says(repo: Repo) -> None:
    repo.write("a.txt", "one\n")
    repo.cp("save", "-m", "first")
    first = probe(repo, [["DISCOVER"], ["CONFIG"], ["LISTING"], ["DISCOVER"]])
    assert [served for served, _, _ in first] == [True, True, True, False]
    # What each said is what git says when asked again.
    again = probe(repo, [["status", "--short"], ["DISCOVER"], ["CONFIG"], ["LISTING"]])
    assert [served for served, _, _ in again] == [False, False, False, False]
    assert [step[1:] for step in first[:3]] == [step[1:] for step in again[1:]]
    assert "refs/checkpoints/main/cp_001" in str(first[2][2])


def test_nothing_is_served_after_another_git_command(repo: Repo) -> None:
    """A ref written by this process itself (any git command other than the three) and
    the listing is asked again from git: never the one from before the write."""
    repo.write("a.txt", "one\n")
    repo.cp("save", "-m", "first")
    head = repo.git("rev-parse", "HEAD").strip()
    steps = [["DISCOVER"], ["update-ref", "refs/checkpoints/main/cp_009", head], ["LISTING"]]
    served, _, listing = zip(*probe(repo, steps), strict=True)
    assert served == (True, False, False)
    assert "refs/checkpoints/main/cp_009" in str(listing[2])


def test_a_failed_command_is_asked_again(repo: Repo) -> None:
    """A config git cannot read: the launcher's child fails (its message went nowhere),
    so run_git runs it itself and the save reports git's own message, exit 4."""
    config = repo.path / ".git" / "config"
    config.write_text(config.read_text() + "[broken\n")
    steps = [["DISCOVER"], ["CONFIG"]]
    (discover, config_step) = probe(repo, steps)
    assert discover[0] is True and config_step[1] not in (0, 1)
    failed = repo.cp("save", expect=None)
    assert failed.returncode != 0
    assert len(failed.stderr.strip().splitlines()) == 1 and "Traceback" not in failed.stderr


def test_from_a_subfolder(repo: Repo) -> None:
    """rev-parse runs where the command was started; the config and the listing at the
    top of the work tree: each served to the call that names the same folder."""
    repo.write("sub/deep/a.txt", "one\n")
    repo.cp("save", "-m", "first")
    sub = repo.path / "sub" / "deep"
    result = probe(repo, [["DISCOVER"]], cwd=sub)
    assert result[0][0] is True
    assert str(result[0][2]).splitlines()[0] == str(repo.path)
    saved = repo.cp("save", "-m", "second", cwd=sub, expect=None)
    assert saved.returncode == 0, saved.stderr


def test_another_task_costs_a_listing_and_nothing_else(repo: Repo) -> None:
    """A branch whose task name is not its own (a `cp_001` part), and --task: the listing
    run ahead is not the one asked for, and the save lists its own."""
    repo.write("a.txt", "one\n")
    repo.git("checkout", "-q", "-b", "feature/cp_001")
    assert repo.cp_json("save")["task"] == "feature/cp_001-"
    repo.write("a.txt", "two\n")
    assert repo.cp_json("save")["checkpoint_id"] == "cp_002"
    repo.write("a.txt", "three\n")
    assert repo.cp_json("save", "--task", "other")["checkpoint_id"] == "cp_001"
    repo.write("a.txt", "four\n")
    assert repo.cp_json("save", "--task", "other")["checkpoint_id"] == "cp_002"
