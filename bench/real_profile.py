#!/usr/bin/env python3
"""Where the time goes on a real project (bench/real.py's set-up, default flask), for
`save`, the Edit hook with nothing changed, the hook for a harmless Bash command and
`restore`, each from the state bench/real.py times it in:

- wall time: the median of --repeat whole runs, beside `git stash create`;
- imports: `python -IS -X importtime` of the installed launcher, summed by package, and
  the cumulative cost of the modules worth naming;
- processes: `strace -f -e trace=execve` of the whole command, each child with its start
  and its run time (when strace is installed);
- Python: cProfile of the main thread (bench/profiled.py), the top functions by
  cumulative and by own time, and the time spent waiting on children;
- for `save`, the secret scan: cProfile's share, and `save` beside
  `git -c checkpoint.secretsOnSave=ignore checkpoint save`, alternating.

    python bench/real_profile.py [--project flask] [--repeat 7] [--paths save,...]

Standard library only.
"""

from __future__ import annotations

import argparse
import os
import pstats
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import real

import bench

HERE = Path(__file__).resolve().parent
PATHS = ("save", "hook_edit_unchanged", "hook_harmless", "restore")
# Modules whose cumulative import cost is worth naming, when a path imports them.
NAMED = (
    "yaml", "click", "pygit2", "detect_secrets", "dataclasses", "inspect", "typing",
    "enum", "json", "subprocess", "threading", "tempfile", "ssl", "email", "datetime",
    "pathlib", "shlex", "fnmatch", "hashlib", "argparse", "logging", "uuid", "zlib",
)  # fmt: skip
# A line of an agent's change that the secret scan's detectors look at (no secret in it);
# new in each save (the scan reads only what the task's latest checkpoint lacks).
SECRETISH = 'API_TOKEN = os.environ["API_TOKEN_{n}"]\n'
# Where a Python process waits for its children: waitpid, pipe reads, poll.
WAITS = ("waitpid", "wait4", "posix.read", "'read' of", "poll", "select", "acquire")


@dataclass
class Command:
    """One path's command, ready to run from its state: through git as a user or
    Claude Code runs it, and as the launcher's script for Python's own tools."""

    argv: list[str]
    launcher: str  # the installed `python -IS` script the command ends in
    args: list[str]  # its arguments
    stdin: bytes | None = None


def python_script(exe: str) -> str:
    """The Python launcher a command ends in: `exe` itself, or for the compiled client,
    the launcher of the same name in libexec/ beside it (install.sh's layout)."""
    path = Path(exe).resolve()
    if path.read_bytes()[:2] == b"#!":
        return exe
    script = path.parent.parent / "libexec" / path.name
    if not script.exists():
        raise bench.BenchError(f"{exe} is compiled and {script} is missing")
    return str(script)


class Profiler:
    def __init__(self, b: real.ProjectBench, args: argparse.Namespace) -> None:
        self.b = b
        self.args = args
        self.python = args.python
        exe = shutil.which("git-checkpoint", path=b.env["PATH"])
        hook = shutil.which(b.hooks["Edit"][0], path=b.env["PATH"])
        if exe is None or hook is None:
            raise bench.BenchError("git-checkpoint or its hook is not on PATH")
        self.cp_launcher, self.hook_launcher = python_script(exe), python_script(hook)
        self.tmp = Path(tempfile.mkdtemp(prefix="real-profile-"))
        self.n = 0

    def tag(self) -> str:
        self.n += 1
        return f"profile {self.n}"

    # each path from its state --------------------------------------------------------------

    def prepare(
        self, path: str, reference: list[bench.Sample] | None = None, secretish: bool = False
    ) -> Command:
        """The path's state, and its command; `reference`: gets the time of
        `git stash create` in the agent's state (bench/real.py's reference);
        `secretish`: one new line in the change that the secret scan's detectors read."""
        b, tag = self.b, self.tag()
        b.agent_state(tag)
        if reference is not None:
            reference.append(
                bench.measure(["git", "stash", "create"], b.cwd, b.env, gnu_time=False)
            )
        if secretish:
            with (b.cwd / b.new_files[0]).open("a") as f:
                f.write(SECRETISH.format(n=self.n))
            b.settle()
        if path == "save":
            return self.cp(["save", "-m", tag])
        if path == "hook_edit_unchanged":
            b.git("checkpoint", "save", "-m", tag)
            return self.hook("Edit", b.edit_call())
        if path == "hook_harmless":
            b.git("checkpoint", "save", "-m", tag)
            return self.hook("Bash", b.harmless_call())
        if path == "restore":
            before = b.refs()
            bench.measure(b.hooks["Bash"], b.cwd, b.env, b.risky_call(), gnu_time=False)
            (made,) = b.refs() - before
            b.reset_hard()
            return self.cp(["restore", made.rsplit("/", 1)[-1]])
        raise ValueError(path)

    def cp(self, args: list[str]) -> Command:
        return Command(["git", "checkpoint", *args], self.cp_launcher, args)

    def hook(self, tool: str, stdin: bytes) -> Command:
        argv = self.b.hooks[tool]
        return Command(argv, self.hook_launcher, argv[1:], stdin)

    def run(self, argv: list[str], stdin: bytes | None) -> subprocess.CompletedProcess[bytes]:
        proc = subprocess.run(
            argv, cwd=self.b.cwd, env=self.b.env, input=stdin, capture_output=True
        )
        if proc.returncode != 0:
            raise bench.BenchError(f"{argv}: exit {proc.returncode}\n{proc.stderr[-2000:]!r}")
        return proc

    # the measurements ----------------------------------------------------------------------

    def wall(self, path: str) -> list[str]:
        """Medians of the path and of `git stash create` in the agent's state: wall time,
        and CPU time (user + system, with the children)."""
        ours: list[bench.Sample] = []
        stash: list[bench.Sample] = []
        for _ in range(self.args.repeat):
            cmd = self.prepare(path, stash)
            ours.append(bench.measure(cmd.argv, self.b.cwd, self.b.env, cmd.stdin, gnu_time=False))
        lines = []
        for what, cpu in (("wall", False), ("CPU", True)):
            mine = statistics.median(x.cpu_ms if cpu else x.ms for x in ours)
            ref = statistics.median(x.cpu_ms if cpu else x.ms for x in stash)
            lines.append(
                f"{what}: {mine:.1f} ms, `git stash create` {ref:.1f} ms in the agent's state "
                f"({mine / ref:.2f}×), medians of {self.args.repeat}"
            )
        return lines

    def imports(self, path: str) -> list[str]:
        """-X importtime of --repeat runs: per package and per named module, the median."""
        runs = [self.import_times(path) for _ in range(self.args.repeat)]
        count = statistics.median(len(modules) for modules, _ in runs)
        total = statistics.median(sum(own for own, _ in modules.values()) for modules, _ in runs)
        groups: dict[str, list[int]] = defaultdict(list)
        for _, by_group in runs:
            for name, us in by_group.items():
                groups[name].append(us)
        # a package missing from a run counts 0 there (a thread's import cut short)
        median = {k: statistics.median(v + [0] * (len(runs) - len(v))) for k, v in groups.items()}
        lines = [
            f"imports: {count:.0f} modules, {total / 1000:.1f} ms (sum of own times; "
            f"medians of {len(runs)} runs of -X importtime)"
        ]
        top = sorted(median.items(), key=lambda kv: -kv[1])[:16]
        lines.append("  by package (own): " + ", ".join(f"{k} {v / 1000:.1f}" for k, v in top))
        named = []
        for m in NAMED:
            seen = [modules[m][1] for modules, _ in runs if m in modules]
            if seen:
                named.append(f"{m} {statistics.median(seen) / 1000:.1f}")
        lines.append(
            "  named (cumulative where first imported, with what it imports): "
            + (", ".join(named) or "none")
        )
        return lines

    def import_times(
        self, path: str, secretish: bool = False
    ) -> tuple[dict[str, tuple[int, int]], dict[str, int]]:
        """One run: module -> (own, cumulative) µs, and the own µs summed by package."""
        cmd = self.prepare(path, secretish=secretish)
        argv = [self.python, "-IS", "-X", "importtime", cmd.launcher, *cmd.args]
        err = self.run(argv, cmd.stdin).stderr.decode(errors="replace")
        modules: dict[str, tuple[int, int]] = {}
        by_group: dict[str, int] = defaultdict(int)
        for line in err.splitlines():
            if not line.startswith("import time:") or "self [us]" in line:
                continue
            own, cumulative, name = line[len("import time:") :].split("|")
            modules.setdefault(name.strip(), (int(own), int(cumulative)))
            by_group[group(name.strip())] += int(own)
        return modules, by_group

    def processes(self, path: str) -> list[str]:
        strace = shutil.which("strace")
        if strace is None:
            return ["processes: strace is not installed"]
        cmd = self.prepare(path)
        trace = self.tmp / "strace.txt"
        # --seccomp-bpf: only execve stops the process, the rest runs at full speed
        argv = [strace, "-f", "--seccomp-bpf", "-ttt", "-q", "-s", "200", "-e", "trace=execve",
                "-e", "signal=none", "-o", str(trace), *cmd.argv]  # fmt: skip
        self.run(argv, cmd.stdin)
        children = execs(trace.read_text())
        gits = [c for c in children if c.program == "git"]
        lines = [
            f"processes: {len(children)} started ({len(gits)} git, "
            + ", ".join(f"{c.program}" for c in children if c.program != "git")
            + ")"
        ]
        t0 = children[0].start if children else 0.0
        for c in children:
            took = f"{(c.end - c.start) * 1000:.1f} ms" if c.end else "?"
            at = (c.start - t0) * 1000
            lines.append(f"  +{at:6.1f} ms  {took:>9}  {c.label}")
        return lines

    def python_profile(self, path: str, top: int = 14) -> tuple[list[str], pstats.Stats]:
        cmd = self.prepare(path)
        out = self.tmp / f"{path}.prof"
        argv = [self.python, "-IS", str(HERE / "profiled.py"), str(out), cmd.launcher, *cmd.args]
        self.run(argv, cmd.stdin)
        stats = pstats.Stats(str(out))
        rows = stats.stats  # type: ignore[attr-defined]
        total = max(ct for (_, _, _, ct, _) in rows.values())
        waits = sum(tt for key, (_, _, tt, _, _) in rows.items() if is_wait(key))
        lines = [
            f"cProfile (main thread): {total * 1000:.1f} ms profiled, "
            f"{waits * 1000:.1f} ms of it waiting (waitpid, reads, poll, locks)"
        ]
        by_cum = sorted(rows.items(), key=lambda kv: -kv[1][3])
        lines.append("  cumulative:")
        lines += [
            f"    {ct * 1000:7.1f} ms  {where(key)}"
            for key, (_, _, _, ct, _) in by_cum
            if not boring(key)
        ][:top]
        by_own = sorted(rows.items(), key=lambda kv: -kv[1][2])[:top]
        lines.append("  own time (← the caller that spent most of it):")
        for key, (_, _, tt, _, callers) in by_own:
            caller = max(callers.items(), key=lambda kv: kv[1][2], default=None)
            by = f"  ← {where(caller[0])}" if caller else ""
            lines.append(f"    {tt * 1000:7.1f} ms  {where(key)}{by}")
        return lines, stats

    def secret_scan(self, stats: pstats.Stats) -> list[str]:
        rows = stats.stats  # type: ignore[attr-defined]
        parts = []
        for name in ("_warnings", "scan_snapshot", "__init__", "scan_tree_sets"):
            for key, (_, _, _, ct, _) in rows.items():
                if key[0].endswith("save/secrets.py" if name != "_warnings" else "session.py") and (
                    key[2] == name
                ):
                    label = "_Engine.__init__" if name == "__init__" else name
                    parts.append(f"{label} {ct * 1000:.1f} ms")
        lines = ["secret scan: cProfile " + (", ".join(parts) or "not reached")]
        for secretish in (False, True):
            on: list[bench.Sample] = []
            off: list[bench.Sample] = []
            for _ in range(self.args.repeat):
                cmd = self.prepare("save", secretish=secretish)
                on.append(bench.measure(cmd.argv, self.b.cwd, self.b.env, gnu_time=False))
                cmd = self.prepare("save", secretish=secretish)
                quiet = ["git", "-c", "checkpoint.secretsOnSave=ignore", *cmd.argv[1:]]
                off.append(bench.measure(quiet, self.b.cwd, self.b.env, gnu_time=False))
            what = f"+ `{SECRETISH.format(n='N').strip()}`" if secretish else "the agent's change"
            lines.append(
                f"  save of {what}: {median_ms(on)} with the scan, {median_ms(off)} with "
                "secretsOnSave=ignore (wall / CPU, medians, alternating)"
            )
        modules, _ = self.import_times("save", secretish=True)
        loaded = modules.get("detect_secrets")
        lines.append(
            "  detect_secrets imported "
            + (f"at {loaded[1] / 1000:.1f} ms (cumulative)" if loaded else "not at all")
            + " by a save with that line"
        )
        return lines

    def path_report(self, path: str) -> list[str]:
        lines = [f"## {path}", "", *self.wall(path)]
        lines += self.imports(path)
        lines += self.processes(path)
        profile, stats = self.python_profile(path)
        lines += profile
        if path == "save":
            lines += self.secret_scan(stats)
        return [*lines, ""]


def median_ms(samples: list[bench.Sample]) -> str:
    wall = statistics.median(x.ms for x in samples)
    return f"{wall:.1f} / {statistics.median(x.cpu_ms for x in samples):.1f} ms"


@dataclass
class Child:
    pid: str
    start: float
    end: float | None
    program: str
    label: str


def execs(trace: str) -> list[Child]:
    """The processes an strace -f -ttt log shows started (successful execve), in order."""
    children: dict[str, Child] = {}
    for line in trace.splitlines():
        pid, stamp, rest = [*line.split(None, 2), "", ""][:3]
        if rest.startswith("execve(") and rest.rstrip().endswith("= 0"):
            argv = re.findall(r'"((?:[^"\\]|\\.)*)"', rest.split("], ", 1)[0])[1:]
            program = Path(argv[0]).name if argv else "?"
            if program.startswith("python"):
                program = "python " + Path(argv[-1] if len(argv) < 3 else argv[2]).name
            label = " ".join(argv[:6])[:110] if program != "git" else git_label(argv)
            children[pid] = Child(pid, float(stamp), None, program, label)
        elif "+++ exited" in rest and pid in children:
            children[pid].end = float(stamp)
    return sorted(children.values(), key=lambda c: c.start)


def git_label(argv: list[str]) -> str:
    """`git <subcommand> <args>` with the -c/-C options left out."""
    rest, i = argv[1:], 0
    while i < len(rest) and rest[i].startswith("-"):
        i += 2 if rest[i] in ("-c", "-C") else 1
    return ("git " + " ".join(rest[i : i + 5]))[:110]


def group(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "git_checkpoint" else parts[0]


def where(key: tuple[str, int, str]) -> str:
    file, line, func = key
    for marker in ("/git_checkpoint/", "/site-packages/", "/lib/python3"):
        if marker in file:
            file = file.split(marker, 1)[1]
            break
    return f"{func} ({file}:{line})" if file != "~" else func


def is_wait(key: tuple[str, int, str]) -> bool:
    return key[0] == "~" and any(w in key[2] for w in WAITS)


def boring(key: tuple[str, int, str]) -> bool:
    """The frames every profile starts with: the driver, exec, the import machinery."""
    if "<frozen importlib" in key[0]:
        return True
    return key[2] in ("<module>", "exec", "main") and "git_checkpoint" not in key[0]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--project", default="flask", help="one of bench/real.py's projects")
    p.add_argument("--paths", default=",".join(PATHS), help=f"comma-separated, of {PATHS}")
    p.add_argument("--repeat", type=int, default=7, help="runs per wall-time median")
    p.add_argument("--cache", type=Path, default=real.default_cache(), help="where sdists are kept")
    p.add_argument("--use-path", action="store_true", help="the git-checkpoint found on PATH")
    args = p.parse_args(argv)
    known = {pr.name: pr for pr in real.PROJECTS}
    if args.project not in known:
        p.error(f"--project: one of {', '.join(known)}")
    args.paths_list = [x.strip() for x in args.paths.split(",") if x.strip()]
    if not args.paths_list or any(x not in PATHS for x in args.paths_list):
        p.error(f"--paths: of {PATHS}")
    # what bench/real.py's ProjectBench reads from its arguments
    args.warmup, args.chosen = 0, known[args.project]
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    tarball = real.download(args.chosen, args.cache)
    if tarball is None:
        return 0
    home = Path(tempfile.mkdtemp(prefix="git-checkpoint-bench-home-"))
    work = Path(tempfile.mkdtemp(prefix="real-profile-work-"))
    cleanups: list[Callable[[], None]] = [
        lambda: shutil.rmtree(home, ignore_errors=True),
        lambda: shutil.rmtree(work, ignore_errors=True),
    ]
    try:
        bin_dir = bench.launcher_dir(args.use_path)
        env = bench.hermetic_env(home, bin_dir)
        args.python = real.interpreter(bin_dir, env)
        b = real.ProjectBench(args.chosen, real.unpack(tarball, work), env, args)
        profiler = Profiler(b, args)
        cleanups.append(lambda: shutil.rmtree(profiler.tmp, ignore_errors=True))
        print(f"# {args.chosen.name} {args.chosen.version} ({b.files} files)")
        print(f"load average at the start: {os.getloadavg()[0]:.2f}\n")
        for path in args.paths_list:
            print("\n".join(profiler.path_report(path)), flush=True)
    except bench.BenchError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 2
    finally:
        for cleanup in cleanups:
            cleanup()
    return 0


if __name__ == "__main__":
    sys.exit(main())
