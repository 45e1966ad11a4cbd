"""Under a `.checkpoint.yaml` that cannot be read, a restore leaves untracked files the
target lacks where they are. A restore killed part way and finished with --continue
under the same configuration leaves them too."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from ..conftest import Repo

KILLING_GIT = Path(__file__).parent / "served_git"


def _restore(repo: Repo, counter: Path, kill_at: int) -> list[str]:
    """`restore cp_001 --move-head` run directly, SIGKILLed at git call `kill_at` (0:
    never); the git calls it made."""
    for leftover in (counter, Path(f"{counter}.log")):
        leftover.unlink(missing_ok=True)
    env = {
        **os.environ,
        "PATH": f"{KILLING_GIT}{os.pathsep}{os.environ['PATH']}",
        "FI_REAL_GIT": shutil.which("git") or "git",
        "FI_COUNTER": str(counter),
        "FI_TARGET": "worker",
        "FI_KILL_AT": str(kill_at),
        "GIT_CHECKPOINT_SERVER": "off",
    }
    subprocess.run(
        ["git-checkpoint", "restore", "cp_001", "--move-head"], cwd=repo.path, env=env,
        capture_output=True, check=False, timeout=120,
    )  # fmt: skip
    return Path(f"{counter}.log").read_text().splitlines()


def test_restore_continue_under_an_unreadable_config_keeps_untracked_files(
    repo: Repo, tmp_path: Path
) -> None:
    repo.cp("save", "-m", "one")  # cp_001
    repo.write("src/app.py", "print('two')\n")
    repo.commit_all("two")
    repo.write("untracked.txt", "mine\n")
    repo.write(".checkpoint.yaml", "exclude: [\n")  # a YAML error
    counter = tmp_path / "calls"
    calls = _restore(repo, counter, 0)  # whole: it keeps them
    assert (repo.path / "untracked.txt").read_text() == "mine\n"
    repo.cp("undo")
    assert (repo.path / "untracked.txt").read_text() == "mine\n"
    # killed as HEAD moves: its safety checkpoint and journal are written, no file yet
    head_moves = next(i + 1 for i, c in enumerate(calls) if c.startswith("update-ref -m"))
    _restore(repo, counter, head_moves)
    assert (repo.path / ".git" / "checkpoint" / "restore-journal.json").exists()
    proc = repo.cp("restore", "--continue")
    assert (repo.path / "untracked.txt").read_text() == "mine\n", proc.stdout
    assert (repo.path / ".checkpoint.yaml").read_text() == "exclude: [\n"
    assert "untracked.txt" in proc.stderr and "could not be read" in proc.stderr, proc.stderr
    assert (repo.path / "src/app.py").read_text() != "print('two')\n"  # the rest came back
