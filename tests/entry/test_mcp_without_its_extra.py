"""`git checkpoint mcp` where the `mcp` package is there but is not the extra's (another
major version, without the server the tool is built on): exit 2 and the command that
installs the extra for this installation, as when `mcp` is missing altogether."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from git_checkpoint.install.installer import extra_hint

pytest.importorskip("mcp", reason="the mcp extra is not installed")


def test_an_mcp_of_another_version_names_the_command_that_adds_the_extra(tmp_path: Path) -> None:
    # None in sys.modules is how Python marks a module as missing: `mcp` imports, its
    # 2.x server does not.
    code = (
        "import sys\nsys.modules['mcp.server.mcpserver'] = None\n"
        "from git_checkpoint.entry.launch import main\nmain()"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, "mcp"],
        capture_output=True, text=True, cwd=tmp_path, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 2, proc.stderr
    assert "the MCP server needs the mcp extra (" in proc.stderr
    assert proc.stderr.rstrip().endswith(extra_hint("mcp"))
