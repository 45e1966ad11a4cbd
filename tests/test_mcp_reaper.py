"""The MCP server lives on between calls: it must not adopt the orphans of what its
verifiers start (procgroup.adopt_orphans, which the one-shot `run` and `verify` use to
reap a stopped group at once), or each one it never reaps stays a zombie until the
server exits."""

from __future__ import annotations

import os
import time
from pathlib import Path

import anyio
import pytest

from .conftest import Repo

mcp = pytest.importorskip("mcp", reason="the mcp extra is not installed")

from mcp import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402


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
