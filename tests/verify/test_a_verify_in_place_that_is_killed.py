"""An older checkpoint verified in place (the verifiers' Python imports the work tree)
puts that checkpoint over the workspace while the verifiers run. If the verifying
process is killed there (SIGKILL: an agent harness's timeout, the OOM killer), every
later command says so and names a way back that gives the user's work back: undo after
the verifiers were cut off, `restore --continue` while the work was being put back, and
never an undo of something else; the warning stays until the workspace is chosen again
(a restore of some paths does not choose it)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from ..conftest import Repo, make_repo
from ..helpers import configure, verifier

KILLING_GIT = Path(__file__).parent.parent / "restore" / "served_git"
WAY_BACK = re.compile(r"`git checkpoint (restore \S+ --move-head)` puts it back")


def _user_site() -> Path:
    out = subprocess.run(
        [sys.executable, "-c", "import site; print(site.getusersitepackages())"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return Path(out.stdout.strip())


def _setup(repo: Repo, command: str = "true") -> str:
    """cp_001 (old), a commit of the user's, then their work saved as cp_002, and an
    editable install of the work tree as pip writes it; HEAD."""
    configure(repo, verifier("check", command))
    repo.write("app.txt", "old\n")
    repo.cp("save", "-m", "old")  # cp_001
    repo.write("app.txt", "the user's commit\n")
    head = repo.commit_all("the user's commit")
    repo.write("app.txt", "the user's new work\n")
    repo.write("new.txt", "new file\n")
    repo.cp("save", "-m", "new")  # cp_002
    site = _user_site()
    site.mkdir(parents=True, exist_ok=True)
    (site / "work.pth").write_text(f"{repo.path}\n")
    return head


def _work_is_back(repo: Repo, head: str) -> None:
    assert (repo.path / "app.txt").read_text() == "the user's new work\n"
    assert (repo.path / "new.txt").read_text() == "new file\n"
    assert repo.git("rev-parse", "HEAD").strip() == head
    again = repo.cp("status")
    assert "in place" not in again.stdout + again.stderr


def _killed_while_verifying(repo: Repo, tmp_path: Path) -> str:
    """`verify cp_001` put in place over the user's work and SIGKILLed while its verifier
    runs; HEAD as the user had it."""
    started = tmp_path / "verifier-started"
    head = _setup(repo, f"echo $$ > {started}; exec sleep 60")
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
    return head


def _verify(repo: Repo, tmp: Path, kill_at: int = 0) -> list[str]:
    """`verify cp_001` run directly, killed (SIGKILL) before git call `kill_at` (0:
    never); the git calls it made."""
    counter = tmp / f"calls-{kill_at}"
    env = {
        **os.environ,
        "PATH": f"{KILLING_GIT}{os.pathsep}{os.environ['PATH']}",
        "FI_REAL_GIT": shutil.which("git") or "git",
        "FI_COUNTER": str(counter),
        "FI_KILL_AT": str(kill_at),
        "FI_TARGET": "worker",
    }
    subprocess.run(
        ["git-checkpoint", "verify", "cp_001"], cwd=repo.path, env=env,
        capture_output=True, check=False, timeout=120,
    )  # fmt: skip
    return Path(f"{counter}.log").read_text().splitlines()


def _probe(tmp: Path) -> list[str]:
    """The git calls of a verify in place of the same shape, not killed."""
    probe = make_repo(tmp / "probe")
    probe.write("README.md", "# project\n")
    probe.write("src/app.py", "print('hello')\n")
    probe.write(".gitignore", "*.log\nnode_modules/\n")
    probe.commit_all("initial")
    _setup(probe)
    return _verify(probe, tmp)


def _call(calls: list[str], starting: str, nth: int = 1) -> int:
    found = [i + 1 for i, c in enumerate(calls) if c.startswith(starting)]
    return found[nth - 1]


def test_a_verify_killed_in_place_is_named_by_the_next_command(repo: Repo, tmp_path: Path) -> None:
    head = _killed_while_verifying(repo, tmp_path)
    status = repo.cp("status")
    said = status.stdout + status.stderr
    way_back = WAY_BACK.search(said)
    assert "cp_001" in said and way_back, said
    repo.cp(*way_back.group(1).split())
    _work_is_back(repo, head)


def test_undo_after_a_verify_killed_in_place_gives_the_work_back(
    repo: Repo, tmp_path: Path
) -> None:
    head = _killed_while_verifying(repo, tmp_path)
    repo.cp("undo")
    _work_is_back(repo, head)


def test_a_path_restore_after_a_killed_in_place_verify_keeps_its_warning(
    repo: Repo, tmp_path: Path
) -> None:
    _killed_while_verifying(repo, tmp_path)
    repo.cp("restore", "cp_003", "--", "new.txt")  # cp_003: the verify's safety checkpoint
    assert (repo.path / "app.txt").read_text() == "old\n"  # still cp_001's
    said = repo.cp("status").stderr
    assert "in place" in said and WAY_BACK.search(said), said


def test_a_verify_killed_while_putting_the_work_back_names_continue(
    repo: Repo, tmp_path: Path
) -> None:
    calls = _probe(tmp_path)  # where the put-back moves HEAD, in a verify of the same shape
    put_back = _call(calls, "update-ref -m checkpoint: restore", 2)
    head = _setup(repo)
    _verify(repo, tmp_path, kill_at=put_back + 1)  # HEAD moved back, files not yet
    said = repo.cp("status").stderr
    assert "`git checkpoint restore --continue` finishes that" in said, said
    assert "undo" not in said, said  # (undo would go back to what the verifiers left)
    repo.cp("restore", "--continue")
    _work_is_back(repo, head)


def test_an_undo_of_the_interrupted_putting_back_still_names_the_way_to_the_work(
    repo: Repo, tmp_path: Path
) -> None:
    calls = _probe(tmp_path)
    put_back = _call(calls, "update-ref -m checkpoint: restore", 2)
    head = _setup(repo)
    _verify(repo, tmp_path, kill_at=put_back + 1)
    repo.cp("undo")  # back to what the verifiers left, not to the work
    said = repo.cp("status").stderr
    way_back = WAY_BACK.search(said)
    assert way_back, said
    repo.cp(*way_back.group(1).split())
    _work_is_back(repo, head)


def test_a_verify_killed_before_it_changed_anything_does_not_send_undo_elsewhere(
    repo: Repo, tmp_path: Path
) -> None:
    calls = _probe(tmp_path)
    first_save = _call(calls, "update-ref --create-reflog -m checkpoint: save")
    head = _setup(repo)
    repo.cp("restore", "cp_001", "--move-head")  # earlier restores of the user's own
    repo.cp("undo")
    _verify(repo, tmp_path, kill_at=first_save)  # before its safety checkpoint
    assert (repo.path / "app.txt").read_text() == "the user's new work\n"  # untouched
    said = repo.cp("status").stderr
    assert "in place" not in said, said
    assert "undo" not in said, said
    assert repo.git("rev-parse", "HEAD").strip() == head
