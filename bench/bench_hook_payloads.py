#!/usr/bin/env python3
"""How long the agent hook takes to answer hostile or heavy payloads, up to 1 MB: the
hook runs before every tool call of an agent, so whatever the payload it must answer
quickly (a line too long, or too deep, to judge is called risky without being judged to
the end). Each payload goes to `git-checkpoint-hook claude-code PreToolUse` as a Bash call
in a repository where nothing changed since the last checkpoint, so the time is the
judging and the quick check, not a save.

    python bench/bench_hook_payloads.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

KIB = 1024


def payloads(cwd: str) -> dict[str, dict[str, object]]:
    def bash(command: str, where: str = cwd) -> dict[str, object]:
        return {
            "session_id": "bench",
            "cwd": where,
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": command},
        }

    return {
        "ls -la": bash("ls -la"),
        "env x 100,000 (390 KiB)": bash("env " * 100_000 + "ls"),
        "-exec x 10,000": bash("find . " + "-exec true {} ; " * 10_000),
        "a 200 KB cwd": bash("echo x > out.txt", where="/" + "a/" * 100_000),
        "1 MB of harmless commands": bash("; ".join(["git status"] * (KIB * KIB // 12))),
        "1 MB of one quoted word": bash("echo '" + "x" * (KIB * KIB) + "'"),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp) / "work"
        work.mkdir()
        who = {
            f"GIT_{w}_{k}": v
            for w in ("AUTHOR", "COMMITTER")
            for k, v in (("NAME", "b"), ("EMAIL", "b@b"))
        }
        for argv in (["init", "-q"], ["commit", "-q", "--allow-empty", "-m", "base"]):
            subprocess.run(["git", *argv], cwd=work, check=True, env={**os.environ, **who})
        (work / "a.txt").write_text("a\n")
        # Aged past the racy window before the save (a file changed within a second of a
        # scan is hashed, not trusted by its stat data, by git and by the quick check
        # alike): the steady state is timed.
        time.sleep(1.5)
        subprocess.run(["git", "checkpoint", "save"], cwd=work, check=True, capture_output=True)
        print(f"medians of {args.repeat}, whole process (ms)")
        print("| payload | size | hook answers in | under 100 ms |")
        print("|---|---:|---:|---|")
        for name, payload in payloads(str(work)).items():
            data = json.dumps(payload).encode()
            times = []
            for _ in range(args.repeat):
                start = time.perf_counter()
                subprocess.run(["git-checkpoint-hook", "claude-code", "PreToolUse"], input=data,
                               cwd=work, capture_output=True, check=True)  # fmt: skip
                times.append((time.perf_counter() - start) * 1000)
            ms = statistics.median(times)
            size = f"{len(data) / KIB:.0f} KiB"
            print(f"| {name} | {size} | {ms:.0f} | {'yes' if ms < 100 else 'no'} |")


if __name__ == "__main__":
    main()
