"""`git checkpoint init`: a commented `.checkpoint.yaml` the loader reads back as the
defaults (plus the project's test command when the root makes it plain), never written
over an existing one, and the hooks offered: asked on a terminal, never asked off one."""

from __future__ import annotations

import contextlib
import json
import os
import re
import select
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from git_checkpoint.config.model import Config
from git_checkpoint.config.parse import load_config, parse_config_text
from git_checkpoint.config.starter import find_test_commands
from git_checkpoint.entry.cli import cli
from git_checkpoint.entry.completion import bash_script
from git_checkpoint.entry.manpage import render

from ..conftest import Repo
from ..helpers import immutable, state

CONFIG = ".checkpoint.yaml"


ROOT = Path(__file__).resolve().parents[2]


def one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr and lines[0].startswith("git checkpoint: ")
    return lines[0]


def uncommented(text: str) -> str:
    """The file with every commented-out verifier taken in, as its comments say to."""
    text = text.replace("verifiers: []\n", "verifiers:\n")
    return re.sub(r"^  # (-|  )", r"  \1", text, flags=re.MULTILINE)


def our_git_hooks(repo: Repo) -> list[str]:
    folder = repo.path / ".git/hooks"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


def test_writes_the_defaults_the_loader_reads_back(repo: Repo) -> None:
    proc = repo.cp("init", cwd=repo.path / "src")  # from a subfolder: the file goes to the root
    path = repo.path / CONFIG
    assert proc.stdout.splitlines()[0] == f"wrote {path}"
    assert "verifier: none found" in proc.stdout
    assert not (repo.path / "src" / CONFIG).exists()
    config = load_config(repo.path, [])
    assert config == Config(source=str(path))  # every key there, each at its default
    data = path.read_bytes()
    assert b"hooks:" not in data  # so the agent hooks never load a YAML parser for it
    assert data.count(b"\n# ") > 10  # commented
    # The example verifier, taken in as its comment says, is a valid one.
    example = parse_config_text(uncommented(data.decode()), path)
    assert [(v.name, v.command) for v in example.verifiers] == [("tests", "make test")]
    assert repo.git("status", "--porcelain") == f"?? {CONFIG}\n"  # nothing else written
    assert "init" in repo.cp("log").stdout


@pytest.mark.parametrize(
    ("files", "command"),
    [
        ({"pyproject.toml": "[project]\nname = 'x'\n"}, "python3 -m pytest -q"),
        ({"setup.cfg": "[metadata]\n"}, "python3 -m pytest -q"),
        ({"pytest.ini": "[pytest]\n"}, "python3 -m pytest -q"),
        ({"tox.ini": "[tox]\n"}, "python3 -m pytest -q"),
        ({"package.json": '{"scripts": {"test": "jest"}}'}, "npm test"),
        ({"Cargo.toml": "[package]\nname = 'x'\n"}, "cargo test"),
        ({"go.mod": "module example.com/x\n"}, "go test ./..."),
        ({"Makefile": "all: build\n\ntest: all\n\t./run-tests\n"}, "make test"),
        ({"Makefile": ".PHONY: check test\ncheck test: build\n\t./t\n"}, "make test"),
        ({"GNUmakefile": "test::\n\t./t\n"}, "make test"),
    ],
)
def test_the_test_command_becomes_the_verifier(
    repo: Repo, files: dict[str, str], command: str
) -> None:
    for name, text in files.items():
        repo.write(name, text)
    data = repo.cp_json("init")
    assert (data["verifier"], data["found_in"]) == (command, next(iter(files)))
    verifiers = load_config(repo.path, []).verifiers
    assert [(v.command, v.required) for v in verifiers] == [(command, True)]
    # What verify runs is what was found.
    assert repo.cp("verify", "--json", expect=None).returncode in (0, 1)


@pytest.mark.parametrize(
    "files",
    [
        {"package.json": '{"scripts": {"test": "echo \\"Error: no test specified\\" && exit 1"}}'},
        {"package.json": '{"scripts": {"build": "tsc"}}'},
        {"package.json": "{not json"},
        {"package.json": '["a list"]'},
        {"Makefile": "test := yes\nTESTS ?= all\n.PHONY: test\n"},
        {"Makefile": "build:\n\ttest -f x\n"},  # a recipe line that runs test(1)
        {"makefile": "build:\n", "Makefile": "test:\n"},  # make reads makefile first
        {"tests/pyproject.toml": ""},  # not at the root
    ],
)
def test_no_plain_test_command_leaves_a_commented_example(
    repo: Repo, files: dict[str, str]
) -> None:
    for name, text in files.items():
        repo.write(name, text)
    assert find_test_commands(repo.path) == []
    assert repo.cp_json("init")["verifier"] is None
    assert load_config(repo.path, []).verifiers == ()


def test_several_found_the_first_counts_the_rest_commented(repo: Repo) -> None:
    repo.write("pyproject.toml", "")
    repo.write("package.json", '{"scripts": {"test": "vitest"}}')
    repo.write("Makefile", "test:\n\t./t\n")
    data = repo.cp_json("init")
    assert data["verifier"] == "python3 -m pytest -q"
    assert data["also_found"] == ["npm test", "make test"]
    text = (repo.path / CONFIG).read_text()
    assert [v.name for v in load_config(repo.path, []).verifiers] == ["pytest"]
    taken_in = parse_config_text(uncommented(text), repo.path / CONFIG)
    assert [v.name for v in taken_in.verifiers] == ["pytest", "npm-test", "make-test"]
    assert taken_in == replace(load_config(repo.path, []), verifiers=taken_in.verifiers)


def test_an_existing_file_is_refused_exit_3(repo: Repo) -> None:
    repo.write(CONFIG, "verifiers: []\n# mine\n")
    before = state(repo)
    line = one_line_error(repo.cp("init", expect=3))
    assert "exists already" in line and "--force" in line
    proc = repo.cp("init", "--json", expect=3)
    assert json.loads(proc.stdout)["exit_code"] == 3
    assert state(repo) == before  # no staged file left either


def test_force_keeps_a_copy_of_the_old_file(repo: Repo) -> None:
    old = b"verifiers: [broken\n"  # even one the loader refuses: init does not read it
    repo.write(CONFIG, old)
    env = {"GIT_CHECKPOINT_NOW": "2026-03-01T12:00:00Z"}
    proc = repo.cp("init", "--force", env=env)
    copy = repo.path / ".git/checkpoint/init/checkpoint.yaml.20260301T120000Z"
    assert copy.read_bytes() == old
    assert f"the old one is kept in {copy}" in proc.stdout
    assert load_config(repo.path, []) == Config(source=str(repo.path / CONFIG))
    # Again within the same second: a second copy, the first one kept.
    data = json.loads(repo.cp("init", "--force", "--json", env=env).stdout)
    assert data["old_copy"] == f"{copy}-2"
    assert copy.read_bytes() == old
    assert Path(data["old_copy"]).read_bytes() == (repo.path / CONFIG).read_bytes()
    assert "old_copy=" in repo.cp("log").stdout


@pytest.mark.parametrize("kind", ["symlink", "folder"])
def test_force_refuses_what_is_not_a_file(repo: Repo, kind: str) -> None:
    if kind == "symlink":
        repo.write("real.yaml", "verifiers: []\n")
        (repo.path / CONFIG).symlink_to("real.yaml")
    else:
        repo.write(f"{CONFIG}/inside", "x\n")
    before = state(repo)
    line = one_line_error(repo.cp("init", "--force", expect=3))
    assert "not a regular file" in line
    assert state(repo) == before


def test_not_a_git_repository_exit_2(tmp_path: Path, repo: Repo) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    line = one_line_error(repo.cp("init", cwd=plain, expect=2))
    assert "not inside a git work tree" in line
    assert list(plain.iterdir()) == []
    proc = repo.cp("init", "--json", cwd=plain, expect=2)
    assert json.loads(proc.stdout)["exit_code"] == 2


@contextlib.contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """A folder nobody can write into: by its mode, or for root by an immutable flag."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        try:
            yield
        finally:
            folder.chmod(0o755)
        return
    if not shutil.which("chattr"):
        pytest.skip("root ignores permissions, and there is no chattr for an immutable flag")
    with immutable(folder):
        yield


def test_read_only_work_tree_exit_4_before_any_question(repo: Repo) -> None:
    before = state(repo)
    with read_only(repo.path):
        line = one_line_error(repo.cp("init", "--hooks", expect=4))
    assert f"{repo.path / CONFIG}: " in line and (
        "Permission denied" in line or "not permitted" in line
    )
    assert state(repo) == before
    assert our_git_hooks(repo) == []  # nothing installed either


def test_off_a_terminal_it_never_asks_and_says_the_command(repo: Repo) -> None:
    repo.write(".claude/keep", "")
    repo.write("CLAUDE.md", "# instructions\n")
    repo.write(".cursor/rules", "")
    proc = repo.cp("init")  # stdin and stdout are pipes here
    command = "git checkpoint hooks install --git --agent claude-code --agent cursor"
    assert f"hooks: not installed; to install them: {command}" in proc.stdout
    assert proc.stderr == ""  # no question
    assert our_git_hooks(repo) == [] and not (repo.path / ".claude/settings.json").exists()
    data = json.loads(repo.cp("init", "--force", "--no-hooks", "--json").stdout)
    assert (data["hooks"], data["hooks_command"]) == ("declined", command)


def test_hooks_flag_installs_them_with_the_hooks_install_code(repo: Repo) -> None:
    repo.write(".claude/keep", "")
    data = repo.cp_json("init", "--hooks")
    assert data["hooks"] == "installed"
    assert {c["family"] for c in data["hooks_changes"]} == {"git", "claude-code"}
    status = repo.cp_json("hooks", "status")
    assert {g["state"] for g in status["git"]} == {"installed"}
    claude = [a for a in status["agents"] if a["agent"] == "claude-code"]
    assert [a["state"] for a in claude] == ["installed"]
    # --agent chooses the agents instead of the folders found.
    repo.cp("hooks", "uninstall")
    repo.cp("init", "--force", "--hooks", "--agent", "codex")
    states = {a["agent"]: a["state"] for a in repo.cp_json("hooks", "status")["agents"]}
    assert states["codex"] == "installed" and states["claude-code"] == "not installed"


def test_a_hooks_failure_after_the_file_is_written_is_said(repo: Repo) -> None:
    repo.write(".claude/settings.json", "{not json")
    proc = repo.cp("init", "--hooks", expect=2)
    assert proc.stdout.startswith(f"wrote {repo.path / CONFIG}")
    assert proc.stderr.startswith("warning: hooks not installed: ")
    assert "not valid JSON" in proc.stderr and len(proc.stderr.splitlines()) == 1
    assert load_config(repo.path, []).source is not None
    assert (repo.path / ".claude/settings.json").read_text() == "{not json"


def on_terminal(repo: Repo, args: list[str], answer: bytes) -> tuple[int, str]:
    """Run git checkpoint with a terminal for stdin, stdout and stderr; answer its question."""
    main, sub = os.openpty()
    child = subprocess.Popen(
        ["git", "checkpoint", *args], cwd=repo.path, stdin=sub, stdout=sub, stderr=sub
    )
    os.close(sub)
    seen = b""
    answered = False
    try:
        while True:
            ready, _, _ = select.select([main], [], [], 60)
            assert ready, f"no output: {seen!r}"
            try:
                chunk = os.read(main, 4096)
            except OSError:  # the terminal closed with the child
                break
            if not chunk:
                break
            seen += chunk
            if not answered and b"[y/N]" in seen:
                os.write(main, answer + b"\n")
                answered = True
    finally:
        os.close(main)
    return child.wait(timeout=60), seen.decode(errors="replace").replace("\r\n", "\n")


def test_on_a_terminal_it_asks_default_no(repo: Repo) -> None:
    code, out = on_terminal(repo, ["init"], b"")
    assert code == 0
    assert "install the hooks now (git checkpoint hooks install --git)? [y/N]" in out
    assert "hooks: not installed; to install them: git checkpoint hooks install --git" in out
    assert our_git_hooks(repo) == []
    code, out = on_terminal(repo, ["init", "--force"], b"y")
    assert code == 0 and "git          installed: pre-rebase" in out
    assert "pre-rebase" in our_git_hooks(repo)
    code, out = on_terminal(repo, ["init", "--force", "--no-hooks"], b"y")
    assert code == 0 and "[y/N]" not in out  # answered on the command line


def test_linked_worktree_writes_its_own_root(repo: Repo, tmp_path: Path) -> None:
    linked = tmp_path / "linked"
    repo.git("worktree", "add", "-q", "--detach", str(linked))
    Repo(linked).cp("init", cwd=linked / "src")
    assert (linked / CONFIG).is_file() and not (repo.path / CONFIG).exists()


def test_init_is_documented_everywhere_commands_are_listed() -> None:
    page = render(cli).replace("\\-", "-")
    assert "git checkpoint init " in page and "--no-hooks" in page
    assert "\tinit)" in bash_script(cli)
    readme = (ROOT / "README.md").read_text()
    assert "| `init [--force] [--hooks\\|--no-hooks] [--agent A…]` |" in readme
    assert "**init**" in readme


def test_a_hooks_folder_that_cannot_be_written_is_said_exit_4(repo: Repo) -> None:
    (repo.path / ".git/hooks").mkdir()
    with read_only(repo.path / ".git/hooks"):
        proc = repo.cp("init", "--hooks", expect=4)
    assert proc.stdout.startswith(f"wrote {repo.path / CONFIG}")
    assert proc.stderr.startswith("warning: hooks not installed: ")
    assert len(proc.stderr.splitlines()) == 1 and "Traceback" not in proc.stderr
    assert our_git_hooks(repo) == []
