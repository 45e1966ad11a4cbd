"""During a conflicted merge the read-only commands answer (status, diff, resume, list,
show, log) and a save refuses in one line, the index untouched."""

from __future__ import annotations

from ..conftest import Repo
from ..helpers import state


def _conflicted_merge(repo: Repo) -> None:
    repo.git("checkout", "-qb", "other")
    repo.write("src/app.py", "print('theirs')\n")
    repo.commit_all("theirs")
    repo.git("checkout", "-q", "main")
    repo.write("src/app.py", "print('ours')\n")
    repo.commit_all("ours")
    repo.cp("save", "-m", "before the merge")
    repo.git("merge", "-q", "other", check=False)
    assert repo.git("ls-files", "-u")  # conflicted


def test_read_only_commands_work_during_a_conflicted_merge(repo: Repo) -> None:
    _conflicted_merge(repo)
    before = state(repo), repo.git("ls-files", "-s", "--stage")
    assert repo.cp_json("status")["drift"] == ["src/app.py"]
    assert [f["path"] for f in repo.cp_json("diff")["files"]] == ["src/app.py"]
    assert repo.cp_json("resume")["files_under_active_edit"] == ["src/app.py"]
    for command in (["list"], ["show"], ["log"]):
        repo.cp(*command)
    proc = repo.cp("save", expect=3)
    assert "unmerged" in proc.stderr and len(proc.stderr.splitlines()) == 1
    assert (state(repo), repo.git("ls-files", "-s", "--stage")) == before  # index untouched
