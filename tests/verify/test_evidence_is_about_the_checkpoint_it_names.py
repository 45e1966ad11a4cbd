"""Evidence is about the checkpoint it is recorded on. A project installed in editable
mode (`pip install -e .` of a `src/` package) makes its Python import the main work
tree from any folder: verifying an older checkpoint in a temporary worktree would test
the workspace's code. Then the checkpoint is verified in place (restored over the
workspace, verified, the workspace put back byte for byte), never in the worktree."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import Repo
from ..helpers import fingerprint

GOOD = "def answer():\n    return 42\n"
BROKEN = "def answer(:\n    return 42\n"
PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "mypkg"
version = "0.1"

[tool.setuptools.packages.find]
where = ["src"]
"""
CHECK = "import mypkg, sys; sys.exit(0 if mypkg.answer() == 42 else 1)"


def editable(repo: Repo, venv: Path) -> dict[str, str]:
    """A virtualenv at `venv` with the repository's package installed in editable mode;
    the environment that has it first on PATH."""
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    installed = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "-q", "-e", str(repo.path)],
        capture_output=True, text=True, cwd=repo.path, check=False, timeout=300,
    )  # fmt: skip
    if installed.returncode != 0:  # (pip builds it with setuptools from the package index)
        pytest.skip(f"pip install -e failed, no package index? {installed.stderr[-300:]}")
    return {"PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}", "VIRTUAL_ENV": str(venv)}


@pytest.fixture
def project(repo: Repo) -> Repo:
    repo.write("pyproject.toml", PYPROJECT)
    repo.write("src/mypkg/__init__.py", GOOD)
    repo.write(
        ".checkpoint.yaml",
        f"verifiers:\n  - {{name: answer, command: 'python -c \"{CHECK}\"'}}\n",
    )
    repo.write(".gitignore", "*.egg-info/\n__pycache__/\n")
    repo.commit_all("a package")
    return repo


@pytest.mark.parametrize("where", ["outside", "inside"])
def test_an_older_broken_checkpoint_is_verified_in_place_and_rejected(
    project: Repo, tmp_path: Path, where: str
) -> None:
    venv = tmp_path / "venv" if where == "outside" else project.path / ".venv"
    env = editable(project, venv)
    project.cp("save", "-m", "good")  # cp_001
    project.write("src/mypkg/__init__.py", BROKEN)
    project.cp("save", "-m", "broken")  # cp_002
    project.write("src/mypkg/__init__.py", GOOD + "# and more\n")
    before = fingerprint(project.path, skip=(".git", ".venv", "src/mypkg.egg-info"))
    head = project.git("rev-parse", "HEAD")
    proc = project.cp("verify", "cp_002", expect=1, env=env)
    out = proc.stdout + proc.stderr
    assert "imports this work tree's code" in out and "verifying main/cp_002 in place" in out
    assert "status: main/cp_002 rejected" in proc.stdout
    after = fingerprint(project.path, skip=(".git", ".venv", "src/mypkg.egg-info"))
    assert after == before  # put back, byte for byte
    assert project.git("rev-parse", "HEAD") == head


def test_a_good_older_checkpoint_is_promoted_on_its_own_code(project: Repo, tmp_path: Path) -> None:
    env = editable(project, tmp_path / "venv")
    project.cp("save", "-m", "good")  # cp_001
    project.write("src/mypkg/__init__.py", BROKEN)  # the workspace is broken now
    proc = project.cp("verify", "cp_001", env=env)
    assert "status: main/cp_001 promoted" in proc.stdout
    assert (project.path / "src/mypkg/__init__.py").read_text() == BROKEN


def test_without_an_editable_install_the_temporary_worktree_is_used(
    project: Repo, tmp_path: Path
) -> None:
    env = {"PYTHONPATH": "src"}  # relative: in the worktree, the worktree's own code
    project.cp("save", "-m", "good")
    project.write("src/mypkg/__init__.py", BROKEN)
    project.cp("save", "-m", "broken")
    project.write("src/mypkg/__init__.py", GOOD)
    proc = project.cp("verify", "cp_002", expect=1, env=env)
    assert "verifying main/cp_002 in a temporary worktree" in proc.stdout + proc.stderr
    assert "status: main/cp_002 rejected" in proc.stdout
