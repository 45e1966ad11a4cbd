"""The auto-save's quick check: has the workspace changed since the task's latest
checkpoint? Answered with one work-tree scan, without loading the save path.

The last save kept its temporary index and what it depended on (quickstate.py). If
HEAD, the real index, the configuration and the task's refs are as they were, one
`git status --porcelain=v2` against that index (read-only) tells whether any tracked
file, any untracked file or any overlay file changed: nothing changed means no save.
When something did, the save builds on that scan (save/quickbuild.py) instead of
scanning again. Anything unexpected answers None: the full save decides, and it
deduplicates by content.
"""

from __future__ import annotations

import _signal  # type: ignore[import-not-found,unused-ignore]  # (`signal` loads enum)
import os

from ..gitcore.formats import CONFIG_ARGV, STATUS_ARGV, Scan, nul_split, parse_config, parse_status
from ..gitcore.locate import Paths, find_repo, head_commit
from ..gitcore.spawn import Spawned
from . import quickstate

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


class Found:
    """The quick check's answer: unchanged, or what changed since the last save (a scan
    against its kept index, which the save can build on instead of scanning again)."""

    __slots__ = (
        "before",
        "changed_stats",
        "config",
        "include_seen",
        "paths",
        "saved",
        "scan",
        "unchanged",
    )

    def __init__(
        self,
        *,
        unchanged: bool,
        saved: dict[str, Any],  # the last save's state.json
        before: quickstate.Before,
        scan: Scan,  # against the kept index
        include_seen: list[str],  # `ls-files -o` of the includes
        changed_stats: dict[str, list[int] | None],  # taken before anything hashes them
        paths: Paths,  # the repository, found without git
        config: list[tuple[str, str]],  # our git config pairs, as the check read them
    ) -> None:
        self.unchanged = unchanged
        self.saved = saved
        self.before = before
        self.scan = scan
        self.include_seen = include_seen
        self.changed_stats = changed_stats
        self.paths = paths
        self.config = config


def quick_unchanged(cwd: str) -> bool:
    """True only when the workspace certainly equals the task's latest checkpoint."""
    found = check(cwd)
    return found is not None and found.unchanged


def check(cwd: str, while_scanning: Callable[[], None] | None = None) -> Found | None:
    """One read-only scan against the last save's index; None when that save's state does
    not hold any more (HEAD, the index, the configuration or the task's refs moved).
    `while_scanning` runs while git scans when a save is already in sight (the hook
    imports the save path then: on two cores that import slows an unchanged check)."""
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
        if while_scanning is not None and change_in_sight(repo.root, saved):
            while_scanning()
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
        try:
            os.unlink(errors)
        except OSError:
            pass
    if scanned is None or seen_out is None or config_out is None:
        return None
    if complaints:  # a path status could not look at (below a looping link): the full
        return None  # save reads what it said (so build_on never meets such a link)
    config_pairs = parse_config(config_out)
    if config_pairs != [tuple(p) for p in saved["config"]]:
        return None
    scan = parse_status(scanned)
    if scan.unmerged:
        return None
    seen = nul_split(seen_out)
    overlay = saved["overlay"]
    current = quickstate.overlay_stats(repo.root, overlay)
    # The kept index is the real index as the last save scanned it: the same tracked
    # files differ from it, with the same stat data, when nothing changed since.
    tracked = quickstate.overlay_stats(repo.root, scan.changed)
    stamp = int(saved["stamp_ns"])
    unchanged = (
        tracked == saved["changed"]
        and list(scan.untracked) == saved["untracked"]
        and seen == saved["include_others"]
        and current == overlay
        and quickstate.stats_trusted(current, stamp)
        and quickstate.stats_trusted(tracked, stamp, absent_ok=True)
    )
    return Found(
        unchanged=unchanged,
        saved=saved,
        before=before,
        scan=scan,
        include_seen=seen,
        changed_stats=tracked,
        paths=repo,
        config=config_pairs,
    )


# Files change_in_sight looks at, at most: it runs before every scan.
IN_SIGHT_MAX = 64


def change_in_sight(root: str, saved: dict[str, Any]) -> bool:
    """Whether a file the last save found changed, or kept in its overlay, has changed
    again since (its stat data moved): an agent edits the same files again and again,
    and then a save is due whatever the scan says. False says nothing."""
    changed, overlay = saved.get("changed"), saved.get("overlay")
    if not isinstance(changed, dict) or not isinstance(overlay, dict):
        return False
    kept = [*changed.items(), *overlay.items()][:IN_SIGHT_MAX]
    return any(quickstate.file_stat(os.path.join(root, path)) != stats for path, stats in kept)


def _same_before_scan(repo: Paths, saved: dict[str, Any], now: quickstate.Before) -> bool:
    paths = [os.path.realpath(p) for p in (repo.root, repo.git_dir, repo.common_dir)]
    if saved.get("paths") != paths:
        return False
    if saved.get("env_task") != os.environ.get("CHECKPOINT_TASK"):
        return False
    if saved.get("default_task") is not True:  # kept by a `save --task T` of another task:
        return False  # says nothing of the task a hook saves in
    if now.journal or now.head_text != saved["head_text"] or now.index != saved["index"]:
        return False
    if now.config_file != saved["config_file"]:
        return False
    head = head_commit(repo.common_dir, now.head_text)
    if head is None or head != saved["trees"].get("base"):
        return False
    if quickstate.refs_seen(repo, saved["task"], saved["ref"]) != saved["refs"]:
        return False
    latest = str(saved["ref"]).rpartition("/")[2]
    return bool(saved["refs"]["contents"].get(latest) == saved["commit"])
