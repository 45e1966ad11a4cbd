"""The checks of `git checkpoint doctor`: each says ok, a note, or what is wrong and the
command that fixes it. The save/restore round trip is roundtrip.py's.
"""

from __future__ import annotations

import dataclasses
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

from ..config.model import Config
from ..config.parse import load_config
from ..core.errors import CheckpointError
from ..core.lock import holder
from ..core.text import counted
from ..gitcore.repo import REFS_ELSEWHERE, Repo
from ..gitcore.spawn import SCRATCH_PREFIX
from ..install import git_hooks, installer, manage
from ..share.remotes import leftover_folders, leftover_refs
from ..storage.journal import read_journal

# rev-parse --path-format=absolute (2.31) is the newest feature every command needs;
# fetch --no-write-fetch-head is 2.29, the reference-transaction hook 2.28.
MIN_GIT = (2, 31)
GIT_FEATURES = "rev-parse --path-format, --pathspec-file-nul, fetch --no-write-fetch-head"
MIN_PYGIT2 = (1, 15)
SCRATCH_AGE = 3600  # seconds: a scratch index folder older than this was left by a killed run


@dataclass(frozen=True)
class Check:
    name: str
    status: str  # ok | note | fail
    detail: str
    fix: str | None = None

    def line(self) -> str:
        mark = {"ok": "ok  ", "note": "note", "fail": "FAIL"}[self.status]
        out = f"{mark}  {self.name}: {self.detail}"
        return out + (f"\n      fix: {self.fix}" if self.fix else "")


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", text)[:3])


def check_git(repo: Repo) -> Check:
    proc = repo.run(["--version"], check=False)
    text = proc.stdout.decode(errors="replace").strip()
    found = _version(text)
    if proc.returncode != 0 or not found:
        return Check("git", "fail", "cannot run git --version", "install git 2.31 or newer")
    shown = ".".join(map(str, found))
    if found[:2] < MIN_GIT:
        return Check(
            "git",
            "fail",
            f"{shown} is too old (needs {GIT_FEATURES}: 2.31 or newer)",
            "upgrade git to 2.31 or newer",
        )
    probe = repo.run(["rev-parse", "--path-format=absolute", "--git-common-dir"], check=False)
    if probe.returncode != 0:
        return Check("git", "fail", f"{shown}: rev-parse --path-format failed", "upgrade git")
    if not repo.sha1():
        return Check(
            "git",
            "fail",
            f"{shown}; this repository names its objects with SHA-256, not supported yet",
            "use git-checkpoint in a SHA-1 repository",
        )
    return Check("git", "ok", f"{shown} (uses {GIT_FEATURES})")


def check_pygit2() -> Check:
    try:
        import pygit2
    except ImportError as exc:
        return Check("pygit2", "fail", f"cannot import: {exc}", installer.reinstall_hint())
    version = str(getattr(pygit2, "__version__", "?"))
    libgit2 = str(getattr(pygit2, "LIBGIT2_VERSION", "?"))
    if _version(version)[:2] < MIN_PYGIT2:
        return Check(
            "pygit2", "fail", f"{version} is too old (needs 1.15)", installer.reinstall_hint()
        )
    return Check("pygit2", "ok", f"{version}, libgit2 {libgit2}")


def check_config(repo: Repo) -> tuple[Check, Config | None]:
    try:
        config = load_config(repo.root, repo.checkpoint_config())
    except CheckpointError as exc:
        return Check("config", "fail", str(exc), "correct the file or key it names"), None
    where = ".checkpoint.yaml" if config.source else "no .checkpoint.yaml (defaults)"
    if not config.verifiers:
        return (
            Check(
                "config",
                "note",
                f"{where}: valid, but no verifiers",
                "add a verifiers: list to .checkpoint.yaml (verify and run need one)",
            ),
            config,
        )
    names = ", ".join(v.name for v in config.verifiers)
    return Check("config", "ok", f"{where}: valid; verifiers: {names}"), config


def check_sharing(repo: Repo) -> Check:
    """Fetch refspecs that write into our refs would overwrite local checkpoints or notes;
    `git checkpoint push/fetch` bring their own refspecs and need none configured.
    """
    proc = repo.run(["config", "-z", "--get-regexp", r"^remote\..*\.fetch$"], check=False)
    bad = []
    remotes = set()
    for item in proc.stdout.decode("utf-8", "replace").split("\0"):
        if not item:
            continue
        key, _, spec = item.partition("\n")
        remote = key[len("remote.") : -len(".fetch")]
        remotes.add(remote)
        destination = spec.lstrip("+").partition(":")[2]
        ours = destination.startswith("refs/checkpoints/") and not destination.startswith(
            f"refs/checkpoints/remotes/{remote}/"
        )
        if ours or destination.startswith("refs/notes/checkpoints"):
            bad.append((key, spec))
    if bad:
        key, spec = bad[0]
        return Check(
            "sharing",
            "fail",
            f"{key} = {spec} would overwrite local checkpoints or their notes on fetch",
            f"git config --unset {key} '{re.escape(spec)}'; then use git checkpoint fetch",
        )
    if not remotes:
        return Check(
            "sharing", "note", "no remotes", "to share: git remote add origin URL, then push"
        )
    return Check(
        "sharing",
        "ok",
        f"remotes {', '.join(sorted(remotes))}; git checkpoint push/fetch use their own refspecs",
    )


def _worktree_git_dirs(repo: Repo) -> list[Path]:
    found = [repo.common_dir]
    folder = repo.common_dir / "worktrees"
    if folder.is_dir():
        found += sorted(p for p in folder.iterdir() if p.is_dir())
    return found


def _lock_holder(repo: Repo) -> str | None:
    found = holder(str(repo.common_dir / "checkpoint" / "lock"))
    return None if found is None else found or "?"


def check_leftovers(repo: Repo) -> list[Check]:
    out = []
    for git_dir in _worktree_git_dirs(repo):
        if not (git_dir / "checkpoint" / "restore-journal.json").exists():
            continue
        try:
            journal = read_journal(dataclasses.replace(repo, git_dir=git_dir))
        except CheckpointError as exc:
            out.append(Check("restore", "fail", str(exc), "git checkpoint undo (in that worktree)"))
            continue
        if journal is not None:
            out.append(
                Check(
                    "restore",
                    "fail",
                    f"a restore of {journal.target_name} was interrupted ({git_dir.name})",
                    "git checkpoint restore --continue, or git checkpoint undo",
                )
            )
    holder = _lock_holder(repo)
    if holder is not None:
        out.append(Check("lock", "note", f"held by a running git-checkpoint (pid {holder})"))
    else:
        # Read-only commands use scratch indexes without the lock: only old ones are left.
        cutoff = time.time() - SCRATCH_AGE
        scratch = [
            str(p)
            for git_dir in _worktree_git_dirs(repo)
            for p in sorted(git_dir.glob(f"{SCRATCH_PREFIX}*"))
            if p.is_dir() and p.stat().st_mtime < cutoff and not p.name.startswith(REFS_ELSEWHERE)
        ]
        if scratch:
            out.append(
                Check(
                    "lock",
                    "fail",
                    f"scratch folders left by a killed run: {', '.join(scratch[:3])}",
                    f"rm -rf {' '.join(scratch)}",
                )
            )
    stale = [
        line[len("worktree ") :]
        for line in repo.run(["worktree", "list", "--porcelain"], check=False)
        .stdout.decode("utf-8", "replace")
        .splitlines()
        if line.startswith("worktree ") and "checkpoint-" in line and not os.path.isdir(line[9:])
    ]
    if stale:
        out.append(
            Check(
                "worktrees",
                "fail",
                f"temporary worktrees left: {', '.join(stale)}",
                "git worktree prune",
            )
        )
    temporary = leftover_refs(repo)
    if temporary:
        out.append(
            Check(
                "refs",
                "fail",
                f"{counted(len(temporary), 'temporary ref')} of a killed push or fetch: "
                f"{', '.join(temporary[:3])}",
                "the next git checkpoint push or fetch removes them (or: git update-ref -d REF)",
            )
        )
    folders = [str(p) for p in leftover_folders(repo)]
    if folders:
        out.append(
            Check(
                "refs",
                "fail",
                f"the scratch repository of a killed push: {', '.join(folders[:3])}",
                f"the next git checkpoint push removes it (or: rm -rf {' '.join(folders)})",
            )
        )
    if not out:
        out.append(Check("leftovers", "ok", "no interrupted restore, lock free, nothing left over"))
    return out


def check_install() -> Check:
    """The installation is whole, whichever installer made it: the hook templates are
    there (package data), and `man` finds the page `git checkpoint --help` opens."""
    import shutil
    import subprocess

    found = installer.detect()
    try:
        templates = git_hooks.templates_dir()
    except CheckpointError as exc:
        return Check("install", "fail", str(exc).partition(": this")[0], installer.reinstall_hint())
    where = f"{found.kind} in {found.prefix}; hook templates in {templates}"
    man = shutil.which("man")
    if man is None:
        return Check("install", "ok", f"{where} (no man command to look for the manual with)")
    try:
        proc = subprocess.run([man, "-w", "git-checkpoint"], capture_output=True, timeout=30)
        page = proc.stdout.decode(errors="replace").strip() if proc.returncode == 0 else ""
    except (OSError, subprocess.TimeoutExpired):
        page = ""
    if page:
        return Check("install", "ok", f"{where}; manual {page}")
    shipped = found.prefix / "share" / "man"
    fix = (
        f'export MANPATH="{shipped}:$MANPATH" in your shell\'s rc file'
        if (shipped / "man1" / "git-checkpoint.1").is_file()
        else installer.reinstall_hint()
    )
    return Check("install", "note", f"{where}; git help checkpoint finds no manual page", fix)


def check_hooks() -> Check:
    """What `hooks status` reports, folded into one line."""
    try:
        status = manage.run("status", agents=(), git=False, shell=False, local=False, user=False)
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
    if installed and status.entry_missing:
        problem, _, fix = status.entry_missing.partition("; ")
        return Check("hooks", "fail", problem, fix)
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
