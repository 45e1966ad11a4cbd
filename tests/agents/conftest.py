"""Fixtures for driving the real agent programs: the pinned agents (installed once into
the cache), one network namespace per test run, and an agent set up in a fresh project
with our hooks installed."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ..conftest import Repo, make_repo
from ..helpers import fingerprint
from .harness import (
    AGENT_DIRS,
    HOOK,
    AgentRun,
    Network,
    cache_dir,
    install_agents,
    open_network,
)

# The project every scenario starts from: text, bytes that are not ASCII, an executable,
# a subfolder with its own build output.
PROJECT = {
    "README.md": (b"# demo\n", 0o644),
    "src/app.py": (b"print('hello')\n", 0o644),
    "src/util.py": ("naïve = 'ü'\n".encode(), 0o644),
    "run.sh": (b"#!/bin/sh\necho run\n", 0o755),
    "sub/notes.md": (b"notes\n", 0o644),
    "sub/build/out.txt": (b"built\n", 0o644),
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.agents)


@pytest.fixture(scope="session")
def agents_bin() -> Path:
    return install_agents(cache_dir())


@pytest.fixture(scope="session")
def network(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Network]:
    net = open_network(tmp_path_factory.mktemp("network"))
    yield net
    net.close()


@pytest.fixture
def agent_in_project(agents_bin: Path, network: Network, tmp_path: Path) -> Callable[..., AgentRun]:
    """An agent in a fresh committed project, our hooks installed (and, for Codex,
    trusted with `hooks install --trust`)."""

    def make(agent: str, *, trust: bool = True) -> AgentRun:
        repo = make_repo(tmp_path / "work")
        for rel, (data, mode) in PROJECT.items():
            repo.write(rel, data, mode)
        repo.commit_all("initial")
        run = AgentRun(
            agent,
            repo,
            Path.home(),  # the test's own (tests/conftest.py seals it)
            tmp_path / "scratch",
            agents_bin,
            network,
            Path(sys.executable).parent / HOOK,
        )
        run.scratch.mkdir()
        run.prepare()
        if agent == "codex" and trust:
            trust_codex_hooks(run)
        return run

    return make


def trust_codex_hooks(run: AgentRun) -> subprocess.CompletedProcess[str]:
    """`hooks install --agent codex --trust`, in the agents' network, with their PATH."""
    env = run.base_env_without_model()
    proc = subprocess.run(
        run.network.wrap(
            ["git", "checkpoint", "hooks", "install", "--agent", "codex", "--trust"], run.repo.path
        ),
        cwd=run.repo.path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "trusted in codex" in proc.stdout, proc.stdout
    return proc


def project_files(repo: Repo) -> dict[str, tuple[str, bytes, bool]]:
    """The project's files as a user sees them (not the agents' own folders)."""
    return fingerprint(repo.path, skip=AGENT_DIRS)
