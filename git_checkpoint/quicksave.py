"""The auto-save the hooks call: save only when the workspace changed since the task's
latest checkpoint, and find that out fast.

The last save left its temporary index and what it depended on (`quickstate.py`). If
HEAD, the real index, the configuration and the task's refs are as they were, one
`git status --porcelain=v2` against that index (read-only) tells whether any tracked
file, any untracked file or any overlay file changed: nothing changed means no save, and
no import of click, YAML or pygit2. Anything unexpected goes to the full save, which
deduplicates against the latest checkpoint by content.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import quickstate
from .gitio import CONFIG_PATTERN, Repo, spawn_git
from .scan import Scan, finish, finish_scan, include_argv, start_scan

# Any of these in our environment means git resolves the repository differently from a
# walk up the folders: leave it to `Repo.discover`.
_DISCOVERY_ENV = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
)
CONFIG_ARGV = ["config", "-z", "--get-regexp", CONFIG_PATTERN]


def auto_save(cwd: str, message: str) -> str | None:
    """Save the workspace of `cwd` as an automatic checkpoint of the current task.

    Returns the new checkpoint's name, or None when nothing changed since the task's
    latest checkpoint. Raises CheckpointError on problems.
    """
    found = check(cwd)
    if found is not None and found.unchanged:
        return None
    return full_save(cwd, message, found)


@dataclass(frozen=True)
class Found:
    """The quick check's answer: unchanged, or what changed since the last save (a scan
    against its kept index, which the save can build on instead of scanning again)."""

    unchanged: bool
    repo: Repo
    saved: dict[str, Any]
    before: quickstate.Before
    scan: Scan
    include_seen: list[str]


def full_save(cwd: str, message: str, found: Found | None = None) -> str | None:
    from . import state
    from .context import load_context
    from .store import save_checkpoint

    ctx = load_context(cwd)
    repo = ctx.repo
    task = ctx.task()
    with state.locked(repo, ctx.config.lock_timeout):
        snapshot = None
        if found is not None and found.saved["task"] == task:
            from .quickbuild import build_on

            snapshot = build_on(repo, ctx.config, found)
        outcome = save_checkpoint(
            repo, ctx.config, task, message=message, auto=True, dedupe=True, snapshot=snapshot
        )
        if not outcome.created:
            return None
        cp = outcome.checkpoint
        state.log_event(repo, "save", task=task, checkpoint=cp.id, commit=cp.commit, auto=True)
    return cp.id


# --- the quick answer ---------------------------------------------------------------------


def find_repo(cwd: str) -> Repo | None:
    """The repository of `cwd` by walking up to `.git`, as git would with no GIT_* set;
    None when unsure (the full path then asks git)."""
    if any(name in os.environ for name in _DISCOVERY_ENV):
        return None
    here = Path(os.path.realpath(cwd))
    for top in (here, *here.parents):
        dot = top / ".git"
        if dot.is_dir():
            git_dir = dot
        elif dot.is_file():
            try:
                line = dot.read_text("utf-8").splitlines()[0]
            except (OSError, ValueError, IndexError):
                return None
            if not line.startswith("gitdir: "):
                return None
            git_dir = Path(os.path.realpath(top / line[len("gitdir: ") :].strip()))
        else:
            continue
        common = git_dir
        try:
            text = (git_dir / "commondir").read_text("utf-8").strip()
            common = Path(os.path.realpath(git_dir / text))
        except FileNotFoundError:
            pass
        except (OSError, ValueError):
            return None
        return Repo(root=top, git_dir=git_dir, common_dir=common)
    return None


def quick_unchanged(cwd: str) -> bool:
    """True only when the workspace certainly equals the task's latest checkpoint."""
    found = check(cwd)
    return found is not None and found.unchanged


def check(cwd: str) -> Found | None:
    """One read-only scan against the last save's index; None when that save's state does
    not hold any more (HEAD, the index, the configuration or the task's refs moved)."""
    repo = find_repo(cwd)
    if repo is None:
        return None
    saved = quickstate.load(repo)
    if saved is None:
        return None
    before = quickstate.before_scan(repo, recording=False)
    if not _same_before_scan(repo, saved, before):
        return None
    index = quickstate.folder(repo) / str(saved["saved_index"])
    if quickstate.index_tail(index) != saved["saved_index_tail"]:
        return None
    status = start_scan(repo, index, read_only=True)
    config = spawn_git(CONFIG_ARGV, repo.root)
    others = _start_include_listing(repo, saved)
    scan: Scan = finish_scan(status)
    config_out = config.communicate()[0]
    seen = _nul_split(finish(others[0], others[1])) if others is not None else []
    if config.returncode not in (0, 1) or _pairs(config_out) != [tuple(p) for p in saved["config"]]:
        return None
    if scan.unmerged or set(scan.untracked) & set(saved["deleted"]):
        return None  # a path the real index tracks is back: the kept index cannot tell
    overlay = saved["overlay"]
    current = quickstate.overlay_stats(repo.root, overlay)
    unchanged = (
        not scan.changed
        and list(scan.untracked) == saved["untracked"]
        and seen == saved["include_others"]
        and current == overlay
        and quickstate.stats_trusted(current, int(saved["stamp_ns"]))
    )
    return Found(unchanged, repo, saved, before, scan, seen)


def _same_before_scan(repo: Repo, saved: dict[str, Any], now: quickstate.Before) -> bool:
    paths = [os.path.realpath(p) for p in (repo.root, repo.git_dir, repo.common_dir)]
    if saved.get("paths") != paths:
        return False
    if saved.get("env_task") != os.environ.get("CHECKPOINT_TASK"):
        return False
    if now.journal or now.head_text != saved["head_text"] or now.index != saved["index"]:
        return False
    if now.config_file != saved["config_file"]:
        return False
    head = _head_commit(repo, now.head_text)
    if head is None or head != saved["trees"].get("base"):
        return False
    if quickstate.refs_seen(repo, saved["task"]) != saved["refs"]:
        return False
    ref_name = str(saved["ref"]).rsplit("/", 1)[-1]
    return bool(saved["refs"]["loose"].get(ref_name) == saved["commit"])


def _head_commit(repo: Repo, head_text: str) -> str | None:
    """HEAD's commit from files alone; None when that takes git (then: not quick)."""
    text = head_text.strip()
    if text.startswith("ref: refs/heads/"):
        return repo.read_ref_file(text[5:])
    return text if len(text) in (40, 64) else None


def _start_include_listing(repo: Repo, saved: dict[str, Any]) -> tuple[Any, list[str]] | None:
    """The same `ls-files -o` of the includes that the save ran (against the real index,
    unchanged since), started in the background."""
    argv = include_argv(repo.root, saved["exclude_args"], saved["includes"])
    if argv is None:
        return None
    return spawn_git(argv, repo.root, env={"GIT_LITERAL_PATHSPECS": "1"}), argv


def _nul_split(out: bytes) -> list[str]:
    return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]


def _pairs(out: bytes) -> list[tuple[str, str]]:
    pairs = []
    for item in out.decode("utf-8", "replace").split("\0"):
        if item:
            key, _, value = item.partition("\n")
            pairs.append((key, value))
    return pairs
