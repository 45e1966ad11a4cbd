"""What a save keeps for the next auto-save's quick check (fast/quickcheck.py): the
temporary index it built and `state.json`, which ties that index to everything else the
checkpoint depended on (fast/quickstate.py reads it back)."""

from __future__ import annotations

import contextlib
import json
import os
import time
from dataclasses import dataclass

from ..fast import quickstate
from ..gitcore.repo import Repo
from ..storage.refs import current_task

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    from typing import Any


@dataclass(frozen=True)
class Seed:
    """What capture hands to `record`: the kept index (the real index as the scan left
    it) and what the scan saw."""

    before: quickstate.Before
    index_path: str  # the kept temporary index, to be adopted by `record`
    changed: dict[str, list[int] | None]  # tracked paths W took from disk: stat data
    untracked: tuple[str, ...]  # the scan's raw untracked list
    deleted: tuple[str, ...]  # tracked in the real index, gone from the work tree
    include_others: tuple[str, ...]  # `ls-files -o` of the includes (ignored ones too)
    includes: tuple[str, ...]  # the configured includes
    exclude_args: tuple[str, ...]  # the configured excludes, as ls-files options
    overlay: dict[str, list[int] | None]  # stat data of the captured overlay files
    rules: dict[str, list[int] | None] | None  # the files of attributes (rule_files)
    config: list[tuple[str, str]]  # the git config pairs the save used
    intent_to_add: tuple[str, ...]  # `git add -N` entries of the real index
    overlay_bytes: int
    index_stamp_ns: int | None = None  # the kept index's date when older than `before`'s


def keep_path(repo: Repo) -> str:
    """Where capture parks the index it wants kept (same file system: a rename)."""
    where = quickstate.folder(repo)
    os.makedirs(where, exist_ok=True)
    return os.path.join(where, f"pending-{os.getpid()}-{time.time_ns()}")


def discard_path(path: str | None) -> None:
    if path is not None:
        with contextlib.suppress(OSError):
            os.unlink(path)


def discard(seed: Seed | None) -> None:
    discard_path(seed.index_path if seed is not None else None)


def record(
    repo: Repo,
    seed: Seed,
    *,
    task: str,
    ref: str,
    commit: str,
    trees: dict[str, Any],
) -> None:
    """Adopt seed's index and write state.json for the task's latest checkpoint."""
    before = seed.before
    usable = (
        not before.journal
        and before.config_file != "racy"
        and before.head_text.strip() != ""
        and quickstate.stats_trusted(seed.overlay, before.stamp_ns)
        and quickstate.stats_trusted(seed.changed, before.stamp_ns, absent_ok=True)
    )
    where = quickstate.folder(repo)
    if not usable:
        forget(repo)
        discard(seed)
        return
    refs = quickstate.refs_seen(repo, task, ref)
    if refs is None:
        forget(repo)
        discard(seed)
        return
    index_name = f"index-{os.getpid()}-{time.time_ns()}"
    index = os.path.join(where, index_name)
    os.replace(seed.index_path, index)
    # Racy git: git re-checks by content every entry whose mtime is not older than the
    # index file. Dating the kept index back to before the scan that hashed or verified
    # its entries keeps an edit made in the same second as that scan visible, even when
    # the index was written a second later.
    # An index no scan refreshed since (an auto-save built on it) keeps its first date.
    stamp = seed.index_stamp_ns if seed.index_stamp_ns is not None else before.stamp_ns
    os.utime(index, ns=(stamp, stamp))
    data = {
        "version": quickstate.VERSION,
        "paths": [os.path.realpath(p) for p in (repo.root, repo.git_dir, repo.common_dir)],
        "env_task": os.environ.get("CHECKPOINT_TASK"),
        "task": task,
        # Whether `task` is the one a command without --task works on here (HEAD and
        # CHECKPOINT_TASK as they are kept): only then may the quick check answer for it.
        "default_task": task == current_task(repo),
        "head_text": before.head_text,
        "index": before.index,
        "config_file": before.config_file,
        "config": [list(p) for p in seed.config],
        "ref": ref,
        "commit": commit,
        "refs": refs,
        "saved_index": index_name,
        "saved_index_tail": quickstate.index_tail(index),
        "index_stamp_ns": stamp,
        "changed": seed.changed,
        "untracked": list(seed.untracked),
        "deleted": list(seed.deleted),
        "include_others": list(seed.include_others),
        "includes": list(seed.includes),
        "exclude_args": list(seed.exclude_args),
        "overlay": seed.overlay,
        "overlay_bytes": seed.overlay_bytes,
        "attributes": seed.rules,
        "intent_to_add": list(seed.intent_to_add),
        "stamp_ns": before.stamp_ns,
        "trees": trees,
    }
    tmp = os.path.join(where, f".state.{os.getpid()}.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(json.dumps(data))
    os.replace(tmp, os.path.join(where, "state.json"))
    hour_ago = time.time() - 3600
    for entry in os.scandir(where):
        stale = entry.name.startswith("index-") and entry.name != index_name
        # pending-*: kept by a capture that failed before its save (a crash, a refusal)
        if stale or (entry.name.startswith("pending-") and _mtime(entry.path) < hour_ago):
            discard_path(entry.path)


def _mtime(path: str) -> float:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def forget(repo: Repo) -> None:
    discard_path(os.path.join(quickstate.folder(repo), "state.json"))
