"""Shell completion, driven in real bash: git's own completion meets `git checkpoint`,
bash-completion lazy-loads our script from the user's data dir, and `_git_checkpoint`
completes subcommands, options, the choices an option or argument takes (agents,
formats, shells), task names, checkpoint names, remote names and agent session ids.
`git checkpoint completion bash|zsh` prints the scripts, and the copies the
distribution ships are the ones the commands make today."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from git_checkpoint.entry.cli import cli
from git_checkpoint.entry.completion import SHARED, bash_script, zsh_script

from ..conftest import Repo
from .test_manpage import REGENERATE, ROOT

BASH_COMPLETION = Path("/usr/share/bash-completion/bash_completion")


GIT_COMPLETION = Path("/usr/share/bash-completion/completions/git")


DRIVER = r"""
complete_line () {
	COMP_LINE="$1"; COMP_POINT=${#COMP_LINE}
	read -ra COMP_WORDS <<< "$COMP_LINE"
	[[ "$COMP_LINE" == *" " ]] && COMP_WORDS+=("")
	COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
	COMPREPLY=()
	__git_wrap__git_main
	echo "== $1"
	printf '%s\n' "${COMPREPLY[@]}" | sed 's/ *$//' | sort
}
"""


LINES = [
    "git checkpoint re",
    "git checkpoint restore --d",
    "git checkpoint show ",
    "git checkpoint list --task ",
    "git checkpoint prune --task=ot",
    "git checkpoint save -m ",
    "git checkpoint task ",
    "git checkpoint hooks install --agent ",
    "git checkpoint hooks uninstall --agent=c",
    "git checkpoint init --agent g",
    "git checkpoint hooks ",
    "git checkpoint push ",
    "git checkpoint push origin ",
    "git checkpoint push --task main ",
    "git checkpoint fetch ",
    "git checkpoint list --remote ",
    "git checkpoint list --session ",
    "git checkpoint restore --before-turn 1 --session ",
    "git checkpoint review --format ",
    "git checkpoint completion ",
    "git checkpoint diff cp_001 ",
    "git checkpoint diff cp_001 cp_002 ",
    "git checkpoint -P sh",
]


def drive(repo: Repo, home: Path, preamble: str) -> dict[str, list[str]]:
    script = preamble + DRIVER + "".join(f"complete_line {line!r}\n" for line in LINES)
    proc = subprocess.run(
        ["bash", "--norc", "--noprofile", "-c", script],
        cwd=repo.path,
        capture_output=True,
        text=True,
        env={"HOME": str(home), "PATH": "/usr/bin:/bin", "XDG_DATA_HOME": str(home / "data")},
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    answers: dict[str, list[str]] = {}
    current = ""
    for line in proc.stdout.splitlines():
        if line.startswith("== "):
            current = line[3:]
            answers[current] = []
        elif line:
            answers[current].append(line)
    return answers


AGENTS = ["claude-code", "codex", "cursor", "gemini-cli"]
SESSION = "3f2a9c1e-session"


@pytest.fixture
def saved(repo: Repo) -> Repo:
    repo.cp("save", "-m", "one")
    repo.write("src/app.py", "print(2)\n")
    repo.cp("save", "-m", "two")
    repo.cp("save", "--task", "other")
    fetched = repo.git("rev-parse", "refs/checkpoints/main/cp_001").strip()
    repo.git("update-ref", "refs/checkpoints/remotes/origin/main/cp_001", fetched)
    for remote in ("origin", "upstream"):
        repo.git("remote", "add", remote, f"https://example.invalid/{remote}.git")
    # a prompt the Claude Code hook recorded
    payload = {"session_id": SESSION, "cwd": str(repo.path), "prompt": "go"}
    subprocess.run(
        ["git-checkpoint-hook", "claude-code", "UserPromptSubmit"],
        input=json.dumps({**payload, "hook_event_name": "UserPromptSubmit"}),
        cwd=repo.path,
        text=True,
        check=True,
    )
    return repo


def check(answers: dict[str, list[str]]) -> None:
    assert {"restore", "resume"} <= set(answers["git checkpoint re"])
    assert answers["git checkpoint restore --d"] == ["--dry-run"]
    everyone = ["@", "@~1", "cp_001", "cp_002", "main/cp_001", "main/cp_002", "other/cp_001"]
    fetched = ["origin/main/cp_001"]  # by the name the commands take
    assert answers["git checkpoint show "] == sorted(everyone + fetched)
    assert answers["git checkpoint list --task "] == ["main", "other"]
    assert answers["git checkpoint prune --task=ot"] == ["other"]
    assert answers["git checkpoint save -m "] == []  # a message: nothing to offer
    assert answers["git checkpoint task "] == ["set"]
    assert answers["git checkpoint hooks install --agent "] == AGENTS
    assert answers["git checkpoint hooks uninstall --agent=c"] == ["claude-code", "codex", "cursor"]
    assert answers["git checkpoint init --agent g"] == ["gemini-cli"]
    assert answers["git checkpoint hooks "] == ["install", "status", "uninstall"]
    remotes = ["origin", "upstream"]
    assert answers["git checkpoint push "] == remotes
    assert answers["git checkpoint push origin "] == sorted(everyone + fetched)
    assert answers["git checkpoint push --task main "] == remotes  # past the option's value
    assert answers["git checkpoint fetch "] == remotes
    assert answers["git checkpoint list --remote "] == remotes
    assert answers["git checkpoint list --session "] == [SESSION]
    assert answers["git checkpoint restore --before-turn 1 --session "] == [SESSION]
    assert answers["git checkpoint review --format "] == ["html", "json", "markdown", "text"]
    assert answers["git checkpoint completion "] == ["bash", "zsh"]
    assert answers["git checkpoint diff cp_001 "] == sorted(everyone + fetched)
    assert answers["git checkpoint diff cp_001 cp_002 "] == []  # two at most
    assert answers["git checkpoint -P sh"] == ["show"]


@pytest.mark.skipif(
    shutil.which("bash") is None or not BASH_COMPLETION.exists() or not GIT_COMPLETION.exists(),
    reason="needs bash with the bash-completion package and git's completion",
)
def test_lazy_loaded_by_bash_completion_from_the_data_dir(saved: Repo, tmp_path: Path) -> None:
    home = tmp_path / "home"
    target = home / "data/bash-completion/completions/git-checkpoint"
    target.parent.mkdir(parents=True)
    target.write_text(bash_script(cli))
    preamble = (
        f"source {BASH_COMPLETION}\n_completion_loader git\n"
        "type _git_checkpoint >/dev/null 2>&1 && echo 'loaded too early' >&2 && exit 1\n"
    )
    check(drive(saved, home, preamble))


@pytest.mark.skipif(
    shutil.which("bash") is None or not GIT_COMPLETION.exists(),
    reason="needs bash and git's completion script",
)
def test_with_git_completion_alone(saved: Repo, tmp_path: Path) -> None:
    script = tmp_path / "git-checkpoint.bash"
    script.write_text(bash_script(cli))
    check(drive(saved, tmp_path, f"source {GIT_COMPLETION}\nsource {script}\n"))


def test_scripts_cover_every_command() -> None:
    bash, zsh = bash_script(cli), zsh_script(cli)
    for name, command in cli.commands.items():
        if command.hidden:
            continue
        assert f"\t{name})" in bash
        assert f"'{name}:" in zsh
        for param in command.params:
            for flag in getattr(param, "opts", []):
                if flag.startswith("--"):
                    assert flag in bash, f"{name} {flag}"
    if shutil.which("bash"):
        subprocess.run(["bash", "-n"], input=bash, text=True, check=True)


ZSH_DRIVER = """
compadd() { [[ $1 == -a ]] && print -l -- ${(P)2} }
_describe() { print -l -- ${(P)4} }
fpath=(FOLDER $fpath)
autoload -Uz _git-checkpoint
complete() { words=("${(@)argv[1,-2]}"); CURRENT=$#words; PREFIX=$argv[-1]; _git-checkpoint }
print "== sub"; complete checkpoint sh sh
print "== show"; complete checkpoint show "" ""
print "== task"; complete checkpoint list --task "" ""
print "== agent"; complete checkpoint hooks install --agent "" ""
print "== hooks"; complete checkpoint hooks "" ""
print "== push"; complete checkpoint push "" ""
print "== push-checkpoints"; complete checkpoint push origin "" ""
print "== session"; complete checkpoint list --session "" ""
print "== shell"; complete checkpoint completion "" ""
print "== no-pager"; complete checkpoint -P show "" ""
"""


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed")
def test_zsh_function(saved: Repo, tmp_path: Path) -> None:
    """_git-checkpoint as zsh's _git calls it (words from the subcommand on), with
    compadd and _describe stubbed to print what they are offered.
    """
    (tmp_path / "_git-checkpoint").write_text(zsh_script(cli))
    script = ZSH_DRIVER.replace("FOLDER", str(tmp_path))
    proc = subprocess.run(
        ["zsh", "-f", "-c", script], cwd=saved.path, capture_output=True, text=True, check=True
    )
    assert proc.stderr == ""
    sections = {
        s.split("\n")[0]: [line for line in s.split("\n")[1:] if line]
        for s in proc.stdout.split("== ")[1:]
    }
    assert any(line.startswith("show:Show a checkpoint") for line in sections["sub"])
    names = {"cp_002", "main/cp_002", "origin/main/cp_001", "@"}
    assert names <= set(sections["show"])
    assert sections["task"] == ["main", "other"]
    assert sorted(sections["agent"]) == AGENTS
    assert [line.split(":")[0] for line in sections["hooks"]] == ["install", "status", "uninstall"]
    assert sections["push"] == ["origin", "upstream"]
    assert names <= set(sections["push-checkpoints"])
    assert sections["session"] == [SESSION]
    assert sections["shell"] == ["bash", "zsh"]
    assert sections["no-pager"] == sections["show"]


@pytest.mark.parametrize("shell", ["bash", "zsh"])
def test_the_shipped_scripts_are_the_ones_the_commands_make(shell: str) -> None:
    made = bash_script(cli) if shell == "bash" else zsh_script(cli)
    shipped = (ROOT / SHARED[shell]).read_text(encoding="utf-8")
    assert shipped == made, f"share/ is out of date; from the repository root: {REGENERATE}"


def test_the_completion_command_prints_the_script(repo: Repo, tmp_path: Path) -> None:
    outside = tmp_path / "no-repository"
    outside.mkdir()
    assert repo.cp("completion", "bash", cwd=outside).stdout == bash_script(cli)
    assert repo.cp("completion", "zsh").stdout == zsh_script(cli)
    assert json.loads(repo.cp("completion", "zsh", "--json").stdout) == {
        "shell": "zsh",
        "script": zsh_script(cli),
    }
    refused = repo.cp("completion", "fish", expect=2)
    assert refused.stdout == "" and "'fish' is not one of 'bash', 'zsh'" in refused.stderr


@pytest.mark.skipif(
    shutil.which("bash") is None or not GIT_COMPLETION.exists(),
    reason="needs bash and git's completion script",
)
def test_the_printed_script_completes_when_sourced(saved: Repo, tmp_path: Path) -> None:
    """What `git checkpoint completion bash` prints, sourced after git's completion (as
    `source <(git checkpoint completion bash)` in a bashrc does)."""
    script = tmp_path / "printed.bash"
    script.write_text(saved.cp("completion", "bash").stdout)
    check(drive(saved, tmp_path, f"source {GIT_COMPLETION}\nsource {script}\n"))
