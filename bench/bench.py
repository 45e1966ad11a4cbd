#!/usr/bin/env python3
"""The project's benchmark: what `git checkpoint` costs beside git itself and its peers,
measured side by side in one run, on synthetic repositories (bench/synth.py).

For each size: rounds of, alternating, `git status --porcelain` (the floor), `save`, the
hook's unchanged auto-save, the hook's auto-save of 10 changed files, `git stash push -u`
+ `git stash apply --index`, the seed's save (`git diff --binary HEAD` + tar.gz of the
included folder); then restore and undo of 10-file and 1,000-file differences beside
`git checkout <A> -- .`, stash and the seed's restore (`reset --hard`, `clean -fd`,
`apply`, untar); then the storage of 50 small-change checkpoints against the tar
approach. Every figure is a median over rounds (wall time of the whole process, Python
start-up included) and peak RSS of the process and its children (wait4). Each round
checks that the workspace is what it should be.

    python bench/bench.py --sizes 1000,10000,100000 --repeat 5 \\
        --json docs/benchmark.json --markdown docs/benchmark.md --chart docs/benchmark.png

`--real` measures pinned real projects instead (bench/real.py, with its own options).

Standard library only (the chart needs matplotlib: the `bench` extra; without it, no chart).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import report
import synth


class BenchError(Exception):
    """A command the benchmark relies on failed: stop, this is not a timing."""


@dataclass
class Sample:
    ms: float
    rss_kb: int
    stdout: str
    stderr: str
    cpu_ms: float = 0.0  # user + system time of the process and the children it waited for


TIME = shutil.which("time", path="/usr/bin:/bin")


def measure(
    argv: Sequence[str],
    cwd: Path,
    env: dict[str, str],
    stdin: bytes | None = None,
    gnu_time: bool = True,
) -> Sample:
    """Wall time of one run (spawn included, as a user or a hook pays it) and the peak
    RSS of the process and the children it waited for. A child forked from this (large)
    process starts with our RSS as its high-water mark, so the RSS comes from GNU time
    (small) in front of the command when it is there, else from wait4 (an upper bound).
    `gnu_time=False`: the command alone, for timings of a few milliseconds that one more
    process in front would blur (the RSS is then wait4's).
    A command the command server ran is counted where it ran: its worker adds its CPU
    time and peak RSS to GIT_CHECKPOINT_USAGE_FILE (entry/server.py), to the client's."""
    time_exe = TIME if gnu_time else None
    with tempfile.NamedTemporaryFile() as rss, tempfile.TemporaryFile() as out, \
            tempfile.TemporaryFile() as err, tempfile.NamedTemporaryFile() as used:  # fmt: skip
        env = {**env, "GIT_CHECKPOINT_USAGE_FILE": used.name}
        prefix = [time_exe, "-f", "%M", "-o", rss.name] if time_exe else []
        start = time.perf_counter()
        proc = subprocess.Popen(
            [*prefix, *argv],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=out,
            stderr=err,
        )
        if stdin is not None and proc.stdin is not None:
            proc.stdin.write(stdin)
            proc.stdin.close()
        _, status, usage = os.wait4(proc.pid, 0)
        ms = (time.perf_counter() - start) * 1000.0
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if time_exe:
            text = Path(rss.name).read_text().split()
            usage_kb = int(text[-1]) if text and text[-1].isdigit() else usage.ru_maxrss
        else:
            usage_kb = usage.ru_maxrss
        cpu_ms = (usage.ru_utime + usage.ru_stime) * 1000.0
        for line in Path(used.name).read_text().splitlines():  # what workers of ours used
            worker_cpu, worker_kb = line.split()
            cpu_ms += float(worker_cpu)
            usage_kb = max(usage_kb, int(worker_kb))
        sample = Sample(
            ms,
            usage_kb,
            out.read().decode(errors="replace"),
            err.read().decode(errors="replace"),
            cpu_ms,
        )
    if proc.returncode != 0:
        raise BenchError(
            f"{' '.join(argv)}: exit {proc.returncode}\n{sample.stdout[-2000:]}"
            f"{sample.stderr[-2000:]}"
        )
    return sample


def run(argv: Sequence[str], cwd: Path, env: dict[str, str]) -> str:
    proc = subprocess.run(list(argv), cwd=cwd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        raise BenchError(f"{' '.join(argv)}: exit {proc.returncode}\n{proc.stderr[-2000:]}")
    return proc.stdout


def hermetic_env(home: Path, bin_dir: Path | None) -> dict[str, str]:
    """A sealed environment: own HOME, no system git config, fixed author and dates."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GIT_", "CHECKPOINT_"))}
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # compiled once, as an installed package is
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


def wait_for_gc(cwd: Path) -> None:
    """Wait for a `gc --auto` that a timed command left running in the background
    (maintenance.py), as it would finish between two agent turns: timed rounds never
    share the machine with it."""
    pidfile = cwd / ".git" / "gc.pid"
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        try:
            pid = int(pidfile.read_text().split()[0])
            os.kill(pid, 0)
        except (OSError, ValueError, IndexError):
            return  # no gc.pid, or its gc is gone
        time.sleep(0.1)


def launcher_dir(use_path: bool) -> Path | None:
    """The folder to put first on PATH: what install.sh installs beside the venv this
    Python runs in (the launchers in <data>/bin, `python -IS`), else the venv's own
    scripts; None with `use_path` or when neither is there (PATH decides)."""
    beside = Path(sys.executable).parent
    launchers = beside.parent.parent / "bin"
    if (launchers / "git-checkpoint").exists():
        beside = launchers
    return None if use_path or not (beside / "git-checkpoint").exists() else beside


@dataclass
class Row:
    key: str  # stable id (report.py's targets name rows by it)
    operation: str
    files: int
    samples_ms: list[float] = field(default_factory=list)
    rss_kb: list[int] = field(default_factory=list)
    note: str = ""

    @property
    def median_ms(self) -> float | None:
        return statistics.median(self.samples_ms) if self.samples_ms else None

    @property
    def peak_rss_kb(self) -> int | None:
        return max(self.rss_kb) if self.rss_kb else None


SETTLE_S = 1.1  # files older than this are vouched for by their stat data (quickstate.py)


class SizeBench:
    """Times every operation on one repository."""

    def __init__(
        self,
        repo: synth.SyntheticRepo,
        env: dict[str, str],
        args: argparse.Namespace,
        hook: str | None,
    ) -> None:
        self.repo = repo
        self.cwd = repo.path
        self.env = env
        self.args = args
        self.hook = hook
        self.n = args.current_size
        self.rows: dict[str, Row] = {}
        self.problems: list[str] = []
        self.extra: dict[str, object] = {}
        self.scratch = Path(tempfile.mkdtemp(prefix="bench-peer-"))
        # In every edit: the cached repository keeps the objects of earlier runs, and
        # content git has stored already is hashed without being written again.
        self.nonce = os.urandom(4).hex()

    # helpers -------------------------------------------------------------------------------

    def git(self, *argv: str) -> str:
        return run(["git", *argv], self.cwd, self.env)

    def porcelain(self) -> str:
        return self.git("status", "--porcelain")

    def row(self, key: str, operation: str) -> Row:
        if key not in self.rows:
            self.rows[key] = Row(key, operation, self.n)
        return self.rows[key]

    def timed(
        self,
        key: str,
        operation: str,
        argv: Sequence[str],
        counted: bool,
        stdin: bytes | None = None,
    ) -> Sample:
        sample = measure(argv, self.cwd, self.env, stdin)
        row = self.row(key, operation)
        if counted:
            row.samples_ms.append(sample.ms)
            row.rss_kb.append(sample.rss_kb)
        return sample

    def check(self, ok: bool, what: str) -> None:
        if not ok:
            self.problems.append(f"{self.n} files: {what}")

    def write(self, rel: str, data: bytes) -> None:
        target = self.cwd / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)

    def read(self, rel: str) -> bytes:
        return (self.cwd / rel).read_bytes()

    def refs(self) -> int:
        return len(self.git("for-each-ref", "refs/checkpoints/").splitlines())

    def settle(self, wait: bool = False) -> None:
        """Untimed: refresh the index's stat cache and flush dirty pages, so a timed round
        never pays for writeback of the setup; `wait`: let fresh files age past the
        racy window, as an agent's files have between two tool calls."""
        self.porcelain()
        self.gc_done()
        os.sync()
        if wait:
            time.sleep(SETTLE_S)

    def gc_done(self) -> None:
        wait_for_gc(self.cwd)

    def agent_state(self, variant: str = "", wait: bool = False) -> None:
        """HEAD + the agent's change: 10 modified, 5 new untracked, 3 in the included,
        ignored fixture folder (+ a variant, so each round's save is a new checkpoint)."""
        self.git("reset", "-q", "--hard", "HEAD")
        self.git("clean", "-fdq")  # untracked only; the ignored node_modules/ stays
        shutil.rmtree(self.cwd / "tmp", ignore_errors=True)
        for i, rel in enumerate(self.repo.changed):
            extra = f"agent edit {i} {self.nonce}\n"
            extra += f"variant {variant}\n" if i == 0 and variant else ""
            self.write(rel, self.repo.original[rel] + extra.encode())
        for i, rel in enumerate(self.repo.new_files):
            self.write(rel, f"def new_{i}():\n    return {i}  # {self.nonce}\n".encode() * 60)
        for i, rel in enumerate(self.repo.fixtures):
            self.write(rel, fixture(i))
        self.settle(wait)

    def attempt(self, count: int, tag: str) -> list[str]:
        """A failed attempt on top of the agent state: `count` more tracked files edited."""
        paths = self.repo.attempt_pool[:count]
        for rel in paths:
            self.write(rel, self.repo.original[rel] + f"attempt {tag} {self.nonce}\n".encode())
        self.settle()
        return paths

    def originals(self, paths: list[str]) -> bool:
        return all(self.read(rel) == self.repo.original[rel] for rel in paths) is True

    def rounds(self) -> range:
        return range(self.args.warmup + self.args.repeat)

    def counted(self, r: int) -> bool:
        return r >= self.args.warmup

    def hook_call(
        self, key: str, label: str, payload: Mapping[str, object], counted: bool
    ) -> Sample:
        assert self.hook is not None
        data = json.dumps({"cwd": str(self.cwd), "session_id": "bench", **payload}).encode()
        sample = self.timed(
            key, label, [self.hook, "claude-code", str(payload["hook_event_name"])], counted, data
        )
        self.check("no checkpoint saved" not in sample.stderr, f"hook: {sample.stderr.strip()}")
        return sample

    def auto_save(self, key: str, label: str, counted: bool) -> None:
        if self.hook:
            payload = {
                "hook_event_name": "PreToolUse",
                "tool_name": "Write",
                "tool_input": {"file_path": str(self.cwd / "src/x.py"), "content": "x"},
            }
            self.hook_call(key, label, payload, counted)
        else:
            self.timed(key, label, ["git", "checkpoint", "save", "--auto"], counted)

    # the measurements ----------------------------------------------------------------------

    def main_rounds(self) -> None:
        """status, save, auto-saves, stash and the seed's save, alternating in each round."""
        seed_dir = self.scratch / "seed-save"
        seed_dir.mkdir(exist_ok=True)
        auto_via = "hook" if self.hook else "`save --auto`"
        for r in self.rounds():
            c = self.counted(r)
            self.agent_state(variant=f"round {r}", wait=True)
            self.timed(
                "status",
                "`git status --porcelain` (the floor)",
                ["git", "status", "--porcelain"],
                c,
            )
            before = self.refs()
            out = self.timed(
                "save",
                "`save` (10 modified, 5 new, 100 included)",
                ["git", "checkpoint", "save", "-m", f"bench {r}"],
                c,
            )
            self.check("checkpoint saved" in out.stdout, f"save made no checkpoint: {out.stdout}")
            self.auto_save("auto_unchanged", f"auto-save, nothing changed ({auto_via})", c)
            self.check(self.refs() == before + 1, "the unchanged auto-save saved")
            if self.hook:
                harmless = {
                    "hook_event_name": "PreToolUse",
                    "tool_name": "Bash",
                    "tool_input": {"command": "ls -la src"},
                }
                self.hook_call(
                    "hook_harmless", "hook, harmless Bash command (no save)", harmless, c
                )
            for rel in self.repo.changed:
                self.write(rel, self.read(rel) + f"auto {r}\n".encode())
            self.auto_save("auto_changed", f"auto-save, 10 files changed ({auto_via})", c)
            self.check(self.refs() == before + 2, "the auto-save of 10 changes did not save")
            expected = self.porcelain()
            self.settle()
            self.timed("stash_push", "`git stash push -u`", ["git", "stash", "push", "-u", "-q"], c)
            self.check(self.porcelain() == "", "stash push -u left changes behind")
            self.timed(
                "stash_apply",
                "`git stash apply --index`",
                ["git", "stash", "apply", "--index", "-q"],
                c,
            )
            self.check(self.porcelain() == expected, "stash apply: status differs")
            self.git("stash", "drop", "-q")
            self.settle()
            script = (
                f"git diff --binary HEAD > {seed_dir}/p.patch && "
                f"tar czf {seed_dir}/f.tgz {synth.FIXTURE_DIR}"
            )
            self.timed(
                "seed_save", "seed's save (`diff --binary` + tar.gz)", ["sh", "-c", script], c
            )
        self.combine(
            "stash_both", "`git stash push -u` + `apply --index`", "stash_push", "stash_apply"
        )

    def combine(self, key: str, label: str, a: str, b: str) -> None:
        ra, rb = self.rows[a], self.rows[b]
        row = self.row(key, label)
        row.samples_ms = [x + y for x, y in zip(ra.samples_ms, rb.samples_ms, strict=True)]
        row.rss_kb = [max(x, y) for x, y in zip(ra.rss_kb, rb.rss_kb, strict=True)]

    def restore_rounds(self, count: int) -> None:
        label = f"{count} files differ"
        k = "10" if count <= 10 else "1000"  # the keys report.py's targets use
        self.agent_state()
        cp_a = json.loads(
            run(["git", "checkpoint", "save", "-m", "bench-A", "--json"], self.cwd, self.env)
        )["checkpoint_id"]
        # A as plain git keeps it: a stash commit on a ref; and as the seed keeps it.
        expected = self.porcelain()
        self.git("stash", "push", "-u", "-q")
        stash_a = self.git("rev-parse", "stash@{0}").strip()
        self.git("update-ref", "refs/bench/stash-a", stash_a)
        self.git("stash", "pop", "-q", "--index")
        seed_dir = self.scratch / f"seed-{count}"
        seed_dir.mkdir(exist_ok=True)
        run(
            [
                "sh",
                "-c",
                f"git diff --binary HEAD > {seed_dir}/p.patch && "
                f"tar czf {seed_dir}/f.tgz {synth.FIXTURE_DIR}",
            ],
            self.cwd,
            self.env,
        )
        seed_restore = (
            f"git reset -q --hard && git clean -fdq && git apply --binary "
            f"{seed_dir}/p.patch && tar xzf {seed_dir}/f.tgz"
        )
        for r in self.rounds():
            c = self.counted(r)
            self.agent_state()
            paths = self.attempt(count, f"cp {r}")
            before = self.porcelain()
            self.timed(
                f"restore_{k}", f"`restore` ({label})", ["git", "checkpoint", "restore", cp_a], c
            )
            self.check(self.porcelain() == expected, f"restore {cp_a}: status differs")
            self.check(self.originals(paths), f"restore {cp_a}: content differs")
            self.settle()
            self.timed(f"undo_{k}", f"`undo` ({label})", ["git", "checkpoint", "undo"], c)
            self.check(self.porcelain() == before, "undo: status differs")
            self.check(not self.originals(paths[:1]), "undo: the attempt is not back")

            self.agent_state()
            paths = self.attempt(count, f"checkout {r}")
            self.timed(
                f"checkout_{k}",
                f"`git checkout <A> -- .` ({label})",
                ["git", "checkout", stash_a, "--", "."],
                c,
            )
            self.check(self.originals(paths), "checkout <A> -- .: content differs")

            self.agent_state()
            paths = self.attempt(count, f"stash {r}")
            self.timed(
                f"stashr_push_{k}",
                f"`git stash push -u` ({label})",
                ["git", "stash", "push", "-u", "-q"],
                c,
            )
            self.timed(
                f"stashr_apply_{k}",
                f"`git stash apply --index <A>` ({label})",
                ["git", "stash", "apply", "--index", "-q", stash_a],
                c,
            )
            self.check(self.porcelain() == expected, "stash apply <A>: status differs")
            self.git("stash", "drop", "-q")

            self.agent_state()
            paths = self.attempt(count, f"seed {r}")
            self.timed(
                f"seed_restore_{k}", f"seed's restore ({label})", ["sh", "-c", seed_restore], c
            )
            self.check(self.originals(paths), "seed restore: content differs")

            if count > 10:  # the floor of any restore that keeps what it overwrites
                self.agent_state()
                paths = self.attempt(count, f"store {r}")
                self.timed(
                    f"store_{k}",
                    f"`git hash-object -w` of the files a restore overwrites ({label})",
                    ["git", "hash-object", "-w", "--stdin-paths"],
                    c,
                    "".join(f"{p}\n" for p in paths).encode(),
                )
                self.agent_state()
                paths = self.attempt(count, f"store-fast {r}")
                self.timed(
                    f"store_fast_{k}",
                    f"the same, as fast as git stores them: two `hash-object -w` side by "
                    f"side, `core.looseCompression=0` ({label})",
                    ["sh", "-c", self.fast_store(paths)],
                    c,
                )
        self.combine(
            f"stash_restore_{k}",
            f"`git stash push -u` + `apply --index <A>` ({label})",
            f"stashr_push_{k}",
            f"stashr_apply_{k}",
        )
        if count > 10:
            self.combine(
                f"floor_{k}",
                f"floor of a restore that keeps what it overwrites: the fastest store + "
                f"`git checkout <A> -- .` ({label})",
                f"store_fast_{k}",
                f"checkout_{k}",
            )

    def fast_store(self, paths: list[str]) -> str:
        """A shell line storing `paths` as a restore's safety checkpoint does (graft.py):
        two `hash-object -w` processes, one per core, their loose objects uncompressed."""
        half = len(paths) // 2
        lists = []
        for n, part in enumerate((paths[:half], paths[half:])):
            listing = self.scratch / f"store-{n}.txt"
            listing.write_text("".join(f"{p}\n" for p in part))
            lists.append(listing)
        git = "git -c core.looseCompression=0 hash-object -w --stdin-paths >/dev/null"
        return f"{git} <{lists[0]} & {git} <{lists[1]}; wait"

    def storage(self, count: int) -> None:
        """Bytes added to .git by `count` successive small-change checkpoints, against the
        seed's patch + tar.gz for each."""
        synth.reset(self.repo, self.env)
        self.agent_state()
        tar_bytes = 0
        out = self.scratch / "storage"
        out.mkdir(exist_ok=True)
        for i in range(count):
            rel = self.repo.changed[i % len(self.repo.changed)]
            self.write(rel, self.read(rel) + f"small change {i}\n".encode())
            self.write(self.repo.fixtures[0], json.dumps({"step": i}).encode())
            run(["git", "checkpoint", "save", "-m", f"step {i}"], self.cwd, self.env)
            run(
                [
                    "sh",
                    "-c",
                    f"git diff --binary HEAD > {out}/p{i}.patch && "
                    f"tar czf {out}/f{i}.tgz {synth.FIXTURE_DIR}",
                ],
                self.cwd,
                self.env,
            )
            tar_bytes += (out / f"p{i}.patch").stat().st_size + (out / f"f{i}.tgz").stat().st_size
        loose, packed, grown = self.checkpoint_bytes()
        self.extra["storage"] = {
            "checkpoints": count,
            "git_bytes": loose,
            "git_packed_bytes": packed,
            "git_gc_bytes": grown,
            "tar_bytes": tar_bytes,
        }

    def checkpoint_bytes(self) -> tuple[int, int, int]:
        """What the task's checkpoints add to the repository at HEAD, whatever the object
        store held before: every object they reach that HEAD does not, as loose objects
        (zlib level 1, git's core.looseCompression), as one pack of their own (no delta
        against HEAD's objects), and as what they add to a gc'd repository: a thin pack
        against HEAD (deltas may name HEAD's objects, as in the repository's own pack;
        the seed's patch is a diff against HEAD too)."""
        ids = self.git("rev-list", "--objects", "--glob=refs/checkpoints/*", "--not", "HEAD")
        listing = "".join(line.split(" ", 1)[0] + "\n" for line in ids.splitlines())
        raw = subprocess.run(
            ["git", "cat-file", "--batch"], cwd=self.cwd, env=self.env, input=listing.encode(),
            capture_output=True, check=True,
        ).stdout  # fmt: skip
        loose, at = 0, 0
        while at < len(raw):
            end = raw.index(b"\n", at)
            _, kind, size = raw[at:end].split()
            body = raw[end + 1 : end + 1 + int(size)]
            loose += len(zlib.compress(kind + b" " + size + b"\0" + body, 1))
            at = end + 1 + int(size) + 1
        pack = subprocess.run(
            ["git", "pack-objects", "--stdout", "-q"], cwd=self.cwd, env=self.env,
            input=listing.encode(), capture_output=True, check=True,
        ).stdout  # fmt: skip
        tips = self.git("for-each-ref", "--format=%(objectname)", "refs/checkpoints/")
        thin = subprocess.run(
            ["git", "pack-objects", "--stdout", "--revs", "--thin", "-q"], cwd=self.cwd,
            env=self.env, input=(tips + "^HEAD\n").encode(), capture_output=True, check=True,
        ).stdout  # fmt: skip
        return loose, len(pack), len(thin)


def fixture(i: int) -> bytes:
    """A test fixture of 2-10 KB: JSON records, text-like, compressible as real ones are."""
    records = [
        {"id": i * 1000 + j, "name": f"case {i}.{j}", "ok": j % 3 != 0}
        for j in range(30 + (i * 37) % 120)
    ]
    return json.dumps(records, indent=1).encode()


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--sizes", default="1000,10000", help="comma-separated tracked-file counts")
    p.add_argument("--repeat", type=int, default=5, help="timed rounds per row (median)")
    p.add_argument("--warmup", type=int, default=1, help="untimed rounds first")
    p.add_argument("--node-modules", type=int, default=20000, help="ignored node_modules/ files")
    p.add_argument("--restore-files", type=int, default=1000, help="files in the big restore")
    p.add_argument(
        "--storage-count", type=int, default=50, help="checkpoints in the storage test (0: none)"
    )
    p.add_argument(
        "--untracked-cache", action="store_true", help="core.untrackedCache on in each repository"
    )
    p.add_argument("--skip-restore", action="store_true", help="no restore, undo or their peers")
    p.add_argument("--seed", type=int, default=1, help="random seed for the repositories")
    p.add_argument("--cache", default="/tmp/bench-cache", help="where generated repos are kept")
    p.add_argument("--json", metavar="FILE", help="write every sample as JSON")
    p.add_argument("--markdown", metavar="FILE", help="write the report as Markdown")
    p.add_argument("--chart", metavar="PNG", help="draw the growth chart (needs matplotlib)")
    p.add_argument(
        "--use-path",
        action="store_true",
        help="run the git-checkpoint found on PATH, not the one beside this Python",
    )
    p.add_argument(
        "--real",
        action="store_true",
        help="measure pinned real projects instead (bench/real.py; see its --help)",
    )
    p.add_argument(
        "--with-real",
        action="store_true",
        help="then the pinned real projects too (bench/real.py), in the same report",
    )
    args = p.parse_args(argv)
    try:
        args.size_list = [int(s) for s in args.sizes.split(",") if s.strip()]
    except ValueError:
        p.error(f"--sizes: not a list of integers: {args.sizes!r}")
    if not args.size_list or min(args.size_list) < 100:
        p.error("sizes must be at least 100 files")
    if args.repeat < 1 or args.warmup < 0:
        p.error("--repeat must be >= 1 and --warmup >= 0")
    return args


def real_projects(args: argparse.Namespace) -> tuple[str, object]:
    """bench/real.py's report and samples, run right after the synthetic sizes: a section
    of this report (its command is this one)."""
    import real

    with tempfile.TemporaryDirectory() as tmp:
        md, samples = Path(tmp) / "real.md", Path(tmp) / "real.json"
        argv = ["--repeat", str(args.repeat), "--markdown", str(md), "--json", str(samples)]
        real.main(argv + (["--use-path"] if args.use_path else []))
        if not md.exists():
            return "\n## On real projects\n\nNot measured: no project could be fetched.\n", None
        lines = md.read_text().splitlines()
        command = next(i for i, line in enumerate(lines) if line.startswith("    python "))
        del lines[command : command + 2]  # this report's command made it, and its blank line
        lines[0] = "## On real projects, beside `git stash create`"
        return "\n" + "\n".join(lines) + "\n", json.loads(samples.read_text())


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if "--real" in argv:  # the pinned real projects: bench/real.py, its own options
        import real

        return real.main([a for a in argv if a != "--real"])
    args = parse_args(argv)
    home = Path(tempfile.mkdtemp(prefix="git-checkpoint-bench-"))
    env = hermetic_env(home, launcher_dir(args.use_path))
    cp_exe = shutil.which("git-checkpoint", path=env["PATH"])
    hook = shutil.which("git-checkpoint-hook", path=env["PATH"])
    if cp_exe is None:
        print("bench: git-checkpoint is not on PATH (./install.sh)", file=sys.stderr)
        return 2
    loads = [os.getloadavg()]
    benches: list[SizeBench] = []
    try:
        for size in args.size_list:
            args.current_size = size

            def say(line: str, size: int = size) -> None:
                print(f"[{size}] {line}", file=sys.stderr, flush=True)

            say("repository (cached under --cache)")
            pool = args.restore_files
            repo = synth.cached(Path(args.cache), size, args.node_modules, args.seed, env, pool)
            synth.untracked_cache(repo.path, env, args.untracked_cache)
            bench = SizeBench(repo, env, args, hook)
            say("status, save, auto-saves, stash, seed save")
            bench.main_rounds()
            big = min(args.restore_files, len(repo.attempt_pool))
            for count in [] if args.skip_restore else sorted({min(10, big), big}):
                say(f"restore, {count} files differ")
                bench.restore_rounds(count)
            if args.storage_count:
                say(f"storage, {args.storage_count} checkpoints")
                bench.storage(args.storage_count)
            synth.reset(repo, env)
            # This run's objects pruned now, not at the next run's start: ext4 here makes
            # new files slowly for minutes in a folder whose files were just freed, and
            # the next run's restores would pay that (0.2-0.5 ms a file, against 0.06).
            synth.maintained(repo.path, env)
            shutil.rmtree(bench.scratch, ignore_errors=True)
            benches.append(bench)
            loads.append(os.getloadavg())
    except BenchError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 2
    finally:
        shutil.rmtree(home, ignore_errors=True)
    result = report.Result(
        machine=report.machine_line(cp_exe),
        command="python bench/bench.py " + " ".join(argv),
        loads=loads,
        repeat=args.repeat,
        rows=[r for b in benches for r in b.rows.values()],
        extra={b.n: b.extra for b in benches},
        problems=[p for b in benches for p in b.problems],
        hook=hook,
    )
    text = report.markdown(result, chart=args.chart)
    print(text)
    data = report.as_json(result)
    if args.with_real:
        real_text, data["real"] = real_projects(args)
        text += real_text
    if args.json:
        Path(args.json).write_text(json.dumps(data, indent=1) + "\n")
    if args.markdown:
        Path(args.markdown).write_text(text)
    if args.chart:
        report.chart(result, Path(args.chart))
    return 1 if result.problems else 0


if __name__ == "__main__":
    sys.exit(main())
