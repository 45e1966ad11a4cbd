"""The man page is generated from the click commands (so every command and option is
in it), and after install.sh in a fresh HOME `git help checkpoint` and
`git checkpoint --help` find it, as git users expect."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import click
import pytest

from git_checkpoint.entry.cli import cli
from git_checkpoint.entry.manpage import render

ROOT = Path(__file__).resolve().parents[2]


REAL_PIP_CACHE = Path.home() / ".cache" / "pip"  # read before the hermetic seal moves HOME


def walk(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    out = []
    for name, command in group.commands.items():
        if isinstance(command, click.Group):
            out += walk(command, f"{prefix}{name} ")
        elif not command.hidden:
            out.append((f"{prefix}{name}", command))
    return out


def test_every_command_and_option_is_in_the_page() -> None:
    page = render(cli).replace("\\-", "-")
    for name, command in walk(cli):
        assert f"git checkpoint {name} " in page or f"git checkpoint {name}\\fR" in page, name
        for param in command.params:
            if isinstance(param, click.Option):
                for flag in param.opts + param.secondary_opts:
                    assert flag in page, f"{name} {flag}"
    for code in "01234":
        assert f"\\fB{code}\\fR" in page
    assert page.startswith(".TH GIT-CHECKPOINT 1")


def test_page_renders_with_man(tmp_path: Path) -> None:
    if shutil.which("man") is None:
        pytest.skip("man is not installed")
    page = tmp_path / "git-checkpoint.1"
    page.write_text(render(cli))
    out = subprocess.run(
        ["man", "-l", str(page)],
        capture_output=True,
        text=True,
        env={**os.environ, "MANPAGER": "cat", "MANWIDTH": "100"},
        check=True,
    ).stdout
    out = " ".join(out.split())  # man justifies lines with extra spaces
    assert "git-checkpoint - Checkpoints for AI coding agents" in out
    assert "git checkpoint restore [OPTIONS] [CHECKPOINT]" in out


def copy_checkout(target: Path) -> Path:
    """The checkout as it is (uncommitted work included), without build residue."""
    shutil.copytree(
        ROOT,
        target,
        ignore=shutil.ignore_patterns(
            ".git", "*.egg-info", "build", "dist", "__pycache__", ".*_cache", ".hypothesis"
        ),
    )
    return target


@pytest.mark.timeout(600)
def test_git_help_finds_the_page_after_install_in_a_fresh_home(tmp_path: Path) -> None:
    if shutil.which("man") is None:
        pytest.skip("man is not installed")
    checkout = copy_checkout(tmp_path / "checkout")
    home = tmp_path / "home"
    home.mkdir()
    bin_dir = tmp_path / "tools" / "bin"
    python_dir = str(Path(sys.executable).resolve().parent)
    env = {
        "HOME": str(home),
        "PATH": os.pathsep.join([str(bin_dir), python_dir, "/usr/local/bin", "/usr/bin", "/bin"]),
        "GIT_CHECKPOINT_HOME": str(tmp_path / "data"),
        "GIT_CHECKPOINT_BIN": str(bin_dir),
        "PIP_CACHE_DIR": str(REAL_PIP_CACHE),
        "PYTHON": sys.executable,
        "GIT_CONFIG_NOSYSTEM": "1",
        "LANG": "C.UTF-8",
    }
    install = subprocess.run(
        ["./install.sh"], cwd=checkout, env=env, capture_output=True, text=True, timeout=540
    )
    assert install.returncode == 0, install.stdout + install.stderr
    page = tmp_path / "tools" / "share" / "man" / "man1" / "git-checkpoint.1"
    assert page.exists(), install.stdout
    assert "MANPATH" not in install.stdout  # found without the user setting anything

    viewer = {**env, "MANPAGER": "cat", "PAGER": "cat", "MANWIDTH": "100"}
    found = subprocess.run(
        ["man", "-w", "git-checkpoint"], env=viewer, capture_output=True, text=True
    )
    assert found.stdout.strip() == str(page)
    for argv in (["git", "help", "checkpoint"], ["git", "checkpoint", "--help"]):
        shown = subprocess.run(argv, env=viewer, capture_output=True, text=True, cwd=tmp_path)
        assert shown.returncode == 0, shown.stderr
        assert "GIT-CHECKPOINT(1)" in shown.stdout and "git checkpoint prune" in shown.stdout
    completion = home / ".local/share/bash-completion/completions/git-checkpoint"
    assert "_git_checkpoint ()" in completion.read_text()
    assert (home / ".local/share/zsh/site-functions/_git-checkpoint").exists()


def test_examples_name_real_commands_and_options() -> None:
    from git_checkpoint.entry.manpage import EXAMPLES

    for example, _ in EXAMPLES:
        words = example.split()
        command = cli.commands[words[2]]
        for word in words[3:]:
            if word == "--":
                break
            if word.startswith("-"):
                flags = [f for p in command.params for f in getattr(p, "opts", [])]
                assert word in flags, example
