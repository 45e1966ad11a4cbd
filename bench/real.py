#!/usr/bin/env python3
"""The benchmark on real projects: pinned sdists from the package index, each made a git
repository with `git checkpoint init`'s configuration (secret scan on) and the Claude Code
hooks installed, timed beside `git stash create` in the same run.

Each round, alternating, each operation from the same state (HEAD + an agent's change of
10 modified and 5 new files, written afresh and aged past git's racy window, untimed; the
change is the project's own code, new since the last checkpoint, as the secret scan
would meet an agent's work):
`git stash create` (the reference), `git status --porcelain`, `git stash push -u` +
`git stash apply --index`, `save`, the Edit hook with nothing changed since that save, the
hook for a harmless Bash command, the hook for `git reset --hard` (it saves), then, after
the reset, `restore` of what that hook saved and `undo`; and `python -IS -c pass` with the
launchers' interpreter, the floor of any Python process. Every figure is the median over
rounds of the wall time of the whole process (Python start-up included), and of its CPU
time (user + system, with its children: steadier on a shared machine); ratios are to
`git stash create` of the same project in the same run. Every sample goes to a JSON file.

    python bench/real.py [--projects flask,httpx,typer,django] [--repeat 7] \\
        [--json FILE] [--markdown FILE]
    python bench/bench.py --real ...   (the same)

The sdists are downloaded once (sha256 checked) into --cache (default
$XDG_CACHE_HOME/git-checkpoint-bench, else ~/.cache/git-checkpoint-bench); offline, a
project not in the cache is skipped with a line saying so. Standard library only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shlex
import shutil
import statistics
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import report

import bench

FILES = "https://files.pythonhosted.org/packages"


@dataclass(frozen=True)
class Project:
    name: str
    version: str
    url: str
    sha256: str


PROJECTS = (
    Project(
        "flask",
        "3.1.3",
        f"{FILES}/26/00/35d85dcce6c57fdc871f3867d465d780f302a175ea360f62533f12b27e2b/"
        "flask-3.1.3.tar.gz",
        "0ef0e52b8a9cd932855379197dd8f94047b359ca0a78695144304cb45f87c9eb",
    ),
    Project(
        "httpx",
        "0.29.0",
        f"{FILES}/9a/d5/b4d2c4d397b7c0222635cd069098f232fb5cba31f6749e77b339e263b52c/"
        "httpx-0.29.0.tar.gz",
        "700928ee6c1f4213795e67c47eba8f8553639069fea89199f71d654e38edc593",
    ),
    Project(
        "typer",
        "0.29.2",
        f"{FILES}/bf/21/37383ece7d0a4995fb8ea97729207c4292b3ff94085002f37b2387063cfb/"
        "typer-0.29.2.tar.gz",
        "b1998dc5f2c3dedafa1517a9521fa944cc4dc1fadcea085d81a3b10ebcaeb075",
    ),
    # The large one: its sdist carries the test suite and the docs, thousands of files.
    Project(
        "django",
        "6.1.3",
        f"{FILES}/55/79/49a609ea76ec51404b482932e33f1e6858946b920232c11b11a25bea3032/"
        "django-6.1.3.tar.gz",
        "b5d2d9e35295065d13b1927b3f19a59bd119f737aa6299def14ccca1ae3c8c0d",
    ),
)

# What Claude Code sends a PreToolUse hook: the documented payloads the hook tests use.
PAYLOADS = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "hooks" / "claude-code"

MODIFIED = 10
NEW = 5

# (key, label) in the table's order; "stash_create" is the reference every ratio uses.
OPS = (
    ("stash_create", "`git stash create`"),
    ("python", "`python -IS -c pass` (interpreter start)"),
    ("status", "`git status --porcelain`"),
    ("stash_both", "`git stash push -u` + `apply --index`"),
    ("save", "`save` (10 modified, 5 new)"),
    ("hook_edit_unchanged", "Edit hook, nothing changed"),
    ("hook_harmless", "Bash hook, `ls -la`"),
    ("hook_risky", "Bash hook, `git reset --hard` (saves)"),
    ("restore", "`restore` of that change"),
    ("undo", "`undo`"),
)
LABELS = dict(OPS)

# (key, at most this many × `git stash create`)
TARGETS = (
    ("save", 2.0),
    ("hook_edit_unchanged", 1.0),
    ("hook_harmless", 0.7),
    ("restore", 3.0),
)


def default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "git-checkpoint-bench"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def download(project: Project, cache: Path) -> Path | None:
    """The project's sdist from the cache, else from the index; None (said) when it
    cannot be had. A checksum that differs is an error, never a skip."""
    target = cache / Path(project.url).name
    if target.exists() and sha256_of(target) == project.sha256:
        return target
    cache.mkdir(parents=True, exist_ok=True)
    part = target.with_name(target.name + ".part")
    try:
        with urllib.request.urlopen(project.url, timeout=60) as resp, part.open("wb") as out:
            shutil.copyfileobj(resp, out)
    except (urllib.error.URLError, OSError) as exc:
        part.unlink(missing_ok=True)
        reason = getattr(exc, "reason", exc)
        say(f"skip {project.name} {project.version}: not in {cache} and no download ({reason})")
        return None
    got = sha256_of(part)
    if got != project.sha256:
        part.unlink()
        raise bench.BenchError(
            f"{project.url}: sha256 {got}, pinned {project.sha256}: not measuring that"
        )
    part.replace(target)
    return target


def say(line: str) -> None:
    print(f"[real] {line}", file=sys.stderr, flush=True)


def unpack(tarball: Path, into: Path) -> Path:
    with tarfile.open(tarball) as tar:
        tar.extractall(into, filter="data")
    (top,) = [p for p in into.iterdir() if p.is_dir()]
    return top


def payload(name: str, cwd: Path, tool_input: Mapping[str, object]) -> bytes:
    data = json.loads((PAYLOADS / f"{name}.json").read_text().replace("__CWD__", str(cwd)))
    data["tool_input"] = {**data["tool_input"], **tool_input}
    return json.dumps(data).encode()


@dataclass
class Op:
    key: str
    samples_ms: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)  # user + system, with the children

    @property
    def median_ms(self) -> float | None:
        return statistics.median(self.samples_ms) if self.samples_ms else None

    @property
    def median_cpu_ms(self) -> float | None:
        return statistics.median(self.cpu_ms) if self.cpu_ms else None


class ProjectBench:
    """One project made a repository, and its rounds."""

    def __init__(self, project: Project, top: Path, env: dict[str, str], args: argparse.Namespace):
        self.project = project
        self.cwd = top
        self.env = env
        self.args = args
        self.ops = {key: Op(key) for key, _ in OPS}
        self.problems: list[str] = []
        # In every edit: content git already stores is not written again.
        self.nonce = os.urandom(4).hex()
        self.git("init", "-q")
        self.git("add", "-A")
        self.git("commit", "-q", "-m", f"{project.name} {project.version}")
        self.files = len(self.git("ls-files", "-z").split("\0")) - 1
        self.git("checkpoint", "init")
        self.git("checkpoint", "hooks", "install", "--agent", "claude-code")
        self.hooks = self.installed_hooks()
        # A project adopting the tool commits what init and the hooks wrote.
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "git checkpoint init")
        self.changed, self.new_files, others = self.pick_files()
        self.original = {rel: (self.cwd / rel).read_bytes() for rel in self.changed}
        self.sources = [(self.cwd / rel).read_bytes() for rel in others]
        self.states = 0

    # helpers -------------------------------------------------------------------------------

    def git(self, *argv: str) -> str:
        return bench.run(["git", *argv], self.cwd, self.env)

    def installed_hooks(self) -> dict[str, list[str]]:
        """The command Claude Code runs for an Edit and for a Bash call, as installed."""
        settings = json.loads((self.cwd / ".claude" / "settings.json").read_text())
        found: dict[str, list[str]] = {}
        for entry in settings["hooks"]["PreToolUse"]:
            for tool in ("Edit", "Bash"):
                if tool in entry.get("matcher", "").split("|"):
                    found[tool] = shlex.split(entry["hooks"][0]["command"])
        if set(found) != {"Edit", "Bash"}:
            raise bench.BenchError(f"{self.project.name}: no Edit and Bash hooks in {settings}")
        return found

    def pick_files(self) -> tuple[list[str], list[str], list[str]]:
        """The agent's change: 10 tracked Python files spread over the project, 5 new
        files beside the first of them, and the other Python files (what new files hold)."""
        tracked = self.git("ls-files", "-z", "--", "*.py").split("\0")
        pool = sorted(rel for rel in tracked if rel and (self.cwd / rel).is_file())
        if len(pool) < MODIFIED + NEW:
            raise bench.BenchError(f"{self.project.name}: {len(pool)} Python files")
        step = len(pool) / MODIFIED
        changed = [pool[int(i * step)] for i in range(MODIFIED)]
        folder = Path(changed[0]).parent
        others = [rel for rel in pool if rel not in changed]
        return changed, [str(folder / f"agent_new_{i}.py") for i in range(NEW)], others

    def write(self, rel: str, data: bytes) -> None:
        (self.cwd / rel).write_bytes(data)

    def refs(self) -> set[str]:
        return set(self.git("for-each-ref", "--format=%(refname)", "refs/checkpoints/").split())

    def porcelain(self) -> str:
        return self.git("status", "--porcelain", "--untracked-files=all")

    def settle(self) -> None:
        """Untimed: refresh the index's stat data, wait for a background gc, flush dirty
        pages, and let the files just written age past git's racy window, as an agent's
        files have by its next tool call."""
        self.git("status", "--porcelain")
        bench.wait_for_gc(self.cwd)
        os.sync()
        time.sleep(bench.SETTLE_S)

    def agent_state(self, tag: str) -> None:
        """HEAD + the agent's change, as code reads, and new since the last checkpoint
        (the secret scan reads only that): each modified file gains a few of its own
        lines, from a place that moves with each state, and the new files are copies of
        other modules of the project, different ones in each state. `tag` ends every
        changed file."""
        self.git("reset", "-q", "--hard", "HEAD")
        self.git("clean", "-fdq")
        self.states += 1
        k = self.states
        for i, rel in enumerate(self.changed):
            lines = self.original[rel].splitlines(keepends=True)
            at = (k * 7) % max(1, len(lines) - 6)
            added = b"".join(lines[at : at + 6]).rstrip(b"\n") + b"\n"
            tail = f"# agent edit {i} {tag} {self.nonce}\n".encode()
            self.write(rel, self.original[rel] + b"\n" + added + tail)
        for j, rel in enumerate(self.new_files):
            source = self.sources[(k * NEW + j) % len(self.sources)]
            self.write(rel, source + f"\n# {tag} {self.nonce}\n".encode())
        self.settle()

    def edit_call(self) -> bytes:
        """Claude Code's PreToolUse payload for an Edit of the first changed file."""
        edit = {"file_path": str(self.cwd / self.changed[0]), "old_string": "a", "new_string": "b"}
        return payload("PreToolUse-Edit", self.cwd, edit)

    def harmless_call(self) -> bytes:
        return payload("PreToolUse-Bash-harmless", self.cwd, {"command": "ls -la"})

    def risky_call(self) -> bytes:
        return payload("PreToolUse-Bash-risky", self.cwd, {"command": "git reset --hard"})

    def reset_hard(self) -> str:
        """What the agent ran after the risky hook saved; the status it leaves."""
        self.git("reset", "-q", "--hard")
        self.settle()
        return self.porcelain()

    def timed(
        self, key: str, argv: Sequence[str], counted: bool, stdin: bytes | None = None
    ) -> str:
        sample = bench.measure(argv, self.cwd, self.env, stdin, gnu_time=False)
        if counted:
            self.ops[key].samples_ms.append(sample.ms)
            self.ops[key].cpu_ms.append(sample.cpu_ms)
        return sample.stdout + sample.stderr

    def check(self, ok: bool, what: str) -> None:
        if not ok:
            self.problems.append(f"{self.project.name}: {' '.join(what.split())}")

    # the rounds ----------------------------------------------------------------------------

    def round(self, r: int, counted: bool) -> None:
        self.agent_state(f"stash create {r}")
        self.timed("stash_create", ["git", "stash", "create"], counted)
        self.timed("python", [self.args.python, "-IS", "-c", "pass"], counted)
        self.timed("status", ["git", "status", "--porcelain"], counted)

        self.agent_state(f"stash {r}")
        expected = self.porcelain()
        push = self.timed_pair(counted)
        self.check(self.porcelain() == expected, f"stash push -u + apply --index: {push}")
        self.git("stash", "drop", "-q")

        self.agent_state(f"save {r}")
        before = self.refs()
        out = self.timed("save", ["git", "checkpoint", "save", "-m", f"bench {r}"], counted)
        self.check(len(self.refs() - before) == 1, f"save made no checkpoint: {out}")
        out = self.timed("hook_edit_unchanged", self.hooks["Edit"], counted, self.edit_call())
        self.check(len(self.refs() - before) == 1, f"the unchanged Edit hook saved: {out}")
        out = self.timed("hook_harmless", self.hooks["Bash"], counted, self.harmless_call())
        self.check(len(self.refs() - before) == 1, f"the harmless Bash hook saved: {out}")

        self.agent_state(f"risky {r}")
        changed = self.porcelain()
        before = self.refs()
        out = self.timed("hook_risky", self.hooks["Bash"], counted, self.risky_call())
        made = sorted(self.refs() - before)
        self.check(len(made) == 1, f"the risky Bash hook did not save: {out}")
        if len(made) != 1:
            return
        reset = self.reset_hard()
        cp_id = made[0].rsplit("/", 1)[-1]
        out = self.timed("restore", ["git", "checkpoint", "restore", cp_id], counted)
        self.check(self.porcelain() == changed, f"restore {cp_id}: status differs: {out}")
        self.check(
            (self.cwd / self.changed[0]).read_bytes().endswith(f"{r} {self.nonce}\n".encode()),
            f"restore {cp_id}: the change is not back",
        )
        self.settle()
        out = self.timed("undo", ["git", "checkpoint", "undo"], counted)
        self.check(self.porcelain() == reset, f"undo: status differs: {out}")

    def timed_pair(self, counted: bool) -> str:
        """`git stash push -u` then `git stash apply --index`: one figure, their sum."""
        push = bench.measure(["git", "stash", "push", "-u", "-q"], self.cwd, self.env, None, False)
        apply = bench.measure(
            ["git", "stash", "apply", "--index", "-q"], self.cwd, self.env, None, False
        )
        if counted:
            self.ops["stash_both"].samples_ms.append(push.ms + apply.ms)
            self.ops["stash_both"].cpu_ms.append(push.cpu_ms + apply.cpu_ms)
        return push.stderr + apply.stderr

    def run(self) -> None:
        for r in range(self.args.warmup + self.args.repeat):
            self.round(r, counted=r >= self.args.warmup)

    # the figures ---------------------------------------------------------------------------

    def ratio(self, key: str, cpu: bool = False) -> float | None:
        ref, op = self.ops["stash_create"], self.ops[key]
        ref_ms, ms = (ref.median_cpu_ms, op.median_cpu_ms) if cpu else (ref.median_ms, op.median_ms)
        return None if ref_ms is None or ms is None or ref_ms <= 0 else ms / ref_ms

    def as_json(self) -> dict[str, object]:
        return {
            "project": self.project.name,
            "version": self.project.version,
            "sha256": self.project.sha256,
            "files": self.files,
            "ops": {
                key: {
                    "label": LABELS[key],
                    "median_ms": op.median_ms,
                    "ratio_to_stash_create": self.ratio(key),
                    "samples_ms": op.samples_ms,
                    "median_cpu_ms": op.median_cpu_ms,
                    "cpu_ratio_to_stash_create": self.ratio(key, cpu=True),
                    "cpu_ms": op.cpu_ms,
                }
                for key, op in self.ops.items()
            },
            "targets": [
                {"op": key, "limit_ratio": limit, "ratio": self.ratio(key), "met": met}
                for key, limit, met in self.targets()
            ],
            "problems": self.problems,
        }

    def targets(self) -> list[tuple[str, float, bool | None]]:
        out: list[tuple[str, float, bool | None]] = []
        for key, limit in TARGETS:
            ratio = self.ratio(key)
            out.append((key, limit, None if ratio is None else ratio <= limit))
        return out


def cell(b: ProjectBench, key: str, cpu: bool = False) -> str:
    op = b.ops[key]
    ms, ratio = (op.median_cpu_ms if cpu else op.median_ms), b.ratio(key, cpu)
    if ms is None or ratio is None:
        return "–"
    return f"{ms:.1f} ({ratio:.2f}×)"


def table(benches: list[ProjectBench], cpu: bool) -> list[str]:
    keys = [key for key, _ in OPS if key != "stash_create"]
    lines = [
        "| project (files) | `git stash create` ms | " + " | ".join(LABELS[k] for k in keys) + " |",
        "|---|---:|" + "---:|" * len(keys),
    ]
    for b in benches:
        ref = b.ops["stash_create"]
        ms = ref.median_cpu_ms if cpu else ref.median_ms
        shown = "–" if ms is None else f"{ms:.1f}"
        name = f"{b.project.name} {b.project.version} ({b.files:,})"
        lines.append(f"| {name} | {shown} | " + " | ".join(cell(b, k, cpu) for k in keys) + " |")
    return lines


def markdown(benches: list[ProjectBench], head: list[str]) -> str:
    lines = [*head, "", *table(benches, cpu=False), ""]
    lines.append(
        "CPU time (user + system of the process and the children it waited for, and of the "
        "command server's worker that ran it; less "
        "sensitive than wall time to a machine shared with other work), medians, in "
        "brackets × the CPU time of `git stash create`:"
    )
    lines += ["", *table(benches, cpu=True)]
    lines += ["", "| project | target (× `git stash create`) | measured | |", "|---|---|---:|---|"]
    for b in benches:
        for key, limit, met in b.targets():
            ratio = b.ratio(key)
            shown = "–" if ratio is None else f"{ratio:.2f}×"
            verdict = "–" if met is None else ("**met**" if met else "**missed**")
            lines.append(f"| {b.project.name} | {LABELS[key]} ≤ {limit}× | {shown} | {verdict} |")
    problems = [p for b in benches for p in b.problems]
    if problems:
        lines += ["", "Problems (the workspace was not what it should be):", ""]
        lines += [f"- {p}" for p in problems]
    return "\n".join(lines) + "\n"


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    names = ",".join(pr.name for pr in PROJECTS)
    p.add_argument("--projects", default=names, help=f"comma-separated, of: {names}")
    p.add_argument("--repeat", type=int, default=7, help="timed rounds (median)")
    p.add_argument("--warmup", type=int, default=1, help="untimed rounds first")
    p.add_argument("--cache", type=Path, default=default_cache(), help="where sdists are kept")
    p.add_argument(
        "--workdir", type=Path, help="where the repositories are made (default: a temp dir)"
    )
    p.add_argument("--keep", action="store_true", help="leave the repositories in --workdir")
    p.add_argument(
        "--json",
        metavar="FILE",
        type=Path,
        help="every sample as JSON (default: real.json in --cache)",
    )
    p.add_argument("--markdown", metavar="FILE", help="write the report as Markdown")
    p.add_argument(
        "--use-path",
        action="store_true",
        help="run the git-checkpoint found on PATH, not the one beside this Python",
    )
    args = p.parse_args(argv)
    known = {pr.name: pr for pr in PROJECTS}
    wanted = [n.strip() for n in args.projects.split(",") if n.strip()]
    unknown = [n for n in wanted if n not in known]
    if unknown or not wanted:
        p.error(f"--projects: unknown {unknown}; known: {names}")
    args.project_list = [known[n] for n in wanted]
    if args.repeat < 1 or args.warmup < 0:
        p.error("--repeat must be >= 1 and --warmup >= 0")
    return args


def interpreter(bin_dir: Path | None, env: dict[str, str]) -> str:
    """The Python the launcher starts (its `#!` line; for the compiled client, the
    Python launcher's in libexec/ beside it), for the start-up floor."""
    exe = shutil.which("git-checkpoint-hook", path=env["PATH"])
    if exe is None:
        raise bench.BenchError("git-checkpoint-hook is not on PATH (./install.sh)")
    script = Path(exe).resolve()
    if not script.read_bytes().startswith(b"#!"):
        script = script.parent.parent / "libexec" / script.name
    first = script.read_bytes().split(b"\n", 1)[0].decode() if script.exists() else ""
    return shlex.split(first[2:])[0] if first.startswith("#!") else sys.executable


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="git-checkpoint-real-"))
    workdir.mkdir(parents=True, exist_ok=True)
    home = Path(tempfile.mkdtemp(prefix="git-checkpoint-bench-home-"))
    bin_dir = bench.launcher_dir(args.use_path)
    env = bench.hermetic_env(home, bin_dir)
    cp_exe = shutil.which("git-checkpoint", path=env["PATH"])
    if cp_exe is None:
        print("bench: git-checkpoint is not on PATH (./install.sh)", file=sys.stderr)
        return 2
    loads = [os.getloadavg()]
    benches: list[ProjectBench] = []
    try:
        args.python = interpreter(bin_dir, env)
        for project in args.project_list:
            tarball = download(project, args.cache)
            if tarball is None:
                continue
            top = unpack(tarball, Path(tempfile.mkdtemp(prefix=f"{project.name}-", dir=workdir)))
            say(f"{project.name} {project.version}: repository, init, hooks")
            b = ProjectBench(project, top, env, args)
            say(f"{project.name}: {b.files} files, {args.warmup}+{args.repeat} rounds")
            b.run()
            benches.append(b)
            loads.append(os.getloadavg())
            if not args.keep:
                shutil.rmtree(top.parent, ignore_errors=True)
    except bench.BenchError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 2
    finally:
        shutil.rmtree(home, ignore_errors=True)
        if not args.keep and args.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    if not benches:
        print("bench: no project to measure (offline, and none in the cache)", file=sys.stderr)
        return 0
    shown = ", ".join(f"{a:.2f}" for a, _, _ in loads)
    head = [
        "# git checkpoint on real projects, beside `git stash create`",
        "",
        report.machine_line(cp_exe) + ".",
        f"Load average (1 min) at the start and after each project: {shown}.",
        "",
        "    python bench/real.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "",
        f"Medians of {args.repeat} rounds (after {args.warmup} untimed), whole processes, the "
        "operations alternating within each round, each from the same state: HEAD + an "
        f"agent's change of {MODIFIED} modified and {NEW} new files (the project's own code: "
        "a few lines of each modified file appended to it, other modules copied as the new "
        "files, different in each state), aged past git's racy window. In brackets the "
        "ratio to `git stash create` of the same project in this run. Hooks are the commands "
        "`git checkpoint hooks install --agent claude-code` wrote, fed "
        "Claude Code's PreToolUse payload on stdin.",
    ]
    text = markdown(benches, head)
    print(text)
    data = {
        "machine": report.machine_line(cp_exe),
        "loads": loads,
        "repeat": args.repeat,
        "warmup": args.warmup,
        "projects": [b.as_json() for b in benches],
    }
    written = args.json or args.cache / "real.json"
    written.write_text(json.dumps(data, indent=1) + "\n")
    say(f"samples written to {written}")
    if args.markdown:
        Path(args.markdown).write_text(text)
    return 1 if any(b.problems for b in benches) else 0


if __name__ == "__main__":
    sys.exit(main())
