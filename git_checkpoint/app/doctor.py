"""`git checkpoint doctor`: check the setup, then a real save -> mutate -> restore ->
compare -> undo round trip in a temporary linked worktree (removed afterwards, always).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..config.model import Config
from ..core.errors import CheckpointError
from ..doctor import checks as doctor
from ..doctor.checks import Check
from ..fast.hook import GUARD as HOOK_GUARD
from ..gitcore.repo import Repo, run_git
from ..storage.refs import REF_ROOT
from .context import Context


@dataclass(frozen=True)
class DoctorResult:
    checks: list[Check]
    exit_code: int = field(default=0)

    def lines(self) -> list[str]:
        out = [c.line() for c in self.checks]
        failed = sum(c.status == "fail" for c in self.checks)
        out.append(f"{failed} problem{'s' if failed != 1 else ''} found" if failed else "all good")
        return out


def check_hooks() -> Check:
    """What `hooks status` reports, folded into one line."""
    try:
        from . import hooks
    except ImportError:
        return Check("hooks", "note", "not installed", "git checkpoint hooks install --git")
    try:
        status = hooks.run("status", agents=(), git=False, shell=False, local=False, user=False)
    except CheckpointError as exc:
        return Check("hooks", "fail", str(exc), "git checkpoint hooks status")
    states = [
        (a.agent if a.scope == "project" else f"{a.agent} ({a.scope})", a.state)
        for a in status.agents
    ] + [(g.hook, g.state) for g in status.git]
    outdated = [name for name, state in states if state in ("outdated", "unreadable settings")]
    installed = [name for name, state in states if state == "installed"]
    if outdated:
        return Check(
            "hooks",
            "fail",
            f"outdated or unreadable: {', '.join(outdated)}",
            "git checkpoint hooks install (with the same --agent/--git/--local/--user flags) "
            "to update them",
        )
    shared = [a for a in status.agents if a.ignored is False]
    if shared:
        return Check(
            "hooks",
            "fail",
            f"{shared[0].path} is not ignored by git: checkpoints capture it, a restore "
            "can remove it",
            f"git checkpoint hooks install --agent {shared[0].agent} --local "
            "(adds it to .git/info/exclude)",
        )
    if not installed:
        return Check(
            "hooks",
            "note",
            "not installed",
            "git checkpoint hooks install --git, and --agent NAME for your agent",
        )
    return Check("hooks", "ok", f"installed and current: {', '.join(installed)}")


@dataclass(frozen=True)
class _ProbeContext(Context):
    """The probe's own task, whatever branch the temporary worktree is on."""

    probe_task: str = "doctor-probe"

    def task(self, explicit: str | None = None) -> str:
        return explicit or self.probe_task


@contextlib.contextmanager
def _temporary_worktree(repo: Repo) -> Iterator[Path]:
    parent = Path(tempfile.mkdtemp(prefix="checkpoint-doctor-"))
    path = parent / "worktree"
    try:
        repo.git("worktree", "add", "--detach", str(path), "HEAD")
        yield path
    finally:
        with contextlib.suppress(CheckpointError):
            repo.git("worktree", "remove", "--force", str(path))
        shutil.rmtree(parent, ignore_errors=True)
        with contextlib.suppress(CheckpointError):
            repo.git("worktree", "prune")


def _files(root: Path) -> dict[str, bytes]:
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git"]
        for name in filenames:
            full = Path(dirpath) / name
            if not full.is_symlink():
                out[str(full.relative_to(root))] = full.read_bytes()
    return out


def round_trip(repo: Repo, config: Config) -> Check:
    from . import restore, save, undo

    head, _ = repo.head()
    if head is None:
        return Check("round trip", "note", "skipped: no commit yet", "commit once, then rerun")
    task = f"doctor-probe-{os.getpid()}"
    started = time.monotonic()
    step = "creating the temporary worktree"
    hooks_were = os.environ.get(HOOK_GUARD)
    os.environ[HOOK_GUARD] = "1"  # our own git hooks must not auto-save the probe's steps
    try:
        with _temporary_worktree(repo) as path:
            wt = Repo.discover(path, user_env=False)
            ctx = _ProbeContext(repo=wt, config=config, probe_task=task)
            (path / "doctor-probe.txt").write_text("saved by git checkpoint doctor\n")
            step = "save"
            save.run(ctx, task=None, message="doctor", hypothesis=None, next_move=None, auto=False)
            saved = _files(path)
            index = wt.git("ls-files", "-s")
            step = "mutate"
            tracked = [p for p in wt.git_lines("ls-files", "-z") if (path / p).is_file()]
            if tracked:
                (path / tracked[0]).write_bytes(b"changed by git checkpoint doctor\n")
            (path / "doctor-probe.txt").unlink()
            (path / "doctor-residue.txt").write_text("should be removed by the restore\n")
            mutated = _files(path)
            step = "restore"
            restore.run(ctx, "@", dry_run=False, move_head=False, keep_head=False, resume=False)
            step = "compare"
            if _files(path) != saved or wt.git("ls-files", "-s") != index:
                raise AssertionError("the restored workspace differs from the checkpoint")
            step = "undo"
            undo.run(ctx)
            if _files(path) != mutated:
                raise AssertionError("undo did not bring the mutated workspace back")
    except (CheckpointError, AssertionError, OSError) as exc:
        return Check(
            "round trip",
            "fail",
            f"failed at {step}: {exc}",
            "rerun with GIT_CHECKPOINT_DEBUG=1 and report the output",
        )
    finally:
        if hooks_were is None:
            del os.environ[HOOK_GUARD]
        _forget(repo, task)
    elapsed = time.monotonic() - started
    return Check(
        "round trip",
        "ok",
        f"save, mutate, restore, compare, undo in a temporary worktree ({elapsed:.1f}s)",
    )


def _forget(repo: Repo, task: str) -> None:
    """Remove the probe's refs and task record: the doctor leaves nothing behind."""
    refs = run_git(
        ["for-each-ref", "--format=%(refname)", f"{REF_ROOT}{task}/"], repo.root, check=False
    )
    for ref in refs.stdout.decode().split():
        run_git(["update-ref", "-d", ref], repo.root, check=False)
    for leftover in (repo.state_dir() / "tasks" / f"{task}.yaml",):
        leftover.unlink(missing_ok=True)


def run() -> DoctorResult:
    repo = Repo.discover()
    checks = [doctor.check_git(repo), doctor.check_pygit2()]
    config_check, config = doctor.check_config(repo)
    checks += [config_check, check_hooks(), doctor.check_sharing(repo)]
    checks += doctor.check_leftovers(repo)
    checks.append(round_trip(repo, config or Config()))
    failed = any(c.status == "fail" for c in checks)
    return DoctorResult(checks, 1 if failed else 0)
