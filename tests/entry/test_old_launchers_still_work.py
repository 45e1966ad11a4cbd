"""Launchers written by an older install.sh import `git_checkpoint.launch:main` and
`git_checkpoint.hook:main` under `python -IS` (no site machinery, the package and its
dependencies put on sys.path by hand); `python -m git_checkpoint` runs the CLI. Each
must still save, restore, undo and hook."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import git_checkpoint

from ..conftest import Repo


def old_launcher(folder: Path, name: str, module: str) -> Path:
    paths = [os.path.dirname(os.path.dirname(git_checkpoint.__file__))]
    for key in ("purelib", "platlib"):
        if sysconfig.get_path(key) not in paths:
            paths.append(sysconfig.get_path(key))
    folder.mkdir(exist_ok=True)
    target = folder / name
    target.write_text(
        f"#!{sys.executable} -IS\n"
        f"import sys\nsys.path += {paths!r}\nfrom git_checkpoint.{module} import main\nmain()\n"
    )
    target.chmod(0o755)
    return target


@pytest.fixture
def launchers(tmp_path: Path) -> dict[str, str]:
    folder = tmp_path / "oldbin"
    old_launcher(folder, "git-checkpoint", "launch")
    old_launcher(folder, "git-checkpoint-hook", "hook")
    return {"PATH": f"{folder}{os.pathsep}{os.environ['PATH']}"}


def test_an_old_launcher_saves_restores_and_undoes(repo: Repo, launchers: dict[str, str]) -> None:
    repo.write("src/app.py", "print('one')\n")
    out = repo.cp("save", "-m", "one", env=launchers).stdout
    assert "checkpoint saved: cp_001" in out
    repo.write("src/app.py", "print('two')\n")
    assert "unchanged" not in repo.cp("save", "--json", env=launchers).stdout
    repo.cp("restore", "cp_001", env=launchers)
    assert (repo.path / "src/app.py").read_text() == "print('one')\n"
    repo.cp("undo", env=launchers)
    assert (repo.path / "src/app.py").read_text() == "print('two')\n"
    repo.cp("list", env=launchers)
    repo.cp("save", "-m", "-dashed", env=launchers)


def test_an_old_hook_launcher_saves_a_risky_call(repo: Repo, launchers: dict[str, str]) -> None:
    repo.write("src/app.py", "print('edited')\n")
    payload = {"tool_name": "Bash", "tool_input": {"command": "rm -rf src"}, "cwd": str(repo.path)}
    proc = subprocess.run(
        ["git-checkpoint-hook", "claude-code", "PreToolUse"], input=json.dumps(payload),
        capture_output=True, text=True, cwd=repo.path, env={**os.environ, **launchers},
        check=False, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "checkpoint saved: cp_001" in proc.stderr, proc.stderr
    proc = subprocess.run(
        ["git-checkpoint-hook", "gemini-cli", "BeforeTool"], input=json.dumps(payload),
        capture_output=True, text=True, cwd=repo.path, env={**os.environ, **launchers},
        check=False, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0 and proc.stdout.strip() == "{}", (proc.stdout, proc.stderr)


def test_python_dash_m_runs_every_common_verb(repo: Repo) -> None:
    def pm(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "git_checkpoint", *args], cwd=repo.path,
            capture_output=True, text=True, check=False, timeout=60,
        )  # fmt: skip

    repo.write("src/app.py", "print('one')\n")
    assert pm("save", "-m", "one").returncode == 0
    assert pm("--version").returncode == 0
    repo.write("src/app.py", "print('two')\n")
    assert pm("restore").returncode == 0
    assert (repo.path / "src/app.py").read_text() == "print('one')\n"
    listed = pm("list", "--json")
    assert listed.returncode == 0 and json.loads(listed.stdout)
    bad = pm("restore", "cp_404", "--json")
    assert bad.returncode == 2 and json.loads(bad.stdout)["exit_code"] == 2
