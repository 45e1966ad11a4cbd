"""Real git servers on loopback, for the sharing tests: a bare repository over file://,
`git daemon` (git://) and smart HTTP through `git http-backend` behind a small
threaded HTTP server written here (a CGI bridge of forty lines). Each server is
started by the test that needs it and stopped at teardown. And the machines that talk
to them: a repository published to a server, a clone of it, the refs a server holds.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from .conftest import Repo


def bare_repo(path: Path) -> Path:
    subprocess.run(["git", "init", "-q", "--bare", str(path)], check=True)
    # Let smart HTTP accept pushes without authentication (this server is loopback-only).
    subprocess.run(["git", "-C", str(path), "config", "http.receivepack", "true"], check=True)
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_for_port(port: int, proc: subprocess.Popen[bytes] | None = None) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server exited early with {proc.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return
        time.sleep(0.05)
    raise RuntimeError(f"nothing listens on port {port}")


@contextlib.contextmanager
def git_daemon(base: Path) -> Iterator[str]:
    """`git daemon` serving every repository below `base`; yields git://127.0.0.1:PORT/."""
    port = free_port()
    proc = subprocess.Popen(
        [
            "git",
            "daemon",
            "--reuseaddr",
            "--listen=127.0.0.1",
            f"--port={port}",
            f"--base-path={base}",
            "--export-all",
            "--enable=receive-pack",
            "--informative-errors",
            str(base),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        _wait_for_port(port, proc)
        yield f"git://127.0.0.1:{port}/"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


class _HttpBackend(BaseHTTPRequestHandler):
    """Smart HTTP: each request runs `git http-backend` as a CGI program."""

    root = ""
    bytes_in = 0  # request bodies received (what clients pushed), for the benchmark
    bytes_out = 0  # response bodies sent (what clients fetched)

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass

    def do_GET(self) -> None:
        self._cgi()

    def do_POST(self) -> None:
        self._cgi()

    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip(), 16)
                if size == 0:
                    self.rfile.readline()
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        length = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(length) if length else b""

    def _cgi(self) -> None:
        path, _, query = self.path.partition("?")
        body = self._body()
        type(self).bytes_in += len(body)
        env = {
            **os.environ,
            "GIT_PROJECT_ROOT": self.root,
            "GIT_HTTP_EXPORT_ALL": "1",
            "PATH_INFO": path,
            "QUERY_STRING": query,
            "REQUEST_METHOD": self.command,
            "CONTENT_TYPE": self.headers.get("Content-Type", ""),
            "CONTENT_LENGTH": str(len(body)),
            "REMOTE_ADDR": "127.0.0.1",
            "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
            "HTTP_CONTENT_ENCODING": self.headers.get("Content-Encoding", ""),
        }
        proc = subprocess.run(
            ["git", "http-backend"], input=body, env=env, capture_output=True, check=False
        )
        head, _, payload = proc.stdout.partition(b"\r\n\r\n")
        if not _:
            head, _, payload = proc.stdout.partition(b"\n\n")
        status = 200
        headers = []
        for line in head.decode("latin-1").splitlines():
            key, _, value = line.partition(":")
            if key.lower() == "status":
                status = int(value.strip().split()[0])
            elif key:
                headers.append((key, value.strip()))
        self.send_response(status)
        for key, value in headers:
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)
        type(self).bytes_out += len(payload)


@contextlib.contextmanager
def http_server(base: Path) -> Iterator[str]:
    """Smart HTTP for every repository below `base`; yields http://127.0.0.1:PORT/."""
    with http_server_counted(base) as (url, _):
        yield url


@contextlib.contextmanager
def http_server_counted(base: Path) -> Iterator[tuple[str, type[_HttpBackend]]]:
    """Like http_server, also yielding the handler class that counts bytes in and out."""
    handler = type("Handler", (_HttpBackend,), {"root": str(base)})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", handler
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


# --- the machines on either side ----------------------------------------------------------

CONFIG = "verifiers:\n  - {name: unit, command: test -f src/app.py}\n"


def publish(repo: Repo, url: str) -> Repo:
    """`repo` with a verifier committed, pushed to the server at `url` as origin."""
    repo.write(".checkpoint.yaml", CONFIG)
    repo.commit_all("config")
    repo.git("remote", "add", "origin", url)
    repo.git("push", "-q", "origin", "main")
    return repo


def clone(url: str, path: Path) -> Repo:
    """Another machine: a clone of the server at `url`."""
    subprocess.run(["git", "clone", "-q", url, str(path)], check=True, capture_output=True)
    return Repo(path)


def remote_refs(repo: Repo) -> dict[str, str]:
    """The refs origin holds: ref -> object id."""
    out = repo.git("ls-remote", "origin")
    return {ref: oid for oid, ref in (line.split("\t") for line in out.splitlines())}
