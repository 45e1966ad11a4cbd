"""The wheel is the whole tool: it carries the hook templates as package data and the man
page and completion scripts as data files for the environment's `share/`, so a plain
`pip install` of it (as pipx and uv tool make) installs git hooks, prints the shell
guard's line into its own environment, and passes doctor, with nothing from install.sh."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from git_checkpoint.entry.cli import cli
from git_checkpoint.entry.completion import SHARED, bash_script
from git_checkpoint.entry.manpage import SHARED as MAN_PAGE
from git_checkpoint.install.git_hooks import GIT_HOOKS, templates_dir

ROOT = Path(__file__).resolve().parents[2]
REAL_PIP_CACHE = Path.home() / ".cache" / "pip"  # read before the hermetic seal moves HOME
SHARED_FILES = [MAN_PAGE, *SHARED.values()]
TEMPLATES = [f"git/{name}" for name in GIT_HOOKS] + ["shell/git-checkpoint-guard.sh"]


def copy_checkout(target: Path) -> Path:
    """The checkout as it is (uncommitted work included), without build residue: a build
    in the checkout itself would leave its build/ there, and ship an older one's."""
    skip = (".git", "*.egg-info", "build", "dist", "__pycache__", ".*_cache", ".hypothesis")
    shutil.copytree(ROOT, target, symlinks=True, ignore=shutil.ignore_patterns(*skip))
    return target


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    work = tmp_path_factory.mktemp("wheel")
    source = copy_checkout(work / "checkout")
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(work / "dist"),
         str(source)],
        capture_output=True, text=True, timeout=600, check=False,
        env={**os.environ, "PIP_CACHE_DIR": str(REAL_PIP_CACHE)},
    )  # fmt: skip
    if built.returncode != 0 and "No matching distribution" in built.stderr:
        pytest.skip(f"no package index for the build backend: {built.stderr[-300:]}")
    assert built.returncode == 0, built.stderr
    (found,) = (work / "dist").glob("*.whl")
    return found


def test_the_wheel_carries_templates_man_page_and_completions(wheel: Path) -> None:
    assert wheel.name.startswith("git_agent_checkpoint-")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        for rel in TEMPLATES:
            member = f"git_checkpoint/install/templates/{rel}"
            assert member in names, sorted(names)
            assert archive.read(member) == (templates_dir() / rel).read_bytes()
        data = wheel.name.split("-py3")[0] + ".data/data/"
        for rel in SHARED_FILES:
            assert data + rel in names, sorted(n for n in names if ".data/" in n)
            assert archive.read(data + rel) == (ROOT / rel).read_bytes()


def run(argv: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
    )


@pytest.fixture(scope="module")
def venv(wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh venv with the wheel installed. Its dependencies come from this Python's
    site-packages through a .pth line (no package index needed); the package itself, its
    data and its metadata are the wheel's alone, as the venv's own site-packages precede."""
    target = tmp_path_factory.mktemp("venv") / "env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(target)], check=True)
    python = target / "bin" / "python"
    purelib = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    deps = {sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}
    Path(purelib, "dependencies.pth").write_text("".join(f"{d}\n" for d in sorted(deps)))
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "-q",
         str(wheel)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr
    return target


def test_a_venv_install_of_the_wheel_is_the_whole_tool(venv: Path, tmp_path: Path) -> None:
    for rel in SHARED_FILES:
        assert (venv / rel).is_file(), rel
    env = {**os.environ, "PATH": f"{venv / 'bin'}{os.pathsep}/usr/bin:/bin"}
    work = tmp_path / "work"
    work.mkdir()
    assert run(["git", "init", "-q"], work, env).returncode == 0
    assert run(["git", "commit", "-q", "--allow-empty", "-m", "one"], work, env).returncode == 0

    installed = run(["git", "checkpoint", "hooks", "install", "--git"], work, env)
    assert installed.returncode == 0, installed.stderr
    (site,) = venv.glob("lib/python*/site-packages")
    templates = site / "git_checkpoint" / "install" / "templates"
    for name in GIT_HOOKS:
        assert (work / ".git/hooks" / name).read_bytes() == (templates / "git" / name).read_bytes()
    status = run(["git", "checkpoint", "hooks", "status", "--git"], work, env)
    assert status.returncode == 0 and "pre-rebase installed" in status.stdout, status.stderr

    shell = run(["git", "checkpoint", "hooks", "install", "--shell"], work, env)
    assert shell.returncode == 0, shell.stderr
    guard = templates / "shell" / "git-checkpoint-guard.sh"
    assert shell.stdout.splitlines()[-1].strip() == f". {guard}"

    doctor = run(["git", "checkpoint", "doctor"], work, env)
    assert doctor.returncode == 0 and "FAIL" not in doctor.stdout, doctor.stdout
    assert f"ok    install: pip in {venv}" in doctor.stdout

    completion = run(["git", "checkpoint", "completion", "bash"], work, env)
    assert completion.returncode == 0 and completion.stdout == bash_script(cli)
