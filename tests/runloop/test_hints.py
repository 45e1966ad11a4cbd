"""The hints a stopped run prints name the run's checkpoint and task, and are accepted
as printed: the restore that takes the workspace back (with --move-head when the agent
committed), or what is in the way instead of a restore that would be refused."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from ..conftest import Repo
from ..helpers import configure, state, verifier
from .conftest import interrupted_run


def restore_command(out: str) -> list[str]:
    found = re.search(r"^rollback point: \S+  \(`?(git checkpoint restore [^)`]*)", out, re.M)
    assert found, out
    return shlex.split(found.group(1))[2:]


def test_the_hint_names_the_runs_task_and_takes_the_workspace_back(
    repo: Repo, tmp_path: Path
) -> None:
    configure(repo, verifier("unit", "true"))
    repo.cp("save", "-m", "the branch's own checkpoint")  # main/cp_001
    repo.write("src/app.py", "print('later work')\n")
    repo.commit_all("later work")  # main/cp_001 is behind HEAD now
    before, head = state(repo), repo.git("rev-parse", "HEAD")
    work = "echo partial > src/app.py"
    proc = interrupted_run(repo, tmp_path, work, "--task", "fix2", "--attempts", "1")
    assert "rollback point: fix2/cp_001  (git checkpoint restore fix2/cp_001)\n" in proc.stdout
    repo.cp(*restore_command(proc.stdout))
    assert state(repo) == before
    assert repo.git("rev-parse", "HEAD") == head


def test_move_head_is_offered_when_the_agent_committed(repo: Repo, tmp_path: Path) -> None:
    configure(repo, verifier("unit", "true"))
    before, head = state(repo), repo.git("rev-parse", "HEAD")
    work = "echo partial > src/app.py; git commit -qam 'agent commit'"
    proc = interrupted_run(repo, tmp_path, work, "--task", "fix2", "--attempts", "1")
    hint = "rollback point: fix2/cp_001  (git checkpoint restore fix2/cp_001 --move-head)"
    assert hint in proc.stdout
    repo.cp(*restore_command(proc.stdout))
    assert state(repo) == before
    assert repo.git("rev-parse", "HEAD") == head


def test_a_merge_in_progress_is_named_instead_of_a_refused_restore(
    repo: Repo, tmp_path: Path
) -> None:
    configure(repo, verifier("unit", "true"))
    repo.git("switch", "-q", "-c", "other")
    repo.write("src/app.py", "print('other')\n")
    repo.commit_all("other")
    repo.git("switch", "-q", "main")
    work = "echo mine > src/app.py; git commit -qam mine; git merge -q other || true"
    proc = interrupted_run(repo, tmp_path, work, "--task", "fix2", "--attempts", "1")
    assert (
        "rollback point: fix2/cp_001  (`git checkpoint restore fix2/cp_001 --move-head` "
        "would be refused now: not restoring: a merge is in progress: finish or abort it "
        "first (git merge --continue / --abort))"
    ) in proc.stdout
    command = restore_command(proc.stdout)
    assert "a merge is in progress" in repo.cp(*command, expect=3).stderr
    repo.git("merge", "--abort")
    repo.cp(*command)


def test_another_branch_checked_out_is_named_instead_of_a_refused_restore(
    repo: Repo, tmp_path: Path
) -> None:
    configure(repo, verifier("unit", "true"))
    before = state(repo)
    work = "git switch -q -c other; echo elsewhere > src/app.py; git commit -qam elsewhere"
    proc = interrupted_run(repo, tmp_path, work, "--attempts", "1")  # the task of main
    # On branch other a bare cp_001 is other's: the hint names main's.
    assert "rollback point: main/cp_001  (`git checkpoint restore main/cp_001 --move-head`" in (
        proc.stdout
    )
    assert "was saved on branch 'main', not on branch 'other'" in proc.stdout
    assert "Switch first (git switch main)" in proc.stdout
    repo.git("switch", "-q", "main")
    repo.cp(*restore_command(proc.stdout))
    assert state(repo) == before


def test_an_overlay_refused_mid_run_names_the_rollback_point(repo: Repo) -> None:
    """`on_exceed: refuse` stops the loop at the attempt's save; the restore back is
    offered as it will be accepted (a restore leaves what the limits leave out)."""
    repo.write(
        ".checkpoint.yaml",
        "limits: {overlay_max_files: 3, on_exceed: refuse}\nverifiers:\n"
        + verifier("unit", "true"),
    )
    repo.commit_all("configure")
    work = "for i in 1 2 3 4 5 6; do echo $i > new-$i.txt; done"
    proc = repo.cp("run", "--task", "fix2", "--", "sh", "-c", work, expect=3)
    assert "stopped at attempt 1: the workspace holds that attempt" in proc.stdout
    assert "rollback point: fix2/cp_001  (git checkpoint restore fix2/cp_001)" in proc.stdout
    assert "overlay too large: 6 untracked files" in proc.stderr


def test_the_next_action_names_the_task_for_resume(repo: Repo) -> None:
    configure(repo, verifier("unit", "false"))
    proc = repo.cp("run", "--task", "fix2", "--attempts", "1", "--", "true", expect=1)
    assert "next action: read `git checkpoint resume --task fix2` and fix unit" in proc.stdout
    brief = repo.cp("resume", "--task", "fix2").stdout
    assert "last failing verifier: unit" in brief
    plain = repo.cp("run", "--attempts", "1", "--", "true", expect=1).stdout
    assert "next action: read `git checkpoint resume` and fix unit" in plain
