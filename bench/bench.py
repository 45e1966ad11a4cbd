#!/usr/bin/env python3
"""The project's benchmark: what `git checkpoint` costs, as ratios to `git status` and
`git stash` measured in the same run, on synthetic repositories built like the ones in
docs/performance.md (about 7 KB text files, folders 4-6 deep, 1 % executable, a few
symlinks, an ignored node_modules/, an agent-like change of N modified + 5 new files).

Every timed round starts from the same workspace, prepared untimed; each command runs
once untimed before its rounds (warm cache); the figure is the median of the rounds.
After timing, each round checks that the workspace is what it should be.

    python bench/bench.py --sizes 1000,10000 --repeat 5 [--keep DIR] [--json out.json]

Standard library only, so it runs before anything else is installed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import string
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

NA = "n/a (restore not available)"
NEW_FILES_DIR = "tests/fixtures/agent"


# --- running commands -------------------------------------------------------------------------


class BenchError(Exception):
    """A command the benchmark relies on failed: stop, this is not a timing."""


def run(
    argv: Sequence[str], cwd: Path, env: dict[str, str], check: bool = True
) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(list(argv), cwd=cwd, env=env, capture_output=True, text=True, check=False)
    if check and proc.returncode != 0:
        raise BenchError(
            f"{' '.join(argv)}: exit {proc.returncode}\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}"
        )
    return proc


def timed(
    argv: Sequence[str], cwd: Path, env: dict[str, str]
) -> tuple[float, subprocess.CompletedProcess[str]]:
    """Wall time in ms of one run (spawn included, as a user or a hook pays it)."""
    start = time.perf_counter()
    proc = subprocess.run(list(argv), cwd=cwd, env=env, capture_output=True, text=True, check=False)
    elapsed = (time.perf_counter() - start) * 1000.0
    if proc.returncode != 0:
        raise BenchError(
            f"{' '.join(argv)}: exit {proc.returncode}\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}"
        )
    return elapsed, proc


def hermetic_env(home: Path, bin_dir: Path | None) -> dict[str, str]:
    """A sealed environment: own HOME, no system git config, fixed author and dates."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "CHECKPOINT_"))}
    template = home / "empty-template"
    template.mkdir(parents=True, exist_ok=True)
    (home / ".gitconfig").write_text(
        "[init]\n\tdefaultBranch = main\n"
        "[gc]\n\tauto = 0\n"  # no background gc landing in a timed round
        "[maintenance]\n\tauto = false\n"
    )
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        GIT_CONFIG_NOSYSTEM="1",
        GIT_TEMPLATE_DIR=str(template),
        GIT_AUTHOR_NAME="Bench Author",
        GIT_AUTHOR_EMAIL="author@example.com",
        GIT_COMMITTER_NAME="Bench Committer",
        GIT_COMMITTER_EMAIL="committer@example.com",
        GIT_AUTHOR_DATE="2026-01-01T00:00:00Z",
        GIT_COMMITTER_DATE="2026-01-01T00:00:00Z",
        NO_COLOR="1",
        LC_ALL="C",
    )
    if bin_dir is not None:
        env["PATH"] = str(bin_dir) + os.pathsep + env.get("PATH", "")
    return env


# --- the synthetic repository -----------------------------------------------------------------


def random_word(rng: random.Random) -> str:
    return "".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 9)))


@dataclass
class SyntheticRepo:
    path: Path
    regular: list[str]  # tracked regular, non-executable files (candidates for edits)
    symlinks: list[str]
    executables: list[str]
    changed: list[str]  # the agent's modified tracked files
    new_files: list[str]  # the agent's untracked files
    attempt_pool: list[str]  # other tracked files, for a failed attempt's edits
    original: dict[str, bytes] = field(default_factory=dict)


def generate_repo(
    path: Path, n_files: int, n_node_modules: int, n_changed: int, n_new: int, seed: int
) -> SyntheticRepo:
    """Write the work tree: n_files tracked entries (a few of them symlinks)."""
    rng = random.Random(seed + n_files)
    vocab = [random_word(rng) for _ in range(400)]
    pool = []
    for _ in range(3000):  # line pool: files are random draws, so text looks like text
        indent = " " * (4 * rng.randint(0, 3))
        pool.append(indent + " ".join(rng.choices(vocab, k=rng.randint(3, 12))) + "\n")
    avg_line = sum(map(len, pool)) / len(pool)
    lines_per_file = max(1, round(7000 / avg_line))

    fanout = 6
    level_names = [rng.sample(vocab, fanout) for _ in range(6)]
    tops = ["src", "lib", "tests", "docs", "tools", "packages"]
    want_dirs = max(4, n_files // 16)
    dirs: set[str] = set()
    while len(dirs) < want_dirs:
        depth = rng.randint(4, 6)
        parts = [rng.choice(tops)] + [rng.choice(level_names[lvl]) for lvl in range(depth - 1)]
        dirs.add("/".join(parts))
    dir_list = sorted(dirs)

    n_symlinks = max(3, min(20, n_files // 1000))
    exts = [".py", ".py", ".js", ".ts", ".md", ".txt", ".json", ".html"]
    entries: list[str] = []
    taken: set[str] = set()
    for i in range(n_files):
        rel = f"{rng.choice(dir_list)}/{rng.choice(vocab)}_{i}{rng.choice(exts)}"
        while rel in taken:
            rel = f"{rng.choice(dir_list)}/{rng.choice(vocab)}_{i}_{rng.randrange(10**6)}.txt"
        taken.add(rel)
        entries.append(rel)

    made_dirs: set[str] = set()
    regular: list[str] = []
    executables: list[str] = []
    symlinks: list[str] = []
    link_slots = set(rng.sample(range(n_files), min(n_symlinks, n_files // 2)))
    for i, rel in enumerate(entries):
        folder = rel.rsplit("/", 1)[0]
        if folder not in made_dirs:
            (path / folder).mkdir(parents=True, exist_ok=True)
            made_dirs.add(folder)
        if i in link_slots:
            continue  # after the loop: a link needs its target's path
        k = rng.randint(lines_per_file // 2, lines_per_file * 3 // 2)
        text = f"# {rel}\n" + "".join(rng.choices(pool, k=k))
        (path / rel).write_text(text)
        if i % 100 == 50:
            (path / rel).chmod(0o755)
            executables.append(rel)
        else:
            regular.append(rel)
    for i in sorted(link_slots):
        rel = entries[i]
        target = rng.choice(regular)
        os.symlink(os.path.relpath(target, os.path.dirname(rel)), path / rel)
        symlinks.append(rel)

    (path / ".gitignore").write_text("node_modules/\n*.log\n")
    for j in range(n_node_modules):
        dep = path / "node_modules" / f"pkg{j // 50}" / "lib"
        if j % 50 == 0:
            dep.mkdir(parents=True, exist_ok=True)
        (dep / f"m{j}.js").write_text(f"module.exports = {j};\n" + "// vendored\n" * 50)

    order = list(regular)
    rng.shuffle(order)
    changed = order[:n_changed]
    attempt_pool = order[n_changed:]
    new_files = [f"{NEW_FILES_DIR}/new_{i}.txt" for i in range(n_new)]
    return SyntheticRepo(path, regular, symlinks, executables, changed, new_files, attempt_pool)


# --- one repository, one size -----------------------------------------------------------------


@dataclass
class Row:
    operation: str
    files: int
    samples_ms: list[float]
    note: str = ""

    @property
    def median_ms(self) -> float | None:
        return statistics.median(self.samples_ms) if self.samples_ms else None


class SizeBench:
    """Builds one repository and times every operation on it."""

    def __init__(self, repo: SyntheticRepo, env: dict[str, str], args: argparse.Namespace) -> None:
        self.repo = repo
        self.cwd = repo.path
        self.env = env
        self.args = args
        self.rows: list[Row] = []
        self.problems: list[str] = []
        self.n = args.current_size

    # helpers -------------------------------------------------------------------------------

    def git(self, *argv: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return run(["git", *argv], self.cwd, self.env, check=check)

    def porcelain(self) -> str:
        return self.git("status", "--porcelain").stdout

    def settle(self) -> None:
        """Untimed: refresh the index's stat cache, then flush dirty pages, so a timed
        round never pays for writeback of the setup that came before it."""
        self.porcelain()
        os.sync()

    def write(self, rel: str, data: bytes) -> None:
        target = self.cwd / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)

    def read(self, rel: str) -> bytes:
        return (self.cwd / rel).read_bytes()

    def check(self, ok: bool, what: str) -> None:
        if not ok:
            self.problems.append(f"{self.n} files: {what}")

    def add(self, operation: str, samples: list[float], note: str = "") -> Row:
        row = Row(operation, self.n, samples, note)
        self.rows.append(row)
        return row

    def rounds(self) -> range:
        """The first `--warmup` rounds are untimed warm-ups."""
        return range(self.args.warmup + self.args.repeat)

    def counted(self, r: int) -> bool:
        return r >= int(self.args.warmup)

    # workspace states ----------------------------------------------------------------------

    def build(self) -> None:
        self.git("init", "-q", str(self.cwd))
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "synthetic repository")
        for rel in self.repo.changed + self.repo.attempt_pool:
            self.repo.original[rel] = self.read(rel)

    def agent_state(self, variant: str = "") -> None:
        """The workspace every round starts from: HEAD + the agent's change (+ a variant)."""
        self.git("reset", "-q", "--hard", "HEAD")
        self.git("clean", "-fdq")  # untracked only; the ignored node_modules/ stays
        for i, rel in enumerate(self.repo.changed):
            extra = f"agent edit {i}\n"
            if i == 0 and variant:
                extra += f"variant {variant}\n"
            self.write(rel, self.repo.original[rel] + extra.encode())
        for i, rel in enumerate(self.repo.new_files):
            self.write(rel, f"new fixture {i}\n".encode() * 120)
        self.settle()

    def attempt(self, count: int, tag: str) -> list[str]:
        """A failed attempt on top of the agent state: `count` more tracked files edited."""
        paths = self.repo.attempt_pool[:count]
        for rel in paths:
            self.write(rel, self.repo.original[rel] + f"attempt {tag}\n".encode())
        self.settle()
        return paths

    def files_equal_original(self, paths: list[str]) -> bool:
        return all(self.read(rel) == self.repo.original[rel] for rel in paths)

    # the measurements ----------------------------------------------------------------------

    def startup(self) -> None:
        py = [sys.executable, "-c", "pass"]
        self.add("`python -c pass` (startup floor)", self.plain_rounds(py))
        self.add(
            "`git checkpoint --version` (startup)",
            self.plain_rounds(["git", "checkpoint", "--version"]),
        )

    def plain_rounds(self, argv: list[str]) -> list[float]:
        samples = []
        for r in self.rounds():
            ms, _ = timed(argv, self.cwd, self.env)
            if self.counted(r):
                samples.append(ms)
        return samples

    def status_floor(self) -> Row:
        self.agent_state()
        return self.add(
            "`git status --porcelain` (the floor)",
            self.plain_rounds(["git", "status", "--porcelain"]),
        )

    def stash(self) -> None:
        self.agent_state()
        expected = self.porcelain()
        push, apply_, pop, push2 = [], [], [], []
        for r in self.rounds():
            self.agent_state()
            t_push, _ = timed(["git", "stash", "push", "-u", "-q"], self.cwd, self.env)
            self.check(self.porcelain() == "", "stash push -u left changes behind")
            t_apply, _ = timed(["git", "stash", "apply", "-q"], self.cwd, self.env)
            self.check(self.porcelain() == expected, "stash apply: status differs")
            self.git("stash", "drop", "-q")
            self.agent_state()
            t_push2, _ = timed(["git", "stash", "push", "-u", "-q"], self.cwd, self.env)
            t_pop, _ = timed(["git", "stash", "pop", "-q"], self.cwd, self.env)
            self.check(self.porcelain() == expected, "stash pop: status differs")
            if self.counted(r):
                push.append(t_push)
                apply_.append(t_apply)
                push2.append(t_push2)
                pop.append(t_pop)
        self.add("`git stash push -u`", push)
        self.add("`git stash apply`", apply_)
        self.add(
            "`git stash push -u` + `git stash pop`",
            [a + b for a, b in zip(push2, pop, strict=True)],
        )

    def checkpoint_save(self) -> None:
        fresh = []
        for r in self.rounds():
            self.agent_state(variant=f"round {r}")  # distinct each round: a real save
            ms, proc = timed(["git", "checkpoint", "save", "-m", "bench"], self.cwd, self.env)
            saved = "checkpoint saved:" in proc.stdout
            self.check(saved, f"save made no checkpoint: {proc.stdout.strip()}")
            if self.counted(r):
                fresh.append(ms)
        self.add("`git checkpoint save -m bench` (new checkpoint)", fresh)
        same = []
        for r in self.rounds():
            ms, proc = timed(["git", "checkpoint", "save"], self.cwd, self.env)
            self.check("unchanged since" in proc.stdout, f"dedupe saved again: {proc.stdout}")
            if self.counted(r):
                same.append(ms)
        self.add("`git checkpoint save` (unchanged: dedupe)", same)

    def restore(self, count: int, have_restore: bool, have_undo: bool) -> None:
        """Rows for a workspace that differs from checkpoint A in `count` tracked files."""
        label = f"{count} files differ"
        self.agent_state()
        expected = self.porcelain()
        # A as plain git would keep it: a stash commit, parked on a ref of its own.
        self.git("stash", "push", "-u", "-q")
        stash_a = self.git("rev-parse", "stash@{0}").stdout.strip()
        self.git("update-ref", "refs/bench/stash-a", stash_a)
        self.git("stash", "drop", "-q")

        if have_restore:
            self.agent_state()
            out = run(["git", "checkpoint", "save", "-m", "bench-A", "--json"], self.cwd, self.env)
            cp_a = json.loads(out.stdout)["checkpoint_id"]
            restore_ms, undo_ms = [], []
            for r in self.rounds():
                self.agent_state()
                paths = self.attempt(count, f"cp {r}")
                before = self.porcelain()
                ms, _ = timed(["git", "checkpoint", "restore", cp_a], self.cwd, self.env)
                self.check(self.porcelain() == expected, f"restore {cp_a}: status differs")
                self.check(self.files_equal_original(paths), f"restore {cp_a}: content differs")
                if self.counted(r):
                    restore_ms.append(ms)
                if have_undo:
                    ms, _ = timed(["git", "checkpoint", "undo"], self.cwd, self.env)
                    self.check(self.porcelain() == before, "undo: status differs")
                    self.check(not self.files_equal_original(paths[:1]), "undo: attempt not back")
                    if self.counted(r):
                        undo_ms.append(ms)
            self.add(f"`git checkpoint restore <cp>` ({label})", restore_ms)
            if have_undo:
                self.add(f"`git checkpoint undo` ({label})", undo_ms)
            else:
                self.add(f"`git checkpoint undo` ({label})", [], "n/a (undo not available)")
        else:
            self.add(f"`git checkpoint restore <cp>` ({label})", [], NA)
            self.add(f"`git checkpoint undo` ({label})", [], NA)

        # Plain git with a safety copy: stash the attempt away, then apply A.
        push, apply_ = [], []
        for r in self.rounds():
            self.agent_state()
            paths = self.attempt(count, f"stash {r}")
            t_push, _ = timed(["git", "stash", "push", "-u", "-q"], self.cwd, self.env)
            t_apply, _ = timed(["git", "stash", "apply", "-q", stash_a], self.cwd, self.env)
            self.check(self.porcelain() == expected, "stash apply A: status differs")
            self.check(self.files_equal_original(paths), "stash apply A: content differs")
            self.git("stash", "drop", "-q")
            if self.counted(r):
                push.append(t_push)
                apply_.append(t_apply)
        self.add(f"`git stash apply <A>` onto a clean tree ({label})", apply_)
        self.add(
            f"`git stash push -u` + `git stash apply <A>` ({label})",
            [a + b for a, b in zip(push, apply_, strict=True)],
        )

        # Plain git, tracked files only: no safety copy, no overlay, no deletions.
        peers = {
            f"`git checkout <A> -- .` ({label})": ["git", "checkout", stash_a, "--", "."],
            f"`git restore --source=<A> --worktree -- .` ({label})": [
                "git",
                "restore",
                f"--source={stash_a}",
                "--worktree",
                "--",
                ".",
            ],
        }
        for name, argv in peers.items():
            samples = []
            for r in self.rounds():
                self.agent_state()
                paths = self.attempt(count, f"peer {r}")
                ms, _ = timed(argv, self.cwd, self.env)
                self.check(self.files_equal_original(paths), f"{argv[1]}: content differs")
                if self.counted(r):
                    samples.append(ms)
            self.add(name, samples)


# --- output ------------------------------------------------------------------------------------


def machine_line(cp_exe: str) -> str:
    git_version = subprocess.run(
        ["git", "--version"], capture_output=True, text=True, check=False
    ).stdout.strip()
    cp_version = subprocess.run(
        [cp_exe, "--version"], capture_output=True, text=True, check=False
    ).stdout.strip()
    return (
        f"machine: nproc {os.cpu_count()}, {git_version}, Python {platform.python_version()}, "
        f"{platform.system()} {platform.release()}; {cp_version or 'git-checkpoint'} at {cp_exe}"
    )


def fmt_ms(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.1f}" if value < 100 else f"{value:.0f}"


def table(rows: list[Row], floors: dict[int, float]) -> str:
    out = ["| operation | N files | median ms | ratio to git status |", "|---|---:|---:|---:|"]
    for row in rows:
        med = row.median_ms
        if med is None:
            out.append(f"| {row.operation} | {row.files} | {row.note or '-'} | - |")
            continue
        ratio = med / floors[row.files]
        out.append(f"| {row.operation} | {row.files} | {fmt_ms(med)} | {ratio:.2f} |")
    return "\n".join(out)


# --- main -------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--files", type=int, default=10000, help="tracked files (one size)")
    p.add_argument("--sizes", help="comma-separated sizes, e.g. 1000,10000 (overrides --files)")
    p.add_argument("--repeat", type=int, default=5, help="timed rounds per row (median)")
    p.add_argument("--warmup", type=int, default=1, help="untimed rounds before each row")
    p.add_argument("--changed", type=int, default=10, help="tracked files the agent modifies")
    p.add_argument("--new", type=int, default=5, help="untracked files the agent creates")
    p.add_argument("--node-modules", type=int, default=2000, help="ignored node_modules/ files")
    p.add_argument("--restore-files", type=int, default=1000, help="files in the big restore")
    p.add_argument("--seed", type=int, default=1, help="random seed for the repository")
    p.add_argument("--keep", metavar="DIR", help="build in DIR, keep it (default: a temp dir)")
    p.add_argument("--json", metavar="FILE", help="also write every sample as JSON")
    p.add_argument(
        "--use-path",
        action="store_true",
        help="run the git-checkpoint found on PATH, not the one beside this Python",
    )
    args = p.parse_args(argv)
    text = args.sizes or str(args.files)
    try:
        args.size_list = [int(s) for s in text.split(",") if s.strip()]
    except ValueError:
        p.error(f"--sizes: not a list of integers: {text!r}")
    if not args.size_list or min(args.size_list) < 20:
        p.error("sizes must be at least 20 files")
    if args.repeat < 1 or args.warmup < 0:
        p.error("--repeat must be >= 1 and --warmup >= 0")
    return args


def has_subcommand(name: str, cwd: Path, env: dict[str, str]) -> bool:
    return run(["git", "checkpoint", name, "--help"], cwd, env, check=False).returncode == 0


def bench_size(root: Path, env: dict[str, str], args: argparse.Namespace) -> SizeBench:
    size = args.current_size
    path = root / f"repo-{size}"
    if path.exists():
        raise BenchError(f"{path} already exists: choose an empty --keep folder")
    path.mkdir(parents=True)

    def say(line: str) -> None:
        print(f"[{size}] {line}", file=sys.stderr, flush=True)

    say("generating")
    changed = min(args.changed, size // 4)
    repo = generate_repo(path, size, args.node_modules, changed, args.new, args.seed)
    bench = SizeBench(repo, env, args)
    say("committing")
    bench.build()
    have_restore = has_subcommand("restore", path, env)
    have_undo = has_subcommand("undo", path, env)
    say("startup")
    bench.startup()
    say("git status")
    bench.status_floor()
    say("git stash")
    bench.stash()
    say("git checkpoint save")
    bench.checkpoint_save()
    big = min(args.restore_files, len(repo.attempt_pool))
    for count in sorted({min(10, big), big}):
        say(f"restore, {count} files differ")
        bench.restore(count, have_restore, have_undo)
    return bench


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.keep:
        root = Path(args.keep).resolve()
        root.mkdir(parents=True, exist_ok=True)
    else:
        root = Path(tempfile.mkdtemp(prefix="git-checkpoint-bench-"))
    beside = Path(sys.executable).parent
    bin_dir = None if args.use_path or not (beside / "git-checkpoint").exists() else beside
    rows: list[Row] = []
    problems: list[str] = []
    floors: dict[int, float] = {}
    try:
        env = hermetic_env(root / "home", bin_dir)
        cp_exe = shutil.which("git-checkpoint", path=env["PATH"])
        if cp_exe is None:
            print("bench: git-checkpoint is not on PATH (pip install -e .)", file=sys.stderr)
            return 2
        header = machine_line(cp_exe)
        if os.getloadavg()[0] > 0.5:
            print(
                f"bench: load average {os.getloadavg()[0]:.2f}: timings will be noisy",
                file=sys.stderr,
            )
        for size in args.size_list:
            args.current_size = size
            bench = bench_size(root, env, args)
            floor = next(r for r in bench.rows if r.operation.startswith("`git status"))
            assert floor.median_ms is not None
            floors[size] = floor.median_ms
            rows += bench.rows
            problems += bench.problems
    except BenchError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 2
    finally:
        if args.keep:
            print(f"bench: kept {root}", file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)

    load = os.getloadavg()
    print(header)
    print(f"load average at the end (1/5/15 min): {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(
        f"median of {args.repeat} warm rounds (+{args.warmup} warm-up); agent change: "
        f"{args.changed} modified + {args.new} new files; ignored node_modules/: "
        f"{args.node_modules} files; stash runs with -q (no status afterwards)"
    )
    print()
    print(table(rows, floors))
    if problems:
        print()
        print("CORRECTNESS PROBLEMS:")
        for line in dict.fromkeys(problems):
            print(f"- {line}")
    if args.json:
        payload = {
            "machine": header,
            "args": {k: v for k, v in vars(args).items() if k != "current_size"},
            "rows": [
                {
                    **asdict(r),
                    "median_ms": r.median_ms,
                    "ratio_to_git_status": (
                        None if r.median_ms is None else r.median_ms / floors[r.files]
                    ),
                }
                for r in rows
            ],
            "problems": problems,
        }
        Path(args.json).write_text(json.dumps(payload, indent=2) + "\n")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
