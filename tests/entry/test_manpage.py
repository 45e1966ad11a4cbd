"""The man page is generated from the click commands (so every command and option is
in it), and the copy the distribution ships is the page the commands make today.
(`git help checkpoint` after each installer: tests/install and .ci/install-matrix.)"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import click
import pytest

from git_checkpoint.entry.cli import cli
from git_checkpoint.entry.manpage import SHARED, render

ROOT = Path(__file__).resolve().parents[2]


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


REGENERATE = (
    "python -m git_checkpoint.entry.manpage share/man/man1/git-checkpoint.1 && "
    "python -m git_checkpoint completion bash > "
    "share/bash-completion/completions/git-checkpoint && "
    "python -m git_checkpoint completion zsh > share/zsh/site-functions/_git-checkpoint"
)


def test_the_shipped_page_is_the_one_the_commands_make() -> None:
    shipped = (ROOT / SHARED).read_text(encoding="utf-8")
    assert shipped == render(cli), f"share/ is out of date; from the repository root: {REGENERATE}"
