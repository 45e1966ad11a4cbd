"""What our hooks add to each tool call inside the real agents: the same scripted session
(N tool calls) timed with no hooks, with a hook that does nothing (`cat >/dev/null`: the
agent's own cost of running a hook), and with ours; several runs each, medians.

    V=~/.local/share/git-checkpoint/venv/bin
    PATH="$V:$PATH" $V/python -m tests.agents.latency [--runs 3] [--calls 10]

Two kinds of calls: harmless shell commands (`echo N`: our hook classifies and exits, no
git) and edits of new files (each one drifts from the latest checkpoint: our hook saves).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from ..conftest import make_repo
from .harness import AGENTS, HOOK, AgentRun, install_agents, open_network
from .harness import cache_dir as agent_cache
from .steps import shell, write

NOOP = '#!/bin/sh\ncat >/dev/null\n[ "$1" = gemini-cli ] && echo "{}"\nexit 0\n'


def session(agent: str, mode: str, kind: str, calls: int, bin_dir: Path, network: object) -> float:
    with tempfile.TemporaryDirectory() as scratch_dir:
        scratch = Path(scratch_dir)
        home = scratch / "home"
        home.mkdir()
        os.environ.update(HOME=str(home), GIT_CONFIG_NOSYSTEM="1")
        (home / ".gitconfig").write_text(
            "[user]\n\tname = Bench\n\temail = bench@example.com\n[init]\n\tdefaultBranch = main\n"
        )
        repo = make_repo(scratch / "work")
        repo.write("README.md", "# bench\n")
        repo.commit_all("initial")
        real = Path(sys.executable).parent / HOOK
        run = AgentRun(agent, repo, home, scratch / "run", bin_dir, network, real)  # type: ignore[arg-type]
        run.scratch.mkdir()
        run.prepare()
        if agent == "codex":
            subprocess.run(
                ["git", "checkpoint", "hooks", "install", "--agent", "codex", "--trust"],
                cwd=repo.path,
                env=run.base_env_without_model(),
                check=True,
                capture_output=True,
            )
        shim = scratch / "run" / "shim" / HOOK
        if mode == "none":
            repo.cp("hooks", "uninstall", "--agent", agent)
        elif mode == "noop":
            shim.write_text(NOOP)
        else:
            shim.unlink()
            shim.symlink_to(real)
        if kind == "shell":
            steps = [s for i in range(calls) for s in shell(agent, f"echo {i}")]
        else:
            steps = [s for i in range(calls) for s in write(f"new/f{i}.txt", f"{i}\n")]
        result = run.run("bench", steps)
        result.check()
        return result.seconds


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--calls", type=int, default=10)
    parser.add_argument("--agent", action="append", choices=AGENTS)
    args = parser.parse_args(argv)
    bin_dir = install_agents(agent_cache())
    net_dir = Path(tempfile.mkdtemp())
    network = open_network(net_dir)
    print(f"network isolated: {network.isolated}; {args.calls} tool calls a session")
    print(
        f"{'agent':<12} {'calls':<6} {'none s':>8} {'no-op s':>8} {'ours s':>8} "
        f"{'hook ms/call':>13} {'ours ms/call':>13}"
    )
    try:
        for agent in args.agent or AGENTS:
            for kind in ("shell", "edit"):
                med = {}
                for mode in ("none", "noop", "ours"):
                    times = [
                        session(agent, mode, kind, args.calls, bin_dir, network)
                        for _ in range(args.runs)
                    ]
                    med[mode] = statistics.median(times)
                per_hook = (med["noop"] - med["none"]) / args.calls * 1000
                per_ours = (med["ours"] - med["noop"]) / args.calls * 1000
                print(
                    f"{agent:<12} {kind:<6} {med['none']:>8.2f} {med['noop']:>8.2f} "
                    f"{med['ours']:>8.2f} {per_hook:>13.0f} {per_ours:>13.0f}",
                    flush=True,
                )
    finally:
        network.close()
        shutil.rmtree(net_dir, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
