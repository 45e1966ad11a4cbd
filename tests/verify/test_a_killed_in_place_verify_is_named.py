"""An older checkpoint verified in place (the verifiers' Python imports the work tree)
puts that checkpoint over the workspace while the verifiers run. If the verifying
process dies there (SIGKILL: an agent harness's timeout, the OOM killer), the
workspace holds the old checkpoint, not the user's work: the next command says so and
names the way back."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from ..conftest import Repo
from ..helpers import configure, verifier


def _user_site() -> Path:
    out = subprocess.run(
        [sys.executable, "-c", "import site; print(site.getusersitepackages())"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return Path(out.stdout.strip())


def test_a_verify_killed_in_place_is_named_by_the_next_command(repo: Repo, tmp_path: Path) -> None:
    started = tmp_path / "verifier-started"
    configure(repo, verifier("slow", f"echo $$ > {started}; exec sleep 60"))
    repo.write("app.txt", "old\n")
    repo.cp("save", "-m", "old")  # cp_001
    repo.write("app.txt", "the user's commit\n")
    head = repo.commit_all("the user's commit")
    repo.write("app.txt", "the user's new work\n")
    repo.write("new.txt", "new file\n")
    repo.cp("save", "-m", "new")  # cp_002
    site = _user_site()  # an editable install of this work tree, as pip writes it
    site.mkdir(parents=True, exist_ok=True)
    (site / "work.pth").write_text(f"{repo.path}\n")
    proc = subprocess.Popen(
        ["git-checkpoint", "verify", "cp_001"],
        cwd=repo.path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not started.exists() or not started.read_text().strip():
            assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    finally:
        if started.exists() and started.read_text().strip():
            os.kill(int(started.read_text()), signal.SIGKILL)  # the orphaned verifier
    assert (repo.path / "app.txt").read_text() == "old\n"  # cp_001 is on disk now
    assert repo.git("rev-parse", "HEAD").strip() != head  # and main was moved back
    status = repo.cp("status")
    said = status.stdout + status.stderr
    assert "cp_001" in said and "undo" in said, said
    repo.cp("undo")
    assert (repo.path / "app.txt").read_text() == "the user's new work\n"
    assert (repo.path / "new.txt").read_text() == "new file\n"
    assert repo.git("rev-parse", "HEAD").strip() == head
    again = repo.cp("status")
    assert "in place" not in again.stdout + again.stderr
