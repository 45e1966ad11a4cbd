"""`git checkpoint mcp`: an MCP client session over stdio (the SDK's own client) against
a real repository: save, restore (dry run, then real), undo, and errors as tool errors.
The server lives on between calls, so it must not adopt the orphans of what its
verifiers start (verify/procgroup.adopt_orphans, which the one-shot `run` and `verify`
use to reap a stopped group at once), or each one it never reaps stays a zombie until
the server exits."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from ..conftest import Repo

mcp = pytest.importorskip("mcp", reason="the mcp extra is not installed")

from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402

from .mcp_session import payload  # noqa: E402
from .mcp_session import session as client_session  # noqa: E402

TOOLS = {"save", "list", "show", "diff", "restore", "undo", "verify", "status", "resume", "review"}


def session(repo: Repo, calls: list[tuple[str, dict[str, Any]]]) -> tuple[set[str], list[Any]]:
    """Start the server as an agent would, make the calls in order; (tool names, results)."""
    tools, results = client_session(repo.path, calls)
    return set(tools), results


def test_save_restore_dry_run_then_real_then_undo(repo: Repo) -> None:
    repo.write("src/app.py", "print('saved')\n")
    repo.write("notes.txt", "an untracked note\n")
    tools, results = session(
        repo,
        [
            ("save", {"message": "before the change"}),
            ("list", {}),
        ],
    )
    assert tools >= TOOLS
    saved, listed = (payload(r) for r in results)
    assert (saved["checkpoint_id"], saved["created"]) == ("cp_001", True)
    cli_list = repo.cp_json("list")
    for entry in listed["checkpoints"] + cli_list["checkpoints"]:
        entry.pop("age")  # seconds pass between the two
    assert listed == cli_list  # the same JSON as --json

    repo.write("src/app.py", "print('broken')\n")
    repo.write("residue.tmp", "half done\n")
    _, results = session(
        repo,
        [
            ("restore", {"checkpoint": "cp_001"}),
            ("status", {}),
        ],
    )
    dry, _status = (payload(r) for r in results)
    assert dry["dry_run"] is True
    assert (dry["would_bring_back"], dry["would_remove"]) == (["src/app.py"], ["residue.tmp"])
    assert dry["brought_back"] == [] and dry["removed"] == []  # said as done: never
    assert (repo.path / "src/app.py").read_text() == "print('broken')\n"  # nothing written
    assert dry == repo.cp_json("restore", "cp_001", "--dry-run")  # as the command says it
    said = repo.cp("restore", "cp_001", "--dry-run").stdout.splitlines()
    assert said[0] == "would restore main/cp_001: 1 to write, 1 to remove"
    assert said[1:] == ["  would write: src/app.py", "  would remove: residue.tmp"]

    _, results = session(repo, [("restore", {"checkpoint": "cp_001", "dry_run": False})])
    real = payload(results[0])
    assert real["dry_run"] is False and real["safety_checkpoint"] == "main/cp_002"
    assert (real["brought_back"], real["removed"]) == (["src/app.py"], ["residue.tmp"])
    assert real["would_bring_back"] == [] and real["would_remove"] == []
    assert (repo.path / "src/app.py").read_text() == "print('saved')\n"
    assert not (repo.path / "residue.tmp").exists()

    _, results = session(repo, [("undo", {})])
    assert not results[0].is_error, results[0].content
    assert (repo.path / "src/app.py").read_text() == "print('broken')\n"
    assert (repo.path / "residue.tmp").read_text() == "half done\n"


def test_errors_are_tool_errors_with_the_exit_code(repo: Repo) -> None:
    _, results = session(repo, [("show", {"checkpoint": "cp_404"}), ("undo", {}), ("resume", {})])
    show, undo, resume = results
    assert show.is_error
    error = payload(show)
    assert error["exit_code"] == 2 and error["meaning"] == "bad usage or bad input"
    assert "unknown checkpoint 'cp_404'" in error["error"]
    assert undo.is_error and payload(undo)["exit_code"] == 2
    assert not resume.is_error and payload(resume)["task"] == "main"


def test_verify_runs_on_the_main_thread(repo: Repo) -> None:
    repo.write(".checkpoint.yaml", "verifiers:\n  - {name: unit, command: 'exit 1'}\n")
    repo.commit_all("verifier")
    _, results = session(
        repo,
        [("verify", {}), ("diff", {"checkpoint": "@", "name_only": True}), ("review", {})],
    )
    verified = payload(results[0])
    assert not results[0].is_error
    assert (verified["status"], verified["exit_code"]) == ("rejected", 1)
    assert payload(results[1])["files"] == []
    assert not results[2].is_error, results[2].content
    review = payload(results[2])
    assert review == repo.cp_json("review")


def _zombie_children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            stat = Path(f"/proc/{child}/stat").read_text()
            if stat.rsplit(")", 1)[1].split()[0] == "Z":
                found.append(int(child))
    return found


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc")
def test_a_verifier_leaving_a_detached_process_leaves_no_zombie(repo: Repo) -> None:
    # The verifier's shell names the server; a child it detaches (its own session, out
    # of the group verify stops) ends a moment later, after its parent.
    repo.write(
        ".checkpoint.yaml",
        "verifiers:\n  - {name: unit, command: 'echo $PPID > server.pid;"
        ' setsid sh -c "sleep 0.3" >/dev/null 2>&1 & exit 0\'}\n',
    )
    repo.commit_all("verifier")
    params = StdioServerParameters(
        command="git", args=["checkpoint", "mcp"], cwd=str(repo.path), env=dict(os.environ)
    )

    async def main() -> list[int]:
        async with Client(params, read_timeout_seconds=120) as client:
            result = await client.call_tool("verify", {})
            assert not result.is_error, result.content
            await anyio.sleep(1.0)  # the detached sleep has ended by now
            server = int((repo.path / "server.pid").read_text())
            return _zombie_children(server)

    started = time.monotonic()
    assert anyio.run(main) == []
    assert time.monotonic() - started < 60


def test_restore_of_some_paths_through_mcp(repo: Repo) -> None:
    repo.write("src/app.py", "print('saved')\n")
    repo.write("docs/a.md", "saved\n")
    repo.cp("save", "-m", "before")
    repo.write("src/app.py", "print('broken')\n")
    repo.write("docs/a.md", "keep this edit\n")
    _, results = session(
        repo, [("restore", {"checkpoint": "cp_001", "paths": ["src"], "dry_run": False})]
    )
    done = payload(results[0])
    assert done["brought_back"] == ["src/app.py"] and done["paths"] == ["src"]
    assert (repo.path / "src/app.py").read_text() == "print('saved')\n"
    assert (repo.path / "docs/a.md").read_text() == "keep this edit\n"
