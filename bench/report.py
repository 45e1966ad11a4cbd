"""The benchmark's report: tables per size, the performance targets (met / missed),
growth from the smallest to the largest size, storage, memory, and the chart."""

from __future__ import annotations

import datetime as dt
import os
import platform
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ORDER = [
    "status", "save", "auto_unchanged", "auto_changed", "hook_harmless", "stash_push",
    "stash_apply", "stash_both", "seed_save", "restore_10", "undo_10", "checkout_10",
    "stash_restore_10", "seed_restore_10", "restore_1000", "undo_1000", "checkout_1000",
    "stash_restore_1000", "seed_restore_1000", "store_1000", "store_fast_1000", "floor_1000",
]  # fmt: skip
CHARTED = ["status", "save", "auto_unchanged", "auto_changed", "restore_10", "stash_both",
           "checkout_1000", "restore_1000"]  # fmt: skip


@dataclass
class Result:
    machine: str
    command: str
    loads: list[tuple[float, float, float]]
    repeat: int
    rows: list[Any]  # bench.Row
    extra: dict[int, dict[str, Any]]
    problems: list[str]
    hook: str | None


def machine_line(cp_exe: str) -> str:
    def out(*argv: str) -> str:
        return subprocess.run(argv, capture_output=True, text=True, check=False).stdout.strip()

    cpu = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (
        f"{os.cpu_count()} cores ({cpu or platform.machine()}), {out('git', '--version')}, "
        f"Python {platform.python_version()}, {platform.system()} {platform.release()}; "
        f"{out(cp_exe, '--version') or 'git-checkpoint'}"
    )


def _median(result: Result, key: str, n: int) -> float | None:
    for row in result.rows:
        if row.key == key and row.files == n:
            return row.median_ms  # type: ignore[no-any-return]
    return None


def _rss(result: Result, key: str, n: int) -> int | None:
    for row in result.rows:
        if row.key == key and row.files == n:
            return row.peak_rss_kb  # type: ignore[no-any-return]
    return None


def _fmt(ms: float | None) -> str:
    if ms is None:
        return "-"
    return f"{ms:.1f}" if ms < 100 else f"{ms:.0f}"


@dataclass
class Target:
    area: str  # what the target is about: save, restore, hook, storage, memory
    text: str
    size: int
    measure: Callable[[Result], tuple[float, float] | None]  # (value, limit)
    unit: str = "ms"


def _ratio_target(
    key: str, n: int, factor: float, plus: float = 0.0, floor: str = "status"
) -> Callable[[Result], tuple[float, float] | None]:
    def get(r: Result) -> tuple[float, float] | None:
        v, f = _median(r, key, n), _median(r, floor, n)
        return None if v is None or f is None else (v, factor * f + plus)

    return get


def _save_restore(r: Result) -> tuple[float, float] | None:
    s, rs, st = (
        _median(r, "save", 100000),
        _median(r, "restore_10", 100000),
        _median(r, "stash_both", 100000),
    )
    return None if None in (s, rs, st) else (s + rs, 0.6 * st)  # type: ignore[operator]


def _storage(r: Result) -> tuple[float, float] | None:
    sizes = sorted(r.extra)
    if not sizes or "storage" not in r.extra[sizes[-1]]:
        return None
    s = r.extra[sizes[-1]]["storage"]
    return float(s.get("git_gc_bytes", s["git_bytes"])), 0.05 * s["tar_bytes"]


def _memory(key: str) -> Callable[[Result], tuple[float, float] | None]:
    def get(r: Result) -> tuple[float, float] | None:
        v, f = _rss(r, key, 100000), _rss(r, "status", 100000)
        return None if v is None or f is None else (float(v), 1.5 * f)

    return get


def _absolute(
    key: str, n: int | None, limit: float
) -> Callable[[Result], tuple[float, float] | None]:
    def get(r: Result) -> tuple[float, float] | None:
        sizes = [n] if n else sorted({row.files for row in r.rows})
        values = [v for s in sizes if (v := _median(r, key, s)) is not None]
        return (max(values), limit) if values else None

    return get


TARGETS = [
    Target("save", "save, 10 changed files ≤ 1.4 × git status", 100000,
           _ratio_target("save", 100000, 1.4)),
    Target("save", "save, 10 changed files ≤ git status + 60 ms", 10000,
           _ratio_target("save", 10000, 1.0, 60)),
    Target("restore", "restore of a 10-file difference ≤ 1.9 × git status", 100000,
           _ratio_target("restore_10", 100000, 1.9)),
    Target("restore", "save + restore ≤ 0.6 × (stash push -u + stash apply --index)", 100000,
           _save_restore),
    Target("restore", "restore of a 1,000-file difference ≤ 1.5 × git checkout <A> -- .", 10000,
           _ratio_target("restore_1000", 10000, 1.5, floor="checkout_1000")),
    Target("storage", "storage of 50 small-change checkpoints (added after gc) ≤ 5 % of tar", 0,
           _storage, "bytes"),
    Target("memory", "peak RSS of save ≤ 1.5 × git status", 100000, _memory("save"), "KiB"),
    Target("memory", "peak RSS of restore ≤ 1.5 × git status", 100000, _memory("restore_10"),
           "KiB"),
    Target("hook", "harmless Bash command through the hook ≤ 50 ms (any size)", 0,
           _absolute("hook_harmless", None, 50)),
    Target("hook", "unchanged auto-save ≤ 80 ms", 10000, _absolute("auto_unchanged", 10000, 80)),
    Target("hook", "unchanged auto-save ≤ 1.3 × git status", 100000,
           _ratio_target("auto_unchanged", 100000, 1.3)),
    *(
        Target("hook", "unchanged auto-save ≤ 1.3 × git status + 25 ms", n,
               _ratio_target("auto_unchanged", n, 1.3, 25))
        for n in (1000, 10000, 100000)
    ),
    Target("hook", "auto-save, 10 changed files ≤ 1.5 × git status + 60 ms", 10000,
           _ratio_target("auto_changed", 10000, 1.5, 60)),
    Target("hook", "auto-save, 10 changed files ≤ 1.5 × git status + 60 ms", 100000,
           _ratio_target("auto_changed", 100000, 1.5, 60)),
]  # fmt: skip


def targets_table(result: Result) -> list[str]:
    out = ["| area | target | size | measured | limit | |", "|---|---|---:|---:|---:|---|"]
    for t in TARGETS:
        got = t.measure(result)
        size = f"{t.size:,}" if t.size else "largest run" if t.unit == "bytes" else "all run"
        if got is None:
            out.append(f"| {t.area} | {t.text} | {size} | - | - | not run |")
            continue
        value, limit = got
        shown = (lambda x: f"{x:,.0f}") if t.unit != "ms" else _fmt
        verdict = "**met**" if value <= limit else "**missed**"
        out.append(
            f"| {t.area} | {t.text} | {size} | {shown(value)} {t.unit} | "
            f"{shown(limit)} {t.unit} | {verdict} |"
        )
    return out


def floor_note(result: Result) -> list[str]:
    """The 1,000-file restore beside its floor, all measured in the same run: finding
    what the files hold now (`git status`), storing them as fast as git can, and
    writing the files it brings back (`git checkout`)."""
    out = []
    for n in sorted({row.files for row in result.rows}):
        store, checkout = _median(result, "store_fast_1000", n), _median(result, "checkout_1000", n)
        status, ours = _median(result, "status", n), _median(result, "restore_1000", n)
        if store and checkout and status and ours:
            floor = store + checkout
            out.append(
                f"| {n:,} | {_fmt(status)} | {_fmt(store)} | {_fmt(checkout)} | "
                f"{_fmt(floor)} ({floor / checkout:.2f}) | "
                f"{_fmt(floor + status)} ({(floor + status) / checkout:.2f}) | "
                f"{_fmt(1.5 * checkout)} | {_fmt(ours)} ({ours / checkout:.2f}) |"
            )
    if not out:
        return []
    return [
        "",
        "The 1,000-file restore beside its floor. Any restore that keeps what it "
        "overwrites must find what the files hold now (a scan: `git status`), store them "
        "(the fastest git offers: two `hash-object -w` side by side, uncompressed loose "
        "objects, as the safety checkpoint does) and write what it brings back (`git "
        "checkout <A> -- .`). In brackets: × `git checkout`, of which the target allows 1.5.",
        "",
        "| files | status | store | checkout | store + checkout | + status | limit | restore |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
        *out,
    ]


def _fit(xs: list[int], ys: list[float]) -> tuple[float, float]:
    """Least squares y = a + b·x."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    var = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / var if var else 0.0
    return my - b * mx, b


def markdown(result: Result, chart: str | None = None) -> str:
    sizes = sorted({row.files for row in result.rows})
    labels: dict[str, str] = {}
    for row in result.rows:
        labels.setdefault(row.key, row.operation)
    keys = [k for k in ORDER if k in labels]
    load_text = ", ".join(f"{a:.1f}" for a, _, _ in result.loads)
    lines = [
        "# Benchmark: git checkpoint beside git itself",
        "",
        f"Measured {dt.date.today().isoformat()} on {result.machine}.",
        f"Load average (1 min) at the start and after each size: {load_text} "
        "(a machine shared with other work: read ratios, not absolutes).",
        "",
        f"    {result.command}",
        "",
        f"Medians of {result.repeat} rounds, whole process (Python start-up included), the "
        "operations alternating within each round; in brackets the ratio to `git status "
        "--porcelain` of the same size. The agent's change: 10 tracked files modified, 5 new "
        "untracked files, 100 fixture files (2-10 KB) in an ignored folder that "
        "`.checkpoint.yaml` includes; "
        "node_modules/ of 20,000 ignored files. Auto-saves run through "
        + ("the Claude Code hook (`git-checkpoint-hook`)." if result.hook else "`save --auto`."),
        "",
        "| operation | " + " | ".join(f"{n:,} files" for n in sizes) + " |",
        "|---|" + "---:|" * len(sizes),
    ]
    for key in keys:
        cells = []
        for n in sizes:
            v, f = _median(result, key, n), _median(result, "status", n)
            cells.append("-" if v is None else f"{_fmt(v)} ({v / f:.2f})" if f else _fmt(v))
        lines.append(f"| {labels[key]} | " + " | ".join(cells) + " |")
    lines += ["", "## Targets", "", *targets_table(result)]
    lines += floor_note(result)
    lines += [
        "",
        "## Peak RSS (KiB; the process and the children it waited for, or the command "
        "server's worker that ran it)",
        "",
        "| operation | " + " | ".join(f"{n:,}" for n in sizes) + " |",
        "|---|" + "---:|" * len(sizes),
    ]
    for key in ("status", "save", "auto_unchanged", "restore_10", "restore_1000", "stash_both"):
        if key in labels:
            cells = [f"{v:,}" if (v := _rss(result, key, n)) else "-" for n in sizes]
            lines.append(f"| {labels[key]} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "## Storage",
        "",
        "What the checkpoints add to the repository (every object they reach that HEAD "
        "does not), against the seed's patch + tar.gz for each checkpoint: as saved (loose "
        "objects, zlib level 1); as a pack of their own (`git pack-objects`, no delta "
        "against HEAD's objects); and as what they add to a gc'd repository (a thin pack "
        "against HEAD: `pack-objects --revs --thin`, deltas may name HEAD's objects as in "
        "the repository's own pack; the seed's patch is a diff against HEAD too). The "
        "target is checked on the last.",
        "",
        "| files | checkpoints | loose | own pack | added after gc | patch + tar.gz "
        "| loose | own pack | after gc |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n in sizes:
        s = result.extra.get(n, {}).get("storage")
        if s:
            packed = s.get("git_packed_bytes", s["git_bytes"])
            grown = s.get("git_gc_bytes", packed)
            tar = s["tar_bytes"]
            lines.append(
                f"| {n:,} | {s['checkpoints']} | {s['git_bytes']:,} | {packed:,} | "
                f"{grown:,} | {tar:,} | {s['git_bytes'] / tar:.1%} | {packed / tar:.1%} | "
                f"{grown / tar:.1%} |"
            )
    if len(sizes) > 1:
        lines += [
            "",
            f"## Growth from {sizes[0]:,} to {sizes[-1]:,} files",
            "",
            "Least-squares line through the medians: fixed cost (ms) + ms per 10,000 "
            "files; `git status` is the floor every scan pays.",
            "",
            "| operation | fixed ms | ms per 10k files | ratio at smallest → largest |",
            "|---|---:|---:|---:|",
        ]
        for key in keys:
            pts = [(n, v) for n in sizes if (v := _median(result, key, n)) is not None]
            if len(pts) < 2:
                continue
            a, b = _fit([p[0] for p in pts], [p[1] for p in pts])
            f0, f1 = _median(result, "status", pts[0][0]), _median(result, "status", pts[-1][0])
            ratio = f"{pts[0][1] / f0:.2f} → {pts[-1][1] / f1:.2f}" if f0 and f1 else "-"
            lines.append(f"| {labels[key]} | {a:.0f} | {b * 10000:.1f} | {ratio} |")
    if chart:
        lines += ["", f"![growth chart]({Path(chart).name})"]
    if result.problems:
        lines += ["", "## CORRECTNESS PROBLEMS", ""]
        lines += [f"- {p}" for p in dict.fromkeys(result.problems)]
    return "\n".join(lines) + "\n"


def as_json(result: Result) -> dict[str, Any]:
    data: dict[str, Any] = {
        "machine": result.machine, "command": result.command, "loads": result.loads,
        "repeat": result.repeat, "extra": result.extra, "problems": result.problems,
    }  # fmt: skip
    data["rows"] = [
        {**vars(r), "median_ms": r.median_ms, "peak_rss_kb": r.peak_rss_kb} for r in result.rows
    ]
    data["targets"] = []
    for t in TARGETS:
        got = t.measure(result)
        data["targets"].append(
            {
                "area": t.area,
                "target": t.text,
                "size": t.size,
                "value": got[0] if got else None,
                "limit": got[1] if got else None,
                "met": None if got is None else got[0] <= got[1],
            }
        )
    return data


def chart(result: Result, path: Path) -> None:
    """ms against files, log-log, one line per operation; skipped without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("bench: no matplotlib (pip install -e '.[bench]'): no chart", flush=True)
        return
    sizes = sorted({row.files for row in result.rows})
    fig, ax = plt.subplots(figsize=(8, 5))
    for key in CHARTED:
        pts = [(n, v) for n in sizes if (v := _median(result, key, n)) is not None]
        label = next((r.operation for r in result.rows if r.key == key), key)
        if pts:
            style = "k--" if key == "status" else "-o"
            ax.plot([p[0] for p in pts], [p[1] for p in pts], style, label=label)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("tracked files")
    ax.set_ylabel("median ms (whole process)")
    ax.set_title(f"git checkpoint vs git, {dt.date.today().isoformat()}", fontsize=10)
    ax.text(0.01, -0.16, result.machine[:110], transform=ax.transAxes, fontsize=7)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
