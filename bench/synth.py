"""The benchmark's synthetic repositories, built once and cached.

N tracked files in nested folders (4-6 deep), text of 1-20 KB (a few binaries, 1 %
executable, a few symlinks), an ignored node_modules/ of many small files, a
`.checkpoint.yaml` that includes an ignored fixture folder. Built under a cache folder
(default /tmp/bench-cache) keyed by size, seed and generator version, and put back to
its committed state before each use. Standard library only.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import string
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path

VERSION = 2  # bump when the generated content changes: the cache key holds it
NEW_FILES_DIR = "src/agent"  # the agent's new untracked files
FIXTURE_DIR = "tmp/fixtures"  # ignored (tmp/), captured through untracked.include
CONFIG = "untracked:\n  include: [tmp/fixtures/]\n"


@dataclass
class SyntheticRepo:
    path: Path
    regular: list[str]  # tracked regular, non-executable text files
    symlinks: list[str]
    executables: list[str]
    binaries: list[str]
    changed: list[str]  # the agent's modified tracked files
    new_files: list[str]  # the agent's untracked files
    fixtures: list[str]  # the agent's files in the included, ignored folder
    attempt_pool: list[str]  # other tracked files, for a failed attempt's edits
    original: dict[str, bytes] = field(default_factory=dict, repr=False)

    def load_originals(self, pool: int) -> None:
        for rel in self.changed + self.attempt_pool[:pool]:
            self.original[rel] = (self.path / rel).read_bytes()


def _word(rng: random.Random) -> str:
    return "".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 9)))


def generate(path: Path, n_files: int, n_node_modules: int, seed: int) -> SyntheticRepo:
    """Write the work tree: n_files tracked entries (a few of them symlinks)."""
    rng = random.Random(seed * 1_000_003 + n_files)
    vocab = [_word(rng) for _ in range(400)]
    pool = []
    for _ in range(3000):  # line pool: files are random draws, so text looks like text
        indent = " " * (4 * rng.randint(0, 3))
        pool.append(indent + " ".join(rng.choices(vocab, k=rng.randint(3, 12))) + "\n")
    avg_line = sum(map(len, pool)) / len(pool)

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

    made: set[str] = set()
    regular: list[str] = []
    executables: list[str] = []
    binaries: list[str] = []
    symlinks: list[str] = []
    link_slots = set(rng.sample(range(n_files), min(n_symlinks, n_files // 2)))
    for i, rel in enumerate(entries):
        folder = rel.rsplit("/", 1)[0]
        if folder not in made:
            (path / folder).mkdir(parents=True, exist_ok=True)
            made.add(folder)
        if i in link_slots:
            continue  # after the loop: a link needs its target's path
        size = int(rng.triangular(1024, 20 * 1024, 4 * 1024))
        if i % 200 == 77:  # a few binaries
            rel = rel.rsplit(".", 1)[0] + ".bin"
            entries[i] = rel
            (path / rel).write_bytes(rng.randbytes(size))
            binaries.append(rel)
            continue
        k = max(1, round(size / avg_line))
        (path / rel).write_text(f"# {rel}\n" + "".join(rng.choices(pool, k=k)))
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

    (path / ".gitignore").write_text("node_modules/\n*.log\ntmp/\n")
    (path / ".checkpoint.yaml").write_text(CONFIG)
    for j in range(n_node_modules):
        dep = path / "node_modules" / f"pkg{j // 50}" / "lib"
        if j % 50 == 0:
            dep.mkdir(parents=True, exist_ok=True)
        (dep / f"m{j}.js").write_text(f"module.exports = {j};\n" + "// vendored\n" * 50)

    order = list(regular)
    rng.shuffle(order)
    changed = order[:10]
    new_files = [f"{NEW_FILES_DIR}/new_{i}.py" for i in range(5)]
    fixtures = fixture_names()
    return SyntheticRepo(
        path, regular, symlinks, executables, binaries, changed, new_files, fixtures, order[10:]
    )


def fixture_names() -> list[str]:
    """The agent's files in the included folder (not generated: the cache does not hold them)."""
    return [f"{FIXTURE_DIR}/case_{i:03d}.json" for i in range(100)]


def _git(path: Path, env: dict[str, str], *args: str) -> None:
    subprocess.run(["git", *args], cwd=path, env=env, check=True, capture_output=True)


def cached(
    root: Path, n_files: int, n_node_modules: int, seed: int, env: dict[str, str], pool: int
) -> SyntheticRepo:
    """The repository of this size from the cache (built and committed on first use),
    put back to its committed state: no checkpoints, no stash, no untracked files."""
    key = root / f"v{VERSION}-{n_files}-nm{n_node_modules}-s{seed}"
    meta = key / "meta.json"
    path = key / "repo"
    if not meta.exists():
        shutil.rmtree(key, ignore_errors=True)
        path.mkdir(parents=True)
        repo = generate(path, n_files, n_node_modules, seed)
        _git(path, env, "init", "-q")
        _git(path, env, "add", "-A")
        _git(path, env, "commit", "-q", "-m", "synthetic repository")
        data = {k: v for k, v in asdict(repo).items() if k not in ("path", "original")}
        meta.write_text(json.dumps(data))
    data = json.loads(meta.read_text())
    data["fixtures"] = fixture_names()
    repo = SyntheticRepo(path=path, **data)
    reset(repo, env)
    maintained(path, env)
    repo.load_originals(pool)  # only what the attempts edit: a small bench process
    return repo


def untracked_cache(path: Path, env: dict[str, str], on: bool) -> None:
    """core.untrackedCache as this run asks (one cached repository serves runs with and
    without it); on: written once by a `git status` before anything is timed."""
    if on:
        _git(path, env, "config", "core.untrackedCache", "true")
        _git(path, env, "status", "--porcelain")
    else:
        subprocess.run(
            ["git", "config", "--unset", "core.untrackedCache"],
            cwd=path,
            env=env,
            capture_output=True,
            check=False,  # (not set: nothing to unset)
        )


def maintained(path: Path, env: dict[str, str]) -> None:
    """The repository as git's maintenance keeps one: the objects of earlier runs gone
    (a cache used by many runs held 600,000 loose objects and 190 packs, and every object
    lookup paid for them). The committed content is packed once and kept (a .keep file),
    so later runs only drop what the last one added."""
    pack = path / ".git" / "objects" / "pack"
    _git(path, env, "reflog", "expire", "--expire=now", "--all")
    _git(path, env, "gc", "-q", "--prune=now")  # (what no .keep pack holds)
    if not list(pack.glob("*.keep")):
        for found in pack.glob("*.pack"):
            found.with_suffix(".keep").write_text("the benchmark's committed content\n")


def reset(repo: SyntheticRepo, env: dict[str, str]) -> None:
    path = repo.path
    _git(path, env, "reset", "-q", "--hard", "HEAD")
    _git(path, env, "clean", "-fdq")
    shutil.rmtree(path / "tmp", ignore_errors=True)  # the ignored fixture folder
    refs = subprocess.run(
        ["git", "for-each-ref", "--format=%(refname)", "refs/checkpoints/", "refs/bench/"],
        cwd=path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    refs += ["refs/stash"]
    stdin = "".join(f"delete {r}\n" for r in refs)
    subprocess.run(
        ["git", "update-ref", "--stdin"],
        cwd=path,
        env=env,
        input=stdin,
        text=True,
        check=False,
        capture_output=True,
    )
    shutil.rmtree(path / ".git" / "checkpoint", ignore_errors=True)
    (path / ".git" / "info").mkdir(exist_ok=True)
