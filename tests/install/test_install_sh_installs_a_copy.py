"""`./install.sh` run from a clone installs a copy of it into a fresh HOME: the commands
run the venv's package (an edit of the clone changes nothing until the next install),
the shell guard's line names the installed file, and `git help checkpoint`, `git
checkpoint --help` and tab completion find what it installed, as git users expect."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .test_wheel_is_the_whole_tool import REAL_PIP_CACHE, copy_checkout


@pytest.mark.timeout(900)
def test_install_sh_installs_a_copy_in_a_fresh_home(tmp_path: Path) -> None:
    checkout = copy_checkout(tmp_path / "checkout")
    home, data, bin_dir = tmp_path / "home", tmp_path / "data", tmp_path / "tools" / "bin"
    home.mkdir()
    # Where an older install.sh copied the shell guard, which an rc file may source.
    (data / "hooks" / "shell").mkdir(parents=True)
    (data / "hooks" / "shell" / "git-checkpoint-guard.sh").write_text("# an older copy\n")
    python_dir = str(Path(sys.executable).resolve().parent)
    env = {
        "HOME": str(home),
        "PATH": os.pathsep.join([str(bin_dir), python_dir, "/usr/bin", "/bin"]),
        "GIT_CHECKPOINT_HOME": str(data),
        "GIT_CHECKPOINT_BIN": str(bin_dir),
        "PIP_CACHE_DIR": str(REAL_PIP_CACHE),
        "PYTHON": sys.executable,
        "GIT_CONFIG_NOSYSTEM": "1",
        "LANG": "C.UTF-8",
        "GIT_CHECKPOINT_SERVER_IDLE": "5",  # its command server goes soon after the test
    }
    install = subprocess.run(
        ["./install.sh"], cwd=checkout, env=env, capture_output=True, text=True, timeout=840
    )
    assert install.returncode == 0, install.stdout + install.stderr

    def run(*argv: str, cwd: Path = tmp_path) -> subprocess.CompletedProcess[str]:
        viewer = {**env, "MANPAGER": "cat", "PAGER": "cat", "MANWIDTH": "100"}
        proc = subprocess.run(argv, cwd=cwd, env=viewer, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        return proc

    # A copy: the Python launchers name the venv's site-packages only, so editing the
    # clone changes nothing that runs; the commands on PATH are the client compiled for
    # this installation (gcc is on every machine the tests run on), which runs them.
    (site,) = (data / "venv").glob("lib/python*/site-packages")
    for name in ("git-checkpoint", "git-checkpoint-hook"):
        launcher = (data / "libexec" / name).read_text()
        assert launcher.startswith(f"#!{data}/venv/bin/python -IS\n")
        assert str(checkout) not in launcher and str(site) in launcher
        client = (data / "bin" / name).read_bytes()
        assert client.startswith(b"\x7fELF"), install.stdout
        assert f"{data}/libexec/".encode() in client and str(checkout).encode() not in client
    assert (data / "bin" / "git-checkpoint").samefile(data / "bin" / "git-checkpoint-hook")
    version = run("git", "checkpoint", "--version").stdout
    init = checkout / "git_checkpoint" / "__init__.py"
    init.write_text(init.read_text().replace('__version__ = "', '__version__ = "9.9.9+'))
    assert run("git", "checkpoint", "--version").stdout == version

    templates = site / "git_checkpoint" / "install" / "templates"
    line = run("git", "checkpoint", "hooks", "install", "--shell").stdout.splitlines()[-1]
    assert line.strip() == f". {templates}/shell/git-checkpoint-guard.sh"
    assert (data / "hooks").resolve() == templates.resolve()  # the older path: the new file
    work = tmp_path / "work"
    run("git", "init", "-q", str(work))
    run("git", "checkpoint", "hooks", "install", "--git", cwd=work)
    hook = (work / ".git" / "hooks" / "pre-rebase").read_bytes()
    assert hook == (templates / "git" / "pre-rebase").read_bytes()

    page = tmp_path / "tools" / "share" / "man" / "man1" / "git-checkpoint.1"
    assert page.read_bytes() == (checkout / "share/man/man1/git-checkpoint.1").read_bytes()
    completion = home / ".local/share/bash-completion/completions/git-checkpoint"
    assert "_git_checkpoint ()" in completion.read_text()
    assert (home / ".local/share/zsh/site-functions/_git-checkpoint").exists()
    if shutil.which("man") is None:
        return  # (the page is in place; without man there is nothing to open it)
    assert "MANPATH" not in install.stdout  # found without the user setting anything
    assert run("man", "-w", "git-checkpoint").stdout.strip() == str(page)
    for argv in (["git", "help", "checkpoint"], ["git", "checkpoint", "--help"]):
        shown = run(*argv).stdout
        assert "GIT-CHECKPOINT(1)" in shown and "git checkpoint prune" in shown
