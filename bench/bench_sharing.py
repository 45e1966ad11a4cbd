#!/usr/bin/env python3
"""What sharing costs: push and fetch of N checkpoints of a repository of F files through
smart HTTP on loopback (`git http-backend` behind the tests' small server, which counts
the bytes of every request and response), against the size of the changes; and the
secret scanner's speed on an overlay of a given size.

    python bench/bench_sharing.py --files 10000 --checkpoints 50 --overlay-mb 10

Each checkpoint is an agent-like change: 10 tracked files modified (a line each) and 5
new untracked files of about 2 KB. "size of the changes" counts the bytes of every new
file version those changes create (what a naive copy would send), and the same gzipped.
"""

from __future__ import annotations

import argparse
import gzip
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.servers import bare_repo, http_server_counted

WORDS = [
    *("def return self value import class for in if else while try except with as yield",),
    *("lambda none true false data item index count total result config path name list",),
    *("dict node tree branch commit checkpoint restore verify agent task attempt",),
]
WORDS = " ".join(WORDS).split()


def text(rng: random.Random, size: int) -> str:
    lines, total = [], 0
    while total < size:
        words = [rng.choice(WORDS) for _ in range(rng.randint(3, 10))]
        line = "    " * rng.randint(0, 3) + " ".join(words) + f" = {rng.randint(0, 10**6)}\n"
        lines.append(line)
        total += len(line)
    return "".join(lines)


def git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, env=env, check=False
    )
    if proc.returncode:
        raise SystemExit(f"git {' '.join(args)}: {proc.stderr}")
    return proc.stdout


def cp(cwd: Path, *args: str) -> tuple[float, str]:
    start = time.perf_counter()
    proc = subprocess.run(
        ["git", "checkpoint", *args], cwd=cwd, capture_output=True, text=True, check=False
    )
    took = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"git checkpoint {' '.join(args)}: {proc.stdout}{proc.stderr}")
    return took, proc.stdout


def build_repo(path: Path, files: int, rng: random.Random) -> list[str]:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    names = []
    for i in range(files):
        rel = f"src/m{i % 20}/d{i % 7}/f{i}.py"
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(text(rng, 2000))
        names.append(rel)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "base")
    return names


def bench_sharing(root: Path, files: int, checkpoints: int, rng: random.Random) -> None:
    a = root / "a"
    names = build_repo(a, files, rng)
    (root / "server").mkdir()
    bare_repo(root / "server" / "project.git")
    with http_server_counted(root / "server") as (url, counter):
        git(a, "remote", "add", "origin", url + "project.git")
        git(a, "push", "-q", "origin", "main")
        raw = 0
        packed = bytearray()
        save_times = []
        for n in range(checkpoints):
            for rel in rng.sample(names, 10):
                extra = f"# attempt {n}: {rng.random()}\n"
                with open(a / rel, "a") as fh:
                    fh.write(extra)
                content = (a / rel).read_bytes()
                raw += len(content)
                packed += content
            for k in range(5):
                new = a / f"tests/fixtures/agent/n{n}_{k}.py"
                new.parent.mkdir(parents=True, exist_ok=True)
                body = text(rng, 2000).encode()
                new.write_bytes(body)
                raw += len(body)
                packed += body
            took, _ = cp(a, "save", "-m", f"attempt {n}")
            save_times.append(took)
        counter.bytes_in = counter.bytes_out = 0
        push_s, out = cp(a, "push")
        pushed_in = counter.bytes_in
        b = root / "b"
        git(root, "clone", "-q", url + "project.git", str(b))
        counter.bytes_in = counter.bytes_out = 0
        fetch_s, fout = cp(b, "fetch")
        fetched_out = counter.bytes_out
        again_s, _ = cp(a, "push")
        scan_cost = {}
        for mode in ("ignore", "warn", "ignore", "warn", "ignore", "warn"):
            git(a, "config", "checkpoint.secretsOnSave", mode)
            for rel in rng.sample(names, 10):
                with open(a / rel, "a") as fh:
                    fh.write(f"# more {rng.random()}\n")
            scan_cost.setdefault(mode, []).append(cp(a, "save")[0])
    gz = len(gzip.compress(bytes(packed), 6))
    print(f"repository: {files} files, {checkpoints} checkpoints (10 modified + 5 new files each)")
    print(f"save (median): {statistics.median(save_times) * 1000:.0f} ms")
    print(f"push {checkpoints} checkpoints: {push_s:.2f} s, {pushed_in / 1024:.0f} KiB sent")
    print(
        f"fetch {checkpoints} checkpoints: {fetch_s:.2f} s, {fetched_out / 1024:.0f} KiB received"
    )
    print(f"push again (nothing new): {again_s:.2f} s")
    print(
        "save of a 10-file change, secrets.on_save ignore / warn (median of 3): "
        f"{statistics.median(scan_cost['ignore']) * 1000:.0f} / "
        f"{statistics.median(scan_cost['warn']) * 1000:.0f} ms"
    )
    print(f"size of the changes: {raw / 1024:.0f} KiB raw, {gz / 1024:.0f} KiB gzipped")
    print(f"push bytes / raw changes: {pushed_in / raw:.2f}; / gzipped: {pushed_in / gz:.2f}")
    print(out.strip().splitlines()[0])
    print(fout.strip().splitlines()[0])


def bench_scanner(root: Path, megabytes: int, rng: random.Random) -> None:
    from git_checkpoint.save.secrets import scan_text

    blobs = []
    total = 0
    while total < megabytes * 1024 * 1024:
        body = text(rng, rng.randint(2000, 30000)).encode()
        blobs.append(body)
        total += len(body)
    start = time.perf_counter()
    found = sum(len(scan_text(f"f{i}.py", b)) for i, b in enumerate(blobs))
    ours = time.perf_counter() - start
    repo = root / "scan"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "commit", "-q", "--allow-empty", "-m", "base")
    (repo / ".checkpoint.yaml").write_text("limits: {overlay_max_bytes: 100MiB}\n")
    for i, body in enumerate(blobs):
        (repo / f"overlay/f{i}.py").parent.mkdir(exist_ok=True)
        (repo / f"overlay/f{i}.py").write_bytes(body)
    save_s, _ = cp(repo, "save", "--auto")  # auto + warn: saved without the scan
    scan_s, _ = cp(repo, "scan")
    print(
        f"scanner on {total / 1024 / 1024:.1f} MB in {len(blobs)} files: {ours:.2f} s in-process "
        f"({total / 1024 / 1024 / ours:.1f} MB/s), {found} findings"
    )
    print(f"git checkpoint scan of that overlay: {scan_s:.2f} s")
    print(f"(save --auto of it, which skips the scan in warn mode: {save_s:.2f} s)")
    if os.environ.get("BENCH_STOCK_DETECT_SECRETS"):
        from detect_secrets.core import scan
        from detect_secrets.settings import default_settings

        start = time.perf_counter()
        with default_settings():
            for i in range(len(blobs)):
                list(scan.scan_file(str(repo / f"overlay/f{i}.py")))
        print(
            f"stock detect-secrets scan_file on the same files: {time.perf_counter() - start:.2f} s"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=10000)
    parser.add_argument("--checkpoints", type=int, default=50)
    parser.add_argument("--overlay-mb", type=int, default=10)
    parser.add_argument("--skip-sharing", action="store_true")
    args = parser.parse_args()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory(prefix="bench-sharing-") as tmp:
        root = Path(tmp)
        if not args.skip_sharing:
            bench_sharing(root, args.files, args.checkpoints, rng)
        bench_scanner(root, args.overlay_mb, rng)


if __name__ == "__main__":
    main()
