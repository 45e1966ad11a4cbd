#!/usr/bin/env python3
"""Two builds of git-checkpoint side by side, on the same repositories, in one run.

bench/compare.py sets two runs of bench/bench.py beside each other; on a machine shared
with other work the load moves between runs, and git's own rows move with it by 10-30 %.
This runs bench/bench.py's rounds (save, auto-saves, the hook, restore and undo of 10
and of 1,000 files) with build A and build B taking turns, round by round, on one
repository per size, so that both see the same load. Each build is a folder holding its
`git-checkpoint` and `git-checkpoint-hook` launchers.

    python bench/ab.py --a /path/to/old/bin --b ~/.local/share/git-checkpoint/bin \\
        [--sizes 1000,10000] [--rounds 5] [--markdown FILE]

Standard library only.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import synth

import bench

# Rows whose key starts so are timed of git-checkpoint; the others are git's own, timed
# too as a control of the load (they should read 1.00).
OURS = ("save", "auto", "hook", "restore", "undo")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--a", type=Path, required=True, help="build A's launcher folder (before)")
    p.add_argument("--b", type=Path, required=True, help="build B's launcher folder (after)")
    p.add_argument("--sizes", default="1000,10000", help="comma-separated tracked-file counts")
    p.add_argument("--rounds", type=int, default=5, help="timed rounds per build (median)")
    p.add_argument("--restore-files", type=int, default=1000, help="files in the big restore")
    p.add_argument("--node-modules", type=int, default=20000, help="ignored node_modules/ files")
    p.add_argument("--seed", type=int, default=1, help="random seed for the repositories")
    p.add_argument("--cache", default="/tmp/bench-cache", help="where generated repos are kept")
    p.add_argument("--markdown", metavar="FILE", help="write the table as Markdown")
    args = p.parse_args(argv)
    args.size_list = [int(s) for s in args.sizes.split(",") if s.strip()]
    for side in (args.a, args.b):
        if not (side / "git-checkpoint").exists():
            p.error(f"{side}: no git-checkpoint launcher there")
    return args


def one_round(b: bench.SizeBench, big: int) -> None:
    """One counted round of every row: bench.py's own methods, with one round each; a new
    nonce makes each round's change one no earlier round saved."""
    b.nonce = os.urandom(4).hex()
    b.main_rounds()
    for count in sorted({min(10, big), big}):
        b.restore_rounds(count)


def table(pairs: list[tuple[int, bench.SizeBench, bench.SizeBench]]) -> str:
    lines = [
        "| operation | files | A ms | B ms | B / A |",
        "|---|---:|---:|---:|---:|",
    ]
    for n, a, b in pairs:
        for key, row in a.rows.items():
            other = b.rows.get(key)
            if other is None or not row.samples_ms or not other.samples_ms:
                continue
            ma, mb = statistics.median(row.samples_ms), statistics.median(other.samples_ms)
            mark = "" if key.split("_")[0] in OURS else " (git)"
            lines.append(f"| {row.operation}{mark} | {n:,} | {ma:.1f} | {mb:.1f} | {mb / ma:.2f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    home = Path(tempfile.mkdtemp(prefix="git-checkpoint-ab-"))
    loads = [os.getloadavg()[0]]
    pairs: list[tuple[int, bench.SizeBench, bench.SizeBench]] = []
    try:
        for size in args.size_list:
            args.current_size = size
            args.warmup, args.repeat = 0, 1  # each call of a bench.py method: one round
            envs = [bench.hermetic_env(home, side) for side in (args.a, args.b)]
            repo = synth.cached(
                Path(args.cache), size, args.node_modules, args.seed, envs[1], args.restore_files
            )
            hooks = [shutil.which("git-checkpoint-hook", path=env["PATH"]) for env in envs]
            sides = [
                bench.SizeBench(repo, env, args, h) for env, h in zip(envs, hooks, strict=True)
            ]
            big = min(args.restore_files, len(repo.attempt_pool))
            for r in range(args.rounds + 1):  # the first round of each side is not counted
                for side in sides if r % 2 == 0 else reversed(sides):
                    print(f"[{size}] round {r}, build {'AB'[sides.index(side)]}", file=sys.stderr)
                    kept = {k: (list(v.samples_ms), list(v.rss_kb)) for k, v in side.rows.items()}
                    one_round(side, big)
                    if r == 0:
                        for key, row in side.rows.items():
                            row.samples_ms, row.rss_kb = kept.get(key, ([], []))
            for side in sides:
                label = "`git stash push -u` + `apply --index`"
                side.combine("stash_both", label, "stash_push", "stash_apply")
                shutil.rmtree(side.scratch, ignore_errors=True)
            synth.reset(repo, envs[1])
            synth.maintained(repo.path, envs[1])
            pairs.append((size, sides[0], sides[1]))
            loads.append(os.getloadavg()[0])
    except bench.BenchError as exc:
        print(f"ab: {exc}", file=sys.stderr)
        return 2
    finally:
        shutil.rmtree(home, ignore_errors=True)
    problems = [p for _, a, b in pairs for p in a.problems + b.problems]
    text = (
        f"A: {args.a}\nB: {args.b}\n"
        f"{args.rounds} rounds per build, alternating (A B, B A, ...), medians; "
        f"load average (1 min): {', '.join(f'{x:.1f}' for x in loads)}\n\n"
        "    python bench/ab.py " + " ".join(argv) + "\n\n" + table(pairs)
    )
    text += "".join(f"\nproblem: {p}" for p in problems)
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
