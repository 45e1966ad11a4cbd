"""`git checkpoint init`: write a commented `.checkpoint.yaml` at the work-tree root, then
install the hooks, or say the command that does.

An existing `.checkpoint.yaml` is never overwritten: init refuses (exit 3); `--force`
replaces it after keeping a copy in `.git/checkpoint/init/` (named in the output and in
the operation log). The file is staged next to its place first, so a folder that cannot
be written fails before any question is asked.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..config import starter as starter_config
from ..config.model import CONFIG_NAME
from ..config.parse import parse_config_text
from ..core.errors import CheckpointError, Refused
from ..core.records import now
from ..gitcore.repo import Repo
from ..install.manage import HookChange
from ..install.manage import run as run_hooks
from ..storage.oplog import log_event


@dataclass(frozen=True)
class InitResult:
    path: str
    verifier: str | None  # the test command written as the verifier, if one was plain
    found_in: str | None  # the file that made it plain
    also_found: list[str]  # other test commands, written commented out
    old_copy: str | None  # where --force kept the file it replaced
    hooks: str  # installed | declined | not asked | failed
    hooks_command: str
    hooks_changes: list[HookChange] = field(default_factory=list)
    hooks_error: str | None = None
    exit_code: int = 0

    def lines(self) -> list[str]:
        out = [f"wrote {self.path}"]
        if self.old_copy:
            out.append(f"  the old one is kept in {self.old_copy} (copy it back to undo)")
        if self.verifier:
            out.append(f"  verifier: {self.verifier} (from {self.found_in})")
        else:
            out.append("  verifier: none found; add your test command under verifiers:")
        if self.also_found:
            out.append(f"  also found, commented out: {', '.join(self.also_found)}")
        out += [f"{c.family:<12} {c.outcome:<18} {c.path}" for c in self.hooks_changes]
        if self.hooks in ("declined", "not asked"):
            out.append(f"hooks: not installed; to install them: {self.hooks_command}")
        out.append(f"next: git add {CONFIG_NAME} && git commit")
        return out

    def warnings(self) -> list[str]:
        return [f"hooks not installed: {self.hooks_error}"] if self.hooks_error else []


def run(
    *,
    force: bool,
    install_hooks: bool | None,
    agents: tuple[str, ...],
    ask: Callable[[str], bool] | None,
) -> InitResult:
    """`install_hooks`: the answer given on the command line (None: none); `ask`: how
    to ask on a terminal (None: off a terminal, never ask)."""
    repo = Repo.discover()
    target = repo.root / CONFIG_NAME
    replacing = _check_target(target, force)
    found = starter_config.find_test_commands(repo.root)
    agents = agents or starter_config.agents_in_use(repo.root)
    command = starter_config.hooks_command(agents)
    text = starter_config.render(found)
    parse_config_text(text, target)  # never write what the loader would refuse
    with _staged(repo.root, text) as staged:
        if install_hooks is None and ask is not None:
            install_hooks = ask(command)
        hooks = {True: "installed", False: "declined", None: "not asked"}[install_hooks]
        old_copy = _keep_copy(repo, target) if replacing else None
        _put(staged, target, replacing)
    log_event(repo, "init", path=str(target), old_copy=str(old_copy) if old_copy else None)
    result = InitResult(
        path=str(target),
        verifier=found[0].command if found else None,
        found_in=found[0].found_in if found else None,
        also_found=[f.command for f in found[1:]],
        old_copy=str(old_copy) if old_copy else None,
        hooks=hooks,
        hooks_command=command,
    )
    if not install_hooks:
        return result
    try:
        done = run_hooks("install", agents=agents, git=True, shell=False, local=False, user=False)
    except CheckpointError as exc:  # the file is written: say so, and why no hooks
        return replace(result, hooks="failed", hooks_error=str(exc), exit_code=exc.exit_code)
    except OSError as exc:  # a hooks folder or settings file we cannot write
        where = f"{exc.filename}: " if exc.filename else ""
        return replace(result, hooks="failed", hooks_error=f"{where}{exc.strerror}", exit_code=4)
    return replace(result, hooks_changes=done.changes)


def _check_target(target: Path, force: bool) -> bool:
    """Whether a file is there to replace; refuse (exit 3) unless `force` and a file."""
    try:
        st = os.lstat(target)
    except FileNotFoundError:
        return False
    if not force:
        raise Refused(
            f"{target} exists already; init never overwrites it "
            "(--force replaces it, keeping a copy in .git/checkpoint/init/)"
        )
    if not stat.S_ISREG(st.st_mode):
        raise Refused(f"{target} is not a regular file; move it away yourself, then init")
    return True


@contextlib.contextmanager
def _staged(root: Path, text: str) -> Iterator[Path]:
    """The new file, written beside its place (removed again unless put in place)."""
    try:
        fd, name = tempfile.mkstemp(prefix=f"{CONFIG_NAME}.", suffix=".tmp", dir=root)
    except OSError as exc:  # name the file we were asked for, not our temporary one
        raise OSError(exc.errno, exc.strerror, str(root / CONFIG_NAME)) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(name, 0o666 & ~umask)  # as a new file would be, not mkstemp's 0600
        yield Path(name)
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name)


def _put(staged: Path, target: Path, replacing: bool) -> None:
    if replacing:
        os.replace(staged, target)
        return
    try:
        os.link(staged, target)  # fails rather than overwrites a file made meanwhile
    except FileExistsError:
        raise Refused(f"{target} appeared meanwhile; init never overwrites it") from None
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EXDEV):
            raise
        with open(target, "x", encoding="utf-8") as out:  # no hard links on this file system
            out.write(staged.read_text(encoding="utf-8"))


def _keep_copy(repo: Repo, target: Path) -> Path:
    folder = repo.state_dir() / "init"
    folder.mkdir(exist_ok=True)
    stamp = now().strftime("%Y%m%dT%H%M%SZ")
    copy = folder / f"checkpoint.yaml.{stamp}"
    n = 1
    while copy.exists():
        n += 1
        copy = folder / f"checkpoint.yaml.{stamp}-{n}"
    with open(copy, "xb") as out:
        out.write(target.read_bytes())
    return copy
