"""Deterministic fault injection: kill git-checkpoint at its N-th git call.

`tests/fault_git/git` stands first on PATH and SIGKILLs its parent, the git-checkpoint
process, at call N: in mode "before" instead of running that call, in mode "after" once it
has run. Only git-checkpoint's own calls go through it; the test's calls use the real git.
The early scan's three git children (fast/prescan) are among them: the fork server starts
it for each run as the installed launcher does.

Each scenario prepares a template repository once and runs the operation on a copy to
count its git calls T. B is the state the operation starts from, A the one it must reach:
for `restore cp_001` the state saved as cp_001; for `undo` (of that restore) the state
before the restore; for `restore --continue` (of that restore, killed after its writes)
the state saved as cp_001, with `undo` going back to before the restore. Variants: plain
(modified, added, removed, staged and unstaged files, an overlay file, an exec bit, a
symlink), ignore (the restore changes .gitignore: an ignored file becomes residue to
sweep), ita (`git add -N` entries), head (a commit since: `restore --move-head`). Ignored,
excluded and secret files sit outside the managed set throughout. The whole run must
reach A. Then for both modes and every N in 1..T a fresh copy of the template is
killed at call N, and two copies of the killed state are recovered:

- `restore --continue` must leave A. Exit 2 "no interrupted restore" is accepted when
  the killed run left B or A.
- `undo` must leave B.
- A killed run that had not begun (no journal; work tree, index and HEAD untouched) may
  be taken as one that never ran: recovery may then leave B, or do what it does on the
  template (exit 0 or 2).

The same is done for git-checkpoint's own file system calls (rename, unlink, mkdir,
write…, between two git calls): with the fork server (Runner; not under FI_EXEC=1) the
child kills itself before its N-th such call (mode "fs"), in restore-plain and
restore-ignore; `fs_matters` says which calls are skipped. FI_ALL=1: every call, every
scenario.

"Leave" is byte for byte: every file below the work tree, ignored and excluded ones too
(so nothing outside the managed set may change), kinds, exec bits, symlink targets,
`git ls-files -s -v`, `git status --porcelain` (intent-to-add shows there), HEAD and its
branch; and `git fsck --strict` is clean and no restore journal is left pending.

Killed states that are identical (files, index, refs, journal but for pid and time) are
recovered once, and a kill right after a read-only git call (READ_ONLY) is taken as the
kill right before it; FI_ALL=1 runs and recovers every one. FI_REPORT=file appends every
verdict as a JSON line. The verdicts print as a table (pytest -rA or -s shows it).

Three kill points are checked on their own as well: killed after the files are written,
`--continue` leaves no stale intent-to-add entry; killed right after a ref moved, `undo`
goes back; and `drop` keeps the safety checkpoint a pending restore needs."""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from ..conftest import Repo, make_repo
from ..fault_injection import REAL_GIT, Run, Runner, git
from ..fault_injection import checkpoint as checkpoint  # the fixture
from ..helpers import Fingerprint, fingerprint

JOURNAL = ".git/checkpoint/restore-journal.json"


@dataclass(frozen=True)
class Look:
    """What must be byte for byte equal: the work tree, the index, HEAD."""

    files: Fingerprint
    index: str  # git ls-files -s -v (marks)
    status: str  # git status --porcelain (intent-to-add, staged vs unstaged)
    head: str  # branch and commit


def refs(path: Path) -> dict[str, str]:
    """HEAD and every ref, read from the files: name -> object id, or "ref: …"."""
    gd = path / ".git"
    out: dict[str, str] = {}
    packed = gd / "packed-refs"
    if packed.exists():
        for line in packed.read_text().splitlines():
            if line and line[0] not in "#^":
                oid, name = line.split(" ", 1)
                out[name] = oid
    for dirpath, _, files in os.walk(gd / "refs"):
        for name in files:
            full = Path(dirpath) / name
            out[full.relative_to(gd).as_posix()] = full.read_text().strip()
    out["HEAD"] = (gd / "HEAD").read_text().strip()
    return out


def look(path: Path) -> Look:
    known = refs(path)
    head = known["HEAD"]
    if head.startswith("ref: "):
        head += " " + known.get(head[5:], "(unborn)")
    return Look(
        files=fingerprint(path),
        index=git(path, "ls-files", "-s", "-v"),
        status=git(path, "--no-optional-locks", "status", "--porcelain", "--untracked-files=all"),
        head=head,
    )


def trace(path: Path, seen: Look) -> str:
    """What a killed run may have changed that recovery reads: files, index, refs, our
    journal (but for its pid and time) and log of restores."""
    journal, done = path / JOURNAL, path / ".git/checkpoint/restores.jsonl"
    pending = json.loads(journal.read_text()) if journal.exists() else None
    if isinstance(pending, dict):
        pending.pop("pid", None)
        pending.pop("started_at", None)
    known = refs(path)
    log = done.read_text() if done.exists() else ""
    return repr((seen, sorted(known.items()), json.dumps(pending), log))


def state_key(path: Path, left: str) -> str:
    """Two killed states with one key recover alike: the trace, and our files in .git (a
    temporary folder by its contents, not its random name; an index not by its stat data)."""
    ours = []
    found = [*(path / ".git/checkpoint").glob("*"), *(path / ".git").glob("checkpoint-*")]
    for entry in found:
        inside = []
        if entry.is_dir():
            for rel, (kind, data, _) in fingerprint(entry, skip=()).items():
                inside.append((rel, kind, b"(index)" if data.startswith(b"DIRC") else data))
        ours.append((entry.name.split("-")[0] if entry.is_dir() else entry.name, sorted(inside)))
    return repr((left, sorted(ours)))


def differences(got: Look, want: Look) -> str:
    """A short account of how `got` differs from `want`."""
    out: list[str] = []
    missing = sorted(set(want.files) - set(got.files))
    extra = sorted(set(got.files) - set(want.files))
    changed = sorted(p for p in set(got.files) & set(want.files) if got.files[p] != want.files[p])
    for label, paths in (("missing", missing), ("extra", extra), ("changed", changed)):
        if paths:
            out.append(f"{label} {', '.join(paths[:5])}" + (" …" if len(paths) > 5 else ""))
    for label, a, b in (("index", got.index, want.index), ("status", got.status, want.status)):
        if a != b:
            lines_a, lines_b = set(a.splitlines()), set(b.splitlines())
            plus = [f"+{x}" for x in sorted(lines_a - lines_b)][:3]
            minus = [f"-{x}" for x in sorted(lines_b - lines_a)][:3]
            out.append(f"{label} {' '.join(minus + plus)}")
    if got.head != want.head:
        out.append(f"HEAD {got.head.split()} want {want.head.split()}")
    return "; ".join(out) or "equal"


def fsck_problems(path: Path) -> str:
    proc = subprocess.run(
        [REAL_GIT, "fsck", "--strict", "--no-dangling", "--no-progress"],
        cwd=path,
        capture_output=True,
        text=True,
        check=False,
    )
    text = (proc.stdout + proc.stderr).strip()
    return "" if proc.returncode == 0 and not text else f"fsck exit {proc.returncode}: {text[:200]}"


def _copy_file(src: str, dst: str) -> None:
    # Objects are never rewritten in place: a link will do. The index.lock a killed run
    # left is recognised as its own by its identity (device and inode): a copy of it
    # would be another file, one the product rightly never removes.
    if "/.git/objects/" in src or src.endswith("/.git/index.lock"):
        os.link(src, dst)
    else:
        shutil.copy2(src, dst)


def copy(src: Path, dst: Path) -> Path:
    """A whole repository, work tree and git dir (symlinks as symlinks)."""
    shutil.copytree(src, dst, symlinks=True, copy_function=_copy_file)
    return dst


def pack(path: Path) -> None:
    """Fewer files to copy and delete for every kill point: the reachable objects in one
    pack (unreachable ones stay loose, nothing is pruned)."""
    git(path, "repack", "-a", "-d", "-q")


# --- the scenarios ------------------------------------------------------------------------


def _outside(repo: Repo) -> None:
    """Files outside the managed set: they must never change."""
    repo.write("debug.log", "ignored\n")
    repo.write("node_modules/pkg/index.js", "excluded\n")
    repo.write(".env", "SECRET=1\n")


def _base(checkpoint: Runner, repo: Repo, variant: str) -> Look:
    """A committed project, a target state saved as cp_001 (returned), then a different
    current state."""
    repo.write("README.md", "# project\n")
    repo.write("src/app.py", "print('base')\n")
    repo.write("src/util.py", "v1\n")
    repo.write("src/old.py", "old\n")
    repo.write("docs/guide.md", "guide\n")
    repo.write("bin/run.sh", "#!/bin/sh\necho run\n", mode=0o755)
    (repo.path / "link").symlink_to("src/app.py")
    repo.write(".gitignore", "*.log\nnode_modules/\n")
    repo.commit_all("base")
    _outside(repo)

    # the target: modified, staged differently from the work tree, added, overlay
    repo.write("src/app.py", "print('target')\n")
    repo.write("src/util.py", "v2 staged\n")
    repo.git("add", "src/util.py")
    repo.write("src/util.py", "v3 unstaged\n")
    repo.write("src/new.py", "new in target\n")
    repo.git("add", "src/new.py")
    repo.write("notes/todo.txt", "overlay file\n")
    if variant == "ita":
        repo.write("src/planned.py", "planned\n")
        repo.git("add", "-N", "src/planned.py")
    saved = checkpoint(repo.path, "save", "-m", "target")
    assert saved.code == 0, saved.line()
    target = look(repo.path)
    if variant == "head":  # a commit since: the restore moves the branch back (--move-head)
        repo.write("docs/guide.md", "guide, committed after the checkpoint\n")
        repo.git("commit", "-q", "-m", "later", "--", "docs/guide.md")

    # the current state: everything different
    repo.write("src/app.py", "print('current')\n")
    repo.git("reset", "-q", "--", "src/util.py", "src/new.py")
    repo.write("src/util.py", "v1 edited\n")
    (repo.path / "src/new.py").unlink()
    (repo.path / "src/old.py").unlink()
    (repo.path / "bin/run.sh").chmod(0o644)
    (repo.path / "link").unlink()
    (repo.path / "link").symlink_to("README.md")
    shutil.rmtree(repo.path / "notes")
    repo.write("attempt.txt", "residue of an attempt\n")
    repo.write("src/extra.py", "staged new\n")
    repo.git("add", "src/extra.py")
    if variant == "ita":
        repo.git("rm", "-q", "--cached", "src/planned.py")
        (repo.path / "src/planned.py").unlink()
        repo.write("src/draft.py", "draft\n")
        repo.git("add", "-N", "src/draft.py")
    if variant == "ignore":
        # ignored now, not under the target's rules: the sweep must keep it, then remove it
        repo.write(".gitignore", "*.log\nnode_modules/\nscratch/\n")
        repo.write("scratch/notes.txt", "ignored now, residue under the target's rules\n")
    return target


@dataclass
class Prepared:
    template: Path  # the repository before the operation
    op: tuple[str, ...]
    before: Look
    after: Look
    calls: list[str]  # each git call of a whole run
    fs: list[str]  # each file system call of a whole run (paths in the copy it ran in)
    whole: str = ""  # what is wrong with the state a whole run leaves
    on_template: dict[str, tuple[int, Look]] = field(default_factory=dict)  # path -> result


RESTORE = ("restore", "cp_001")


CONTINUE = ("restore", "--continue")


def written(path: Path, after: Look) -> bool:
    """Whether a killed restore had begun (its journal) and written every file of A."""
    files = fingerprint(path)
    return (path / JOURNAL).exists() and all(files.get(p) == f for p, f in after.files.items())


def _after_the_writes(
    checkpoint: Runner, start: Path, op: tuple[str, ...], calls: list[str], after: Look
) -> int:
    """The first call N such that a restore killed before it has written the work tree:
    what is left for `--continue` is the index, the marks and the sweep."""
    first = next((n for n, c in enumerate(calls, 1) if c.startswith("update-ref")), 1)
    for n in range(first, len(calls) + 1):  # no journal before the safety checkpoint's ref
        probe = copy(start, start.parent / "probe")
        checkpoint(probe, *op, kill_at=n, mode="before")
        done = written(probe, after)
        shutil.rmtree(probe)
        if done:
            return n
    raise AssertionError(f"no kill point of {op} leaves the files written and a journal")


def prepare(checkpoint: Runner, scenario: str, root: Path) -> Prepared:
    """The template of `scenario` (kind-variant) and a whole run of its operation."""
    kind, variant = scenario.split("-")
    repo = make_repo(root / "start")
    target = _base(checkpoint, repo, variant)
    start = look(repo.path)
    restore = (*RESTORE, "--move-head") if variant == "head" else RESTORE
    template, op, before, after = repo.path, restore, start, target
    if kind != "restore":
        first = checkpoint(copy(repo.path, root / "restored"), *restore)
        assert first.code == 0, first.line()
        if kind == "undo":  # right after a whole restore
            template, op = root / "restored", ("undo",)
            before, after = look(template), start
        else:  # a restore interrupted after its writes
            n = _after_the_writes(checkpoint, repo.path, restore, first.calls, target)
            template = copy(repo.path, root / "interrupted")
            killed = checkpoint(template, *restore, kill_at=n, mode="before")
            assert killed.code == -9, killed.line()
            op = CONTINUE
    pack(template)
    whole = checkpoint(copy(template, root / "whole"), *op)
    assert whole.code == 0, whole.line()
    prepared = Prepared(template, op, before, after, whole.calls, whole.fs)
    if look(root / "whole") != after:
        prepared.whole = f"the uninterrupted run: {differences(look(root / 'whole'), after)}"
    for path, args in RECOVERIES.items():  # what recovery does when a run left no trace
        where = copy(template, root / f"template-{path}")
        run = checkpoint(where, *args, kill_at=None)
        prepared.on_template[path] = (run.code, look(where))
        shutil.rmtree(where)
    shutil.rmtree(root / "whole")
    return prepared


RECOVERIES = {"continue": CONTINUE, "undo": ("undo",)}


# git commands that write nothing but unreferenced objects: a kill after one leaves what
# a kill before it leaves (FI_ALL=1 runs those kill points too). Not `status` (it may
# refresh the index), not `write-tree` (it writes the index's cache tree).
READ_ONLY = {"rev-parse", "for-each-ref", "ls-files", "ls-tree", "cat-file", "diff-files"}
READ_ONLY |= {"commit-tree", "mktree", "hash-object"}


def fs_matters(call: str) -> bool:
    """Whether a kill before this file system call can leave a state of its own: not when
    it failed (a mkdir of a folder that exists), fed a git child's stdin (the git kill
    points cover that), or worked inside a temporary folder (a temporary index, or
    rmtree's relative calls)."""
    what = call.split(" ", 1)[1] if " " in call else ""
    return not (
        "[failed" in call
        or what.startswith("pipe:")
        or "/.git/checkpoint-" in what
        or not what.startswith("/")
    )


def read_only(call: str) -> bool:
    verb = call.split(" ", 1)[0]
    return verb in READ_ONLY or (verb == "config" and " --get" in call)


@dataclass
class Verdict:
    scenario: str
    mode: str
    n: int
    call: str  # the git call killed before or after
    path: str  # continue or undo
    problem: str  # "" when it passed
    same_as: str = ""  # an earlier kill point that left the same state
    left: str = ""  # temporary folders recovery left in .git (reported, not a failure)

    @property
    def ok(self) -> bool:
        return not self.problem


def judge(prep: Prepared, begun: bool, path: str, run: Run, where: Path) -> str:
    """What is wrong with the state `path` recovered to ("" when nothing).

    `begun`: the killed run left a journal, or changed the work tree, index or HEAD.
    """
    got = look(where)
    problems: list[str] = []
    if not begun:  # as if it never ran: B, or what recovery does on the template
        code, want = prep.on_template[path]
        if run.code not in (0, 2) or got not in (prep.before, want):
            problems.append(
                f"{run.line()}; differs from the before state and from {path} on the template "
                f"(exit {code}): {differences(got, prep.before)}"
            )
    elif path == "continue" and run.code == 2 and got in (prep.before, prep.after):
        if (where / JOURNAL).exists():
            problems.append(f"{run.line()}, with a journal pending")
    else:
        want, name = (prep.after, "after") if path == "continue" else (prep.before, "before")
        if run.code != 0:
            problems.append(run.line())
        if got != want:
            alt = " (it is the before state)" if got == prep.before else ""
            alt = " (it is the after state)" if got == prep.after else alt
            problems.append(f"differs from the {name} state{alt}: {differences(got, want)}")
    if (where / JOURNAL).exists():
        problems.append("a restore journal is still pending")
    problems.append(fsck_problems(where))
    return "; ".join(p for p in problems if p)


def temporary(path: Path) -> set[str]:
    """Temporary folders in the git dir: a killed run's, if recovery leaves them."""
    found = [*(path / ".git").glob("checkpoint-*"), *(path / ".git/checkpoint").glob("*-*")]
    return {
        p.relative_to(path / ".git").as_posix().split("-")[0] + "-*" for p in found if p.is_dir()
    }


def own_cpu() -> float:
    """CPU seconds of this process and the git calls it waited for (not the server's)."""
    me, kids = (resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def kill_points(
    checkpoint: Runner, scenario: str, root: Path, cost: dict[str, float]
) -> tuple[Prepared, list[Verdict]]:
    """Every kill point of the scenario, recovered both ways; CPU seconds go to `cost`."""
    start, ran = own_cpu(), checkpoint.cpu
    prep = prepare(checkpoint, scenario, root)
    cost["prepare"] = own_cpu() - start + checkpoint.cpu - ran
    start, ran = own_cpu(), checkpoint.cpu
    seen: dict[str, tuple[str, dict[str, str]]] = {}
    verdicts = [Verdict(scenario, "whole", 0, "", "none", prep.whole)]
    every = os.environ.get("FI_ALL") == "1"
    # File system kill points for the plain and ignore restores (undo and --continue carry
    # out a plan the same way; ita and head add git calls): every scenario with FI_ALL=1.
    fs = prep.fs if scenario in ("restore-plain", "restore-ignore") or every else []
    for mode, calls in (("before", prep.calls), ("after", prep.calls), ("fs", fs)):
        for n, call in enumerate(calls, 1):
            if mode == "fs" and not every and not fs_matters(call):
                continue
            if mode == "after" and read_only(call) and not every:
                # nothing written by the call: killed after it is killed before it
                done = {v.path: v for v in verdicts if (v.mode, v.n) == ("before", n)}
                verdicts += [
                    Verdict(scenario, mode, n, call, p, done[p].problem, f"before {n}")
                    for p in RECOVERIES
                ]
                continue
            killed = copy(prep.template, root / "killed")
            before_kill = checkpoint.cpu
            run = checkpoint(killed, *prep.op, kill_at=n, mode=mode)
            cost["kills"] = cost.get("kills", 0.0) + checkpoint.cpu - before_kill
            label = f"{mode} {n}"
            if run.code != -9:
                problem = f"not killed at call {n}: {run.line()} after {len(run.calls)} calls"
                verdicts += [Verdict(scenario, mode, n, call, p, problem) for p in RECOVERIES]
                shutil.rmtree(killed)
                continue
            now = look(killed)
            key = state_key(killed, trace(killed, now))
            begun = (killed / JOURNAL).exists() or now != prep.before
            if key in seen and not every:
                first, problems = seen[key]
                verdicts += [
                    Verdict(scenario, mode, n, call, p, problems[p], same_as=first)
                    for p in RECOVERIES
                ]
                shutil.rmtree(killed)
                continue
            problems, left = {}, {}
            copy(killed, root / "killed-undo")
            for path, where in (("continue", killed), ("undo", root / "killed-undo")):
                recovered = checkpoint(where, *RECOVERIES[path], kill_at=None)
                problems[path] = judge(prep, begun, path, recovered, where)
                left[path] = " ".join(sorted(temporary(where) - temporary(prep.template)))
                shutil.rmtree(where)
            seen.setdefault(key, (label, problems))
            verdicts += [
                Verdict(scenario, mode, n, call, p, problems[p], left=left[p]) for p in RECOVERIES
            ]
    cost["recoveries"] = checkpoint.cpu - ran - cost.get("kills", 0.0)
    cost["checks"] = own_cpu() - start
    if checkpoint.server is None:  # the runs were this process's children too
        cost["checks"] -= checkpoint.cpu - ran
    return prep, verdicts


def shown(call: str) -> str:
    """A logged call without the temp path of the copy it ran in."""
    return re.sub(r"\S*/whole/", "", call)


def summary(scenario: str, prep: Prepared, verdicts: list[Verdict], cost: dict[str, float]) -> str:
    checks = [v for v in verdicts if v.n]
    kills = {(v.mode, v.n) for v in checks}
    distinct = sum(1 for v in checks if not v.same_as and v.path == "undo")
    failed = [v for v in checks if not v.ok]
    lines = [
        f"{scenario}: `git checkpoint {' '.join(prep.op)}` makes {len(prep.calls)} git calls "
        f"and {len(prep.fs)} file system calls of its own; "
        f"{len(kills)} kill points ({distinct} distinct states) x 2 recovery paths = "
        f"{len(checks)} checks, {len(checks) - len(failed)} pass, {len(failed)} fail",
        "  CPU seconds: "
        + ", ".join(f"{k} {v:.1f}" for k, v in cost.items())
        + f", total {sum(cost.values()):.1f}",
    ]
    marks = {(v.mode, v.n, v.path): "ok" if v.ok else "FAIL" for v in verdicts}
    lines.append("   N  before: continue/undo  after: continue/undo  call")
    for n, call in enumerate(prep.calls, 1):
        row = [marks.get((m, n, p), "-") for m in ("before", "after") for p in RECOVERIES]
        lines.append(
            f"  {n:2}  {row[0]:>4}/{row[1]:<4}           {row[2]:>4}/{row[3]:<4}"
            f"         {call[:70]}"
        )
    tried = sorted({v.n for v in checks if v.mode == "fs"})
    if tried:
        lines.append(
            f"   N  fs (killed before): continue/undo  call"
            f"  ({len(prep.fs) - len(tried)} calls that cannot matter skipped)"
        )
        for n in tried:
            row = [marks.get(("fs", n, p), "-") for p in RECOVERIES]
            lines.append(f"  {n:2}  {row[0]:>23}/{row[1]:<4}  {shown(prep.fs[n - 1])[:70]}")
    left = [v for v in checks if v.left and not v.same_as]
    if left:
        lines.append(
            f"  note: {len(left)} recoveries of distinct states left temporary folders in .git"
            f" (not a failure), e.g. kill {left[0].mode} {left[0].n} -> {left[0].path}: "
            f"{left[0].left}"
        )
    if prep.whole:
        lines.append(f"  FAIL {scenario}: {prep.whole}")
    for v in failed:
        again = f" [same state as {v.same_as}]" if v.same_as else ""
        lines.append(
            f"  FAIL {scenario} kill {v.mode} {v.n} ({shown(v.call)[:40]}) -> {v.path}: "
            f"{v.problem}{again}"
        )
    return "\n".join(lines)


SCENARIOS = [
    "restore-plain",
    "restore-ignore",
    "restore-ita",
    "restore-head",
    "undo-plain",
    "undo-ignore",
    "continue-plain",
    "continue-ignore",
    "continue-ita",
]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_kill_point_recovers(checkpoint: Runner, scenario: str, tmp_path: Path) -> None:
    cost: dict[str, float] = {}
    prep, verdicts = kill_points(checkpoint, scenario, tmp_path, cost)
    report = os.environ.get("FI_REPORT")
    if report:
        with open(report, "a") as fh:
            for v in verdicts:
                fh.write(json.dumps({**v.__dict__, "ok": v.ok}) + "\n")
    text = summary(scenario, prep, verdicts, cost)
    print(text)
    assert all(v.ok for v in verdicts), text


# --- single kill points, checked on their own -----------------------------------------


def _killed(checkpoint: Runner, prep: Prepared, where: Path, n: int, mode: str) -> Path:
    killed = copy(prep.template, where)
    run = checkpoint(killed, *prep.op, kill_at=n, mode=mode)
    assert run.code == -9, f"not killed at {mode} {n}: {run.line()}"
    return killed


def test_continue_after_the_writes_leaves_no_stale_intent_to_add(
    checkpoint: Runner, tmp_path: Path
) -> None:
    """Killed after the files are written and before the index is set, `--continue` must
    leave the target's index: no intent-to-add entry whose file is gone (` D new.txt`)."""
    prep = prepare(checkpoint, "restore-ita", tmp_path)
    writes = _after_the_writes(checkpoint, prep.template, prep.op, prep.calls, prep.after)
    points = [(writes - 1, "after")] + [(n, "before") for n in range(writes, len(prep.calls))]
    wrong = []
    for n, mode in points:
        killed = _killed(checkpoint, prep, tmp_path / f"killed-{mode}-{n}", n, mode)
        run = checkpoint(killed, *CONTINUE, kill_at=None)
        status = look(killed).status
        if run.code != 0 or status != prep.after.status:
            wrong.append(
                f"kill {mode} {n} ({prep.calls[n - 1][:30]}): {run.line()}; "
                f"status {status.splitlines()} want {prep.after.status.splitlines()}"
            )
    assert not wrong, "\n".join(wrong)


def test_undo_after_a_ref_moved_before_the_journal(checkpoint: Runner, tmp_path: Path) -> None:
    """Killed right after any ref update (the sweep moves the safety ref to a commit that
    also keeps the un-ignored residue, then rewrites the journal), `undo` goes back."""
    prep = prepare(checkpoint, "restore-ignore", tmp_path)
    moves = [n for n, c in enumerate(prep.calls, 1) if c.startswith("update-ref")]
    assert moves, "the restore moves no ref at all?"
    wrong = []
    for n in moves:
        killed = _killed(checkpoint, prep, tmp_path / f"killed-{n}", n, "after")
        run = checkpoint(killed, "undo", kill_at=None)
        got = look(killed)
        if run.code != 0 or got != prep.before:
            wrong.append(
                f"kill after {n} ({prep.calls[n - 1][:50]}): undo {run.line()}; "
                f"{differences(got, prep.before)}"
            )
    assert not wrong, "\n".join(wrong)


def test_drop_keeps_the_way_back_of_a_pending_restore(checkpoint: Runner, tmp_path: Path) -> None:
    """`drop` refuses the safety checkpoint an interrupted restore's journal needs (the
    first kill point with both the journal and the safety checkpoint's ref)."""
    prep = prepare(checkpoint, "restore-plain", tmp_path)
    for n in range(1, len(prep.calls) + 1):  # the first kill point with a journal
        killed = _killed(checkpoint, prep, tmp_path / f"killed-{n}", n, "before")
        pending = json.loads((killed / JOURNAL).read_text()) if (killed / JOURNAL).exists() else {}
        if f"refs/checkpoints/{pending.get('safety_name')}" in refs(killed):
            break
        shutil.rmtree(killed)
    else:
        pytest.fail("no kill point leaves a journal and its safety checkpoint")
    journal = json.loads((killed / JOURNAL).read_text())
    ref = f"refs/checkpoints/{journal['safety_name']}"
    for name in (journal["safety_name"], ref, journal["safety"]):
        dropped = checkpoint(killed, "drop", name, kill_at=None)
        assert dropped.code != 0, f"drop {name} with a restore pending: {dropped.line()}"
        assert refs(killed).get(ref) == journal["safety"], f"drop {name}: {dropped.line()}"
    undone = checkpoint(killed, "undo", kill_at=None)
    assert undone.code == 0, undone.line()
    assert look(killed) == prep.before, differences(look(killed), prep.before)
