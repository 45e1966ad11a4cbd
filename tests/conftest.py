"""Hermetic, real-git test fixtures: every test gets its own HOME, no system config,
a fixed author and dates, and real repositories in a temp dir. git is never mocked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

BIN = str(Path(sys.executable).parent)


@pytest.fixture(autouse=True)
def hermetic_seal(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path_factory.mktemp("home")
    for name in list(os.environ):
        if name.startswith(("GIT_", "CHECKPOINT_")):
            monkeypatch.delenv(name)
    template = home / "empty-template"
    template.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_TEMPLATE_DIR", str(template))
    monkeypatch.setenv("GIT_AUTHOR_NAME", "Test Author")
    monkeypatch.setenv("GIT_AUTHOR_EMAIL", "author@example.com")
    monkeypatch.setenv("GIT_COMMITTER_NAME", "Test Committer")
    monkeypatch.setenv("GIT_COMMITTER_EMAIL", "committer@example.com")
    monkeypatch.setenv("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
    monkeypatch.setenv("NO_COLOR", "1")
    # Each command runs in its own process, which the tests' fault injection (strace,
    # wrapper gits killing their caller) and process checks aim at; the tests of the
    # command server (tests/entry/test_server.py, the served Ctrl-C sweeps) turn it on.
    monkeypatch.setenv("GIT_CHECKPOINT_SERVER", "off")
    # The command servers the tests start exit soon after the last test that used them.
    monkeypatch.setenv("GIT_CHECKPOINT_SERVER_IDLE", "30")
    monkeypatch.setenv("PATH", BIN + os.pathsep + os.environ["PATH"])
    (home / ".gitconfig").write_text(
        '[init]\n\tdefaultBranch = main\n[protocol "file"]\n\tallow = always\n'
    )


class Repo:
    """A real repository in a temp dir, with helpers to drive git and git checkpoint."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def git(self, *args: str, check: bool = True, input: bytes | None = None) -> str:
        proc = subprocess.run(
            ["git", *args], cwd=self.path, capture_output=True, input=input, check=False
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"git {args} failed: {proc.stderr.decode()}")
        return proc.stdout.decode("utf-8", "surrogateescape")

    def cp(
        self,
        *args: str,
        expect: int | None = 0,
        cwd: Path | None = None,
        env: dict[str, str] | None = None,
        timeout: float = 120,
    ) -> subprocess.CompletedProcess[str]:
        """Run `git checkpoint ARGS` as a user would; assert its exit code."""
        full_env = {**os.environ, **(env or {})}
        proc = subprocess.run(
            ["git", "checkpoint", *args],
            cwd=cwd or self.path,
            capture_output=True,
            text=True,
            env=full_env,
            check=False,
            timeout=timeout,
        )
        if expect is not None and proc.returncode != expect:
            raise AssertionError(
                f"git checkpoint {' '.join(args)}: exit {proc.returncode}, wanted {expect}\n"
                f"stdout: {proc.stdout}\nstderr: {proc.stderr}"
            )
        return proc

    def cp_json(self, *args: str, expect: int | None = 0) -> Any:
        proc = self.cp(*args, "--json", expect=expect)
        return json.loads(proc.stdout)

    def write(self, rel: str, content: str | bytes, mode: int | None = None) -> Path:
        p = self.path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, str):
            content = content.encode()
        p.write_bytes(content)
        if mode is not None:
            p.chmod(mode)
        return p

    def commit_all(self, message: str = "commit") -> str:
        self.git("add", "-A")
        self.git("commit", "-q", "-m", message)
        return self.git("rev-parse", "HEAD").strip()


def make_repo(path: Path) -> Repo:
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return Repo(path)


@pytest.fixture
def empty_repo(tmp_path: Path) -> Repo:
    return make_repo(tmp_path / "work")


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[Repo]:
    r = make_repo(tmp_path / "work")
    r.write("README.md", "# project\n")
    r.write("src/app.py", "print('hello')\n")
    r.write(".gitignore", "*.log\nnode_modules/\n")
    r.commit_all("initial")
    yield r


@pytest.fixture
def base(tmp_path: Path) -> Repo:
    """Folders whose names sort around `/` (a, a/b, a.b, a-b, a0), a file beside them and
    an executable: where the graft (save/) and the quick check (fast/) could part from
    git's order."""
    r = make_repo(tmp_path / "work")
    for d in ("a", "a/b", "a.b", "a-b", "a0"):
        r.write(f"{d}/f.txt", f"{d}\n")
    r.write("a.txt", "a\n")
    r.write("run.sh", "#!/bin/sh\n", mode=0o755)
    r.commit_all("base")
    return r
