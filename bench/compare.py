#!/usr/bin/env python3
"""Two runs of the benchmark side by side (their --json files): for each row and size,
the median of each run and the change, both in milliseconds and as the ratio to `git
status` of the same run and size (which takes out a machine that is busier or quieter
in one run than in the other). Rows of git's own commands are shown too: their change
is the noise between the runs.

    python bench/compare.py BEFORE.json AFTER.json [--limit 10]

Exit status 1 when one of our rows is slower than BEFORE by more than --limit percent in
both measures.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

# Rows that time git (or the seed's shell commands), not git-checkpoint.
THEIRS = ("status", "stash", "checkout", "seed", "store", "floor")


def medians(run: dict[str, Any]) -> dict[tuple[str, int], tuple[str, float]]:
    return {
        (row["key"], row["files"]): (row["operation"], row["median_ms"])
        for row in run["rows"]
        if row.get("median_ms") is not None
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("before", type=Path)
    ap.add_argument("after", type=Path)
    ap.add_argument("--limit", type=float, default=10.0, help="percent slower that counts")
    args = ap.parse_args(argv)
    runs = [json.loads(p.read_text()) for p in (args.before, args.after)]
    old, new = (medians(r) for r in runs)
    for label, run in zip(("before", "after"), runs, strict=True):
        loads = ", ".join(f"{x[0]:.1f}" for x in run["loads"])
        print(f"{label}: {run['machine']}; load {loads}")
    print()
    columns = ["operation", "files", "before ms", "after ms", "change"]
    print("| " + " | ".join([*columns, "change of the ratio to git status"]) + " |")
    print("|---|---:|---:|---:|---:|---:|")
    slower = []
    for key, files in sorted(old, key=lambda k: (k[1], list(old).index(k))):
        if (key, files) not in new:
            continue
        name, before = old[key, files]
        after = new[key, files][1]
        floor_old, floor_new = old.get(("status", files)), new.get(("status", files))
        change = (after / before - 1) * 100
        ratio_change = None
        if floor_old and floor_new:
            ratio_change = ((after / floor_new[1]) / (before / floor_old[1]) - 1) * 100
        ours = not key.startswith(THEIRS)
        if ours and change > args.limit and (ratio_change is None or ratio_change > args.limit):
            slower.append(f"{name} at {files:,} files")
        shown = "-" if ratio_change is None else f"{ratio_change:+.0f} %"
        mark = "" if ours else " (git)"
        cells = [f"{name}{mark}", f"{files:,}", f"{before:.1f}", f"{after:.1f}", f"{change:+.0f} %"]
        print("| " + " | ".join([*cells, shown]) + " |")
    print()
    if slower:
        print(f"slower by more than {args.limit:g} % in both measures: " + "; ".join(slower))
        return 1
    print(f"no row of ours slower by more than {args.limit:g} % in both measures")
    return 0


if __name__ == "__main__":
    sys.exit(main())
