"""A risky shell command is saved for where it acts, not for where the agent's call
says it runs: `cd`, `git -C`, `--work-tree` and path arguments name the repositories it
reaches, and the hook (and the guard) save each of them, a few at most, naming them.
Gemini CLI's shell tool runs in a folder below the project: `dir_path` (0.61 on) or
`directory` (before)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from git_checkpoint.fast.hook import MAX_REPOSITORIES

from ..conftest import Repo, make_repo
from .test_agent_hooks import checkpoints, payload, run_hook


def project(path: Path, name: str) -> Repo:
    r = make_repo(path / name)
    r.write("src/app.py", f"print('{name}')\n")
    r.commit_all("initial")
    r.write("src/app.py", f"print('{name}, edited')\n")  # work a discard would lose
    return r


def hook(data: bytes, where: Path) -> subprocess.CompletedProcess[str]:
    """The Claude Code hook as the agent runs it; one line on stderr per repository."""
    proc = subprocess.run(
        ["git-checkpoint-hook", "claude-code", "PreToolUse"],
        input=data.decode(),
        cwd=where,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0
    assert proc.stdout == ""
    assert "Traceback" not in proc.stderr
    return proc


def claude_bash(command: str, cwd: Path) -> bytes:
    return json.dumps(
        {
            "session_id": "s",
            "cwd": str(cwd),
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": command},
        }
    ).encode()


@pytest.mark.parametrize(
    "command",
    [
        "cd {other} && git reset --hard",
        "git -C {other} checkout -- .",
        "git --work-tree={other} --git-dir={other}/.git checkout -- .",
        "rm -rf {other}/src",
        "(cd {other}; git clean -fdx)",
    ],
)
def test_the_repository_the_command_acts_on_is_saved_not_the_calls(
    tmp_path: Path, command: str
) -> None:
    here, other = project(tmp_path, "here"), project(tmp_path, "other")
    line = command.format(other=other.path)
    proc = run_hook("claude-code", "PreToolUse", claude_bash(line, here.path), tmp_path)
    assert checkpoints(other) == ["refs/checkpoints/main/cp_001"], proc.stderr
    assert f"checkpoint saved: cp_001 in {other.path} (before: " in proc.stderr
    stored = other.git("show", "refs/checkpoints/main/cp_001:src/app.py")
    assert stored == "print('other, edited')\n"
    if not line.startswith("rm"):  # (`rm` of another repository's path runs here)
        assert checkpoints(here) == []


def test_a_command_that_reaches_two_repositories_saves_both(tmp_path: Path) -> None:
    here, other = project(tmp_path, "here"), project(tmp_path, "other")
    line = f"git checkout -- . && git -C {other.path} reset --hard"
    proc = hook(claude_bash(line, here.path), tmp_path)
    assert checkpoints(here) == checkpoints(other) == ["refs/checkpoints/main/cp_001"]
    assert f"in {here.path} (before: " in proc.stderr
    assert f"in {other.path} (before: " in proc.stderr


def test_a_command_that_stays_in_its_repository_names_none(tmp_path: Path) -> None:
    here = project(tmp_path, "here")
    proc = run_hook(
        "claude-code", "PreToolUse", claude_bash("git reset --hard", here.path / "src"), tmp_path
    )
    assert proc.stderr == "git-checkpoint: checkpoint saved: cp_001 (before: git reset --hard)\n"


def test_at_most_a_few_repositories_are_saved_first_named_first(tmp_path: Path) -> None:
    repos = [project(tmp_path, f"r{i}") for i in range(MAX_REPOSITORIES + 2)]
    line = "; ".join(f"git -C {r.path} reset --hard" for r in repos)
    proc = hook(claude_bash(line, tmp_path), tmp_path)
    saved = [bool(checkpoints(r)) for r in repos]
    assert len(proc.stderr.splitlines()) == MAX_REPOSITORIES
    assert saved == [True] * MAX_REPOSITORIES + [False, False]


def test_the_guard_saves_the_repository_the_command_acts_on(tmp_path: Path) -> None:
    here, other = project(tmp_path, "here"), project(tmp_path, "other")
    proc = here.cp("guard", "--", "git", "-C", str(other.path), "checkout", "--", ".")
    assert checkpoints(other) == ["refs/checkpoints/main/cp_001"]
    assert checkpoints(here) == []
    assert f"checkpoint saved: cp_001 in {other.path}" in proc.stderr
    assert other.git("status", "--porcelain") == ""  # and the command ran


@pytest.mark.parametrize("fixture", ["dir_path", "directory"])
def test_gemini_shell_commands_are_judged_in_the_folder_they_run_in(
    repo: Repo, tmp_path: Path, fixture: str
) -> None:
    """`echo … > app.py` in `src` overwrites src/app.py, which exists: risky. Judged at
    the top of the project, where no app.py is, it would look like a new file."""
    repo.write("src/app.py", "print('edited, not yet saved')\n")
    data = payload("gemini-cli", f"BeforeTool-run_shell_command-{fixture}", repo.path)
    proc = run_hook("gemini-cli", "BeforeTool", data, tmp_path)
    assert checkpoints(repo) == ["refs/checkpoints/main/cp_001"], proc.stderr
    kept = repo.git("show", "refs/checkpoints/main/cp_001:src/app.py")
    assert kept == "print('edited, not yet saved')\n"


def test_a_gemini_folder_outside_the_project_is_not_followed(repo: Repo, tmp_path: Path) -> None:
    """A `dir_path` that is no folder: the command is judged where the call runs."""
    text = payload("gemini-cli", "BeforeTool-run_shell_command-dir_path", repo.path).decode()
    data = text.replace('"dir_path": "src"', '"dir_path": "no/such/folder"').encode()
    run_hook("gemini-cli", "BeforeTool", data, tmp_path)
    assert checkpoints(repo) == []  # app.py does not exist at the top: a new file


def test_a_one_megabyte_payload_gets_an_answer(repo: Repo, tmp_path: Path) -> None:
    """Too long to judge is risky, judged without reading it: the call goes on."""
    repo.write("src/app.py", "print('edited')\n")
    data = claude_bash("env " * 250_000 + "true", repo.path)
    proc = subprocess.run(
        ["git-checkpoint-hook", "claude-code", "PreToolUse"],
        input=data,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0
    assert checkpoints(repo) == ["refs/checkpoints/main/cp_001"]


def test_a_call_from_past_path_max_changes_nothing_and_answers_at_once(repo: Repo) -> None:
    """A payload's folder past PATH_MAX is no folder a tool can start in: nothing to
    protect, no walk up that costs the path's length at each step (two megabytes of
    `a/` would take hours so), and nothing said."""
    repo.write("src/app.py", "print('edited')\n")
    cwd = Path("/" + "a/" * 1_000_000)
    proc = hook(claude_bash("git checkout -- . && echo x > out.txt", cwd), repo.path)
    assert proc.stderr == ""
    assert checkpoints(repo) == []


def test_a_call_from_a_folder_outside_any_repository_says_so_in_one_line(repo: Repo) -> None:
    repo.write("src/app.py", "print('edited')\n")
    proc = hook(claude_bash("git checkout -- .", Path("/no/such/folder")), repo.path)
    assert proc.stderr == "git-checkpoint: no checkpoint saved: no such folder: /no/such/folder\n"
    assert checkpoints(repo) == []


def test_a_folder_not_there_yet_is_judged_by_the_repository_above_it(repo: Repo) -> None:
    """Codex names the folder the command runs in (`cwd`), which the call itself may be
    about to create: the repository above it is the one saved."""
    repo.write("src/app.py", "print('edited')\n")
    hook(claude_bash("git checkout -- .", repo.path / "sub" / "new"), repo.path)
    assert checkpoints(repo) == ["refs/checkpoints/main/cp_001"]
