"""What the hook path loads, watched with `python -X importtime` in real processes: a
harmless shell command judged, and the quick check of an unchanged workspace, load the
hook path alone, never the save path, a third-party package or the heavy parts of the
standard library that cost every agent tool call (tests/architecture holds the imports
statically; this is the running process)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import git_checkpoint

from ..conftest import Repo

HEAVY = (
    "click",
    "yaml",
    "pygit2",
    "detect_secrets",
    "subprocess",
    "dataclasses",
    "typing",
    "pathlib",
    "threading",
    "git_checkpoint.save",
    "git_checkpoint.storage",
    "git_checkpoint.app",
    "git_checkpoint.config",
    "git_checkpoint.gitcore.repo",
    # re brings enum, functools and collections: more than the hook path itself
    "re",
    "json",
    "enum",
    "functools",
    "collections",
)


# The package's own folder, for a Python started as the installed launchers start it:
# isolated (-I) and without the site machinery (-S), so that nothing but the code run
# is imported.
ROOT = str(Path(git_checkpoint.__file__).resolve().parents[1])


def loaded(code: str, cwd: Path, stdin: str = "") -> list[str]:
    """The modules a fresh `python -I -S -X importtime -c CODE` imported, in order."""
    prelude = f"import sys; sys.path.insert(0, {ROOT!r})\n"
    proc = subprocess.run(
        [sys.executable, "-I", "-S", "-X", "importtime", "-c", prelude + code],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    names = []
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            name = line.rsplit("|", 1)[1].strip()
            if name != "imported package":
                names.append(name)
    return names


def heavy(names: list[str]) -> list[str]:
    return [n for n in names if any(n == h or n.startswith(f"{h}.") for h in HEAVY)]


def test_a_harmless_shell_command_loads_the_hook_path_alone(repo: Repo) -> None:
    payload = {"tool_name": "Bash", "tool_input": {"command": "ls -la"}, "cwd": str(repo.path)}
    code = (
        "import sys; sys.argv = ['git-checkpoint-hook', 'claude-code', 'PreToolUse']\n"
        "from git_checkpoint.entry.hook import main\n"
        "main()\n"
    )
    names = loaded(code, repo.path, json.dumps(payload))
    assert "git_checkpoint.risk.classify" in names  # the command was judged
    assert heavy(names) == []


def test_the_quick_check_of_an_unchanged_workspace_loads_the_hook_path_alone(
    repo: Repo,
) -> None:
    time.sleep(1.1)  # older than the racy window: stat data vouches for the files
    repo.cp("save", "-m", "base")
    code = (
        "from git_checkpoint.fast.quickcheck import quick_unchanged\nassert quick_unchanged('.')\n"
    )
    names = loaded(code, repo.path)
    assert "git_checkpoint.fast.quickcheck" in names
    assert heavy(names) == []


def test_the_hooks_save_loads_neither_typing_nor_click(repo: Repo) -> None:
    repo.cp("save", "-m", "base")
    repo.write("src/new.py", "print('new')\n")
    payload = {
        "tool_name": "Write",
        "tool_input": {"file_path": str(repo.path / "src/new.py"), "content": "x"},
        "cwd": str(repo.path),
    }
    code = (
        "import sys; sys.argv = ['git-checkpoint-hook', 'claude-code', 'PreToolUse']\n"
        "from git_checkpoint.entry.hook import main\n"
        "main()\n"
    )
    names = loaded(code, repo.path, json.dumps(payload))
    assert "git_checkpoint.save.session" in names  # it saved
    assert [n for n in names if n in ("typing", "click", "yaml")] == []
    assert len(repo.git("for-each-ref", "refs/checkpoints/").splitlines()) == 2
