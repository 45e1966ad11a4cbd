"""`git checkpoint mcp` runs inside an agent, whose terminal is the user's: git must
never ask for a password there, where nobody answering the agent sees it and the tool
call would wait for ever. A push to a remote that wants credentials (none stored) is a
tool error at once, even when the server has a controlling terminal and the caller's
environment allows prompts."""

from __future__ import annotations

import http.server
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from ..conftest import Repo

mcp = pytest.importorskip("mcp", reason="the mcp extra is not installed")

from .mcp_session import payload, session  # noqa: E402

# Starts its command as the leader of a new session whose controlling terminal is a new
# pseudo-terminal, kept open (nobody types into it): where git would ask.
WITH_A_TERMINAL = """
import fcntl, os, pty, sys, termios
master, slave = pty.openpty()
os.set_inheritable(master, True)
if os.fork():
    _, status = os.wait()
    sys.exit(os.waitstatus_to_exitcode(status))
os.setsid()
fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
os.execvp(sys.argv[1], sys.argv[1:])
"""


class _WantsCredentials(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Basic realm="checkpoints"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def remote_wanting_credentials() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _WantsCredentials)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/project.git"
    finally:
        server.shutdown()
        server.server_close()


def test_a_push_wanting_a_password_fails_instead_of_asking(
    repo: Repo, tmp_path: Path, remote_wanting_credentials: str
) -> None:
    repo.git("remote", "add", "origin", remote_wanting_credentials)
    repo.write("src/app.py", "print('work')\n")
    repo.cp("save", "-m", "work")
    launcher = tmp_path / "with_a_terminal.py"
    launcher.write_text(WITH_A_TERMINAL)
    env = {k: v for k, v in os.environ.items() if k not in ("GIT_TERMINAL_PROMPT", "GIT_ASKPASS")}
    _, (pushed,) = session(
        repo.path,
        [("push", {"remote": "origin"})],
        launcher=[sys.executable, str(launcher)],
        env=env,
    )
    assert pushed.is_error
    assert payload(pushed)["exit_code"] != 0
