"""The auto-save the hooks call: save only when the workspace changed since the task's
latest checkpoint, and find that out fast.

The last save left its temporary index and what it depended on (`quickstate.py`). If
HEAD, the real index, the configuration and the task's refs are as they were, one
`git status --porcelain=v2` against that index (read-only) tells whether any tracked
file, any untracked file or any overlay file changed: nothing changed means no save.
When something did, the save builds on that scan (`quickbuild.py`) instead of scanning
again. Anything unexpected goes to the full save, which deduplicates by content.

This module runs on every agent tool call: it imports os, json and two small modules of
ours (no subprocess, typing, pathlib or dataclasses); the save path is imported only when
a save is due.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found,unused-ignore]  # signal imports enum: 3 ms
import os

from ..gitcore.spawn import CONFIG_ARGV, STATUS_ARGV, Spawned, parse_config, parse_status
from . import quickstate

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

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


def auto_save(cwd: str, message: str, lock_wait: float | None = None) -> str | None:
    """Save the workspace of `cwd` as an automatic checkpoint of the current task.

    Returns the new checkpoint's name, or None when nothing changed since the task's
    latest checkpoint. Raises CheckpointError on problems. `lock_wait`: wait at most
    this long for another git-checkpoint's lock (less than checkpoint.lockTimeout).
    """
    found = check(cwd, prepare=True)
    if found is not None and found.unchanged:
        return None  # (the hook exits at once: the imports started for a save go with it)
    _prepared()
    return full_save(cwd, message, found, lock_wait)


# The save path's modules, imported on a thread of their own while the quick check's git
# children scan (its main thread only waits for them): a changed workspace then saves
# without 40 ms of imports after the scan.
SAVE_MODULES = ("storage.oplog", "app.context", "storage.refs", "save.quickbuild")
_PREPARING: list[Any] = []  # the locks their threads hold until done


def import_beside(*modules: str) -> None:
    """Import `modules` on a thread of their own, while this one waits on git; a failure
    is left to the caller's own import, which says what failed. _thread: `threading`
    costs every hook call 1 ms."""
    import _thread

    done = _thread.allocate_lock()
    done.acquire()

    def load() -> None:
        try:
            for name in modules:
                __import__(name)
        except BaseException:
            pass
        finally:
            done.release()

    _PREPARING.append(done)
    _thread.start_new_thread(load, ())


def _prepared() -> None:
    """Wait for the imports import_beside started, so that no two threads import at once."""
    while _PREPARING:
        lock = _PREPARING.pop()
        lock.acquire()
        lock.release()


class Paths:
    """A work tree's locations, found without git (quickstate.RepoPaths)."""

    def __init__(self, root: str, git_dir: str, common_dir: str) -> None:
        self.root = root
        self.git_dir = git_dir
        self.common_dir = common_dir


class Found:
    """The quick check's answer: unchanged, or what changed since the last save (a scan
    against its kept index, which the save can build on instead of scanning again)."""

    def __init__(
        self,
        unchanged: bool,
        saved: dict[str, Any],
        before: quickstate.Before,
        scan: tuple[list[str], list[str], list[str], bool, dict[str, str]],
        include_seen: list[str],
        changed_stats: dict[str, list[int] | None],
        paths: Paths,
        config: list[tuple[str, str]],
    ) -> None:
        self.unchanged = unchanged
        self.saved = saved
        self.before = before
        self.changed, self.deleted, self.untracked, self.unmerged, self.modes = scan
        self.include_seen = include_seen
        self.changed_stats = changed_stats  # taken before anything hashes those files
        self.paths = paths  # the repository, found without git
        self.config = config  # our git config pairs, as the check read them


def full_save(
    cwd: str, message: str, found: Found | None = None, lock_wait: float | None = None
) -> str | None:
    from ..app.context import load_context
    from ..storage import oplog as state
    from ..storage.refs import save_checkpoint

    known = None
    if found is not None:  # the check found the repository and read our config already
        from pathlib import Path

        from ..gitcore.repo import Repo

        where = found.paths
        known = Repo(Path(where.root), Path(where.git_dir), Path(where.common_dir))
        known.remember_config(found.config)
    ctx = load_context(cwd, repo=known)
    repo = ctx.repo
    task = ctx.task()
    wait = ctx.config.lock_timeout if lock_wait is None else min(lock_wait, ctx.config.lock_timeout)
    with state.locked(repo, wait):
        snapshot = None
        if found is not None and found.saved["task"] == task:
            from ..save.quickbuild import build_on

            snapshot = build_on(repo, ctx.config, found)
        outcome = save_checkpoint(
            repo, ctx.config, task, message=message, auto=True, dedupe=True, snapshot=snapshot
        )
        if not outcome.created:
            return None
        cp = outcome.checkpoint
        state.log_event(repo, "save", task=task, checkpoint=cp.id, commit=cp.commit, auto=True)
        if ctx.config.retention.auto:
            from ..storage.retention import auto_prune

            auto_prune(repo, ctx.config.retention, task)  # a problem waits for the next prune
    return cp.id


# --- the quick answer ---------------------------------------------------------------------


def find_repo(cwd: str) -> Paths | None:
    """The repository of `cwd` by walking up to `.git`, as git would with no GIT_* set;
    None when unsure (the full path then asks git)."""
    if any(name in os.environ for name in _DISCOVERY_ENV):
        return None
    top = os.path.realpath(cwd)
    while True:
        dot = os.path.join(top, ".git")
        if os.path.isdir(dot):
            git_dir = os.path.realpath(dot)  # a linked .git: its real path, as git gives
            break
        if os.path.isfile(dot):
            try:
                with open(dot, encoding="utf-8") as fh:
                    line = fh.readline().strip()
            except (OSError, ValueError):
                return None
            if not line.startswith("gitdir: ") or "\0" in line:
                return None  # (a NUL: no path git could have written; ask git)
            git_dir = os.path.realpath(os.path.join(top, line[len("gitdir: ") :]))
            break
        parent = os.path.dirname(top)
        if parent == top:
            return None
        top = parent
    common = git_dir
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as fh:
            common = os.path.realpath(os.path.join(git_dir, fh.read().strip()))
    except FileNotFoundError:
        pass
    except (OSError, ValueError):
        return None
    return Paths(top, git_dir, common)


def quick_unchanged(cwd: str) -> bool:
    """True only when the workspace certainly equals the task's latest checkpoint."""
    found = check(cwd)
    return found is not None and found.unchanged


def check(cwd: str, prepare: bool = False) -> Found | None:
    """One read-only scan against the last save's index; None when that save's state does
    not hold any more (HEAD, the index, the configuration or the task's refs moved).
    `prepare`: import the save path while git scans (import_beside)."""
    repo = find_repo(cwd)
    if repo is None:
        return None
    saved = quickstate.load(repo)
    if saved is None:
        return None
    before = quickstate.before_scan(repo, recording=False)
    if not _same_before_scan(repo, saved, before):
        return None
    index = os.path.join(quickstate.folder(repo), str(saved["saved_index"]))
    if quickstate.index_tail(index) != saved["saved_index_tail"]:
        return None
    env = {"GIT_INDEX_FILE": index, "GIT_OPTIONAL_LOCKS": "0"}  # never write it back
    argv = quickstate.include_argv(repo.root, saved["exclude_args"], saved["includes"])
    children: list[Spawned | None] = []
    errors = os.path.join(quickstate.folder(repo), f"status-errors-{os.getpid()}")
    # A Ctrl-C waits until every child is on the list, then none of them outlives us
    # (Spawned.finish waits once; the children start with no signal blocked).
    mask = _signal.pthread_sigmask(_signal.SIG_BLOCK, {_signal.SIGINT})
    try:
        status = Spawned(list(STATUS_ARGV), repo.root, env, errors=errors)
        config = Spawned(list(CONFIG_ARGV), repo.root)
        others = Spawned(argv, repo.root, {"GIT_LITERAL_PATHSPECS": "1"}) if argv else None
        children = [status, config, others]
        _signal.pthread_sigmask(_signal.SIG_SETMASK, mask)
        if prepare:
            import_beside(*(f"{__package__.rpartition('.')[0]}.{name}" for name in SAVE_MODULES))
        scanned = status.result()
        complaints = status.error_output()
        config_out = config.result(ok=(0, 1))  # 1: none of those keys is set
        seen_out = others.result() if others is not None else b""
    except BaseException:
        _signal.pthread_sigmask(_signal.SIG_SETMASK, mask)
        for child in children:
            if child is not None:
                child.finish()
        raise
    finally:
        try:  # noqa: SIM105 (contextlib costs the hook 3 ms)
            os.unlink(errors)
        except OSError:
            pass
    if scanned is None or seen_out is None or config_out is None:
        return None
    if complaints:  # a path status could not look at (below a looping link): the full
        return None  # save reads what it said (so build_on never meets such a link)
    if parse_config(config_out) != [tuple(p) for p in saved["config"]]:
        return None
    scan = parse_status(scanned)
    changed, _, untracked, unmerged, _ = scan
    if unmerged:
        return None
    seen = _nul_split(seen_out)
    overlay = saved["overlay"]
    current = quickstate.overlay_stats(repo.root, overlay)
    # The kept index is the real index as the last save scanned it: the same tracked
    # files differ from it, with the same stat data, when nothing changed since.
    tracked = quickstate.overlay_stats(repo.root, changed)
    stamp = int(saved["stamp_ns"])
    unchanged = (
        tracked == saved["changed"]
        and untracked == saved["untracked"]
        and seen == saved["include_others"]
        and current == overlay
        and quickstate.stats_trusted(current, stamp)
        and quickstate.stats_trusted(tracked, stamp, absent_ok=True)
    )
    return Found(unchanged, saved, before, scan, seen, tracked, repo, parse_config(config_out))


def _same_before_scan(repo: Paths, saved: dict[str, Any], now: quickstate.Before) -> bool:
    paths = [os.path.realpath(p) for p in (repo.root, repo.git_dir, repo.common_dir)]
    if saved.get("paths") != paths:
        return False
    if saved.get("env_task") != os.environ.get("CHECKPOINT_TASK"):
        return False
    if now.journal or now.head_text != saved["head_text"] or now.index != saved["index"]:
        return False
    if now.config_file != saved["config_file"]:
        return False
    head = head_commit(repo, now.head_text)
    if head is None or head != saved["trees"].get("base"):
        return False
    if quickstate.refs_seen(repo, saved["task"]) != saved["refs"]:
        return False
    ref_name = str(saved["ref"]).rsplit("/", 1)[-1]
    return bool(saved["refs"]["loose"].get(ref_name) == saved["commit"])


def head_commit(repo: Paths, head_text: str) -> str | None:
    """HEAD's commit from files alone (gitio.Repo.read_ref_file); None when that would
    take git (then: not quick)."""
    text = head_text.strip()
    if not text.startswith("ref: refs/heads/") or "\0" in text:
        return text if _is_oid(text) else None  # (a NUL: git reads it otherwise; ask git)
    ref = text[5:]
    try:
        with open(os.path.join(repo.common_dir, ref), "rb") as fh:
            found = fh.read().decode("ascii", "replace").strip()
        return found if _is_oid(found) else None
    except OSError:
        pass
    try:
        with open(os.path.join(repo.common_dir, "packed-refs"), "rb") as fh:
            packed = fh.read()
    except OSError:
        return None
    at = packed.find(b" " + ref.encode("utf-8", "surrogateescape") + b"\n")
    if at < 0:
        return None
    found = packed[packed.rfind(b"\n", 0, at) + 1 : at].decode("ascii", "replace")
    return found if _is_oid(found) else None


def _is_oid(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)


def _nul_split(out: bytes) -> list[str]:
    return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]
