"""What the last save saw, kept so that the next auto-save can tell "unchanged" with one
work-tree scan (performance.md, issue 8 point 8).

Per work tree, under `<git dir>/checkpoint/quick/`: the temporary index that save built
(its stat data and mtime kept), and `state.json` tying it to everything else the
checkpoint depended on: HEAD, the real index's checksum trailer, `.checkpoint.yaml`, our
git config, the task's refs, the untracked list, the overlay files' stat data. Anything
that differs, or that cannot be read, means "ask the full save". Standard library only.
"""

from __future__ import annotations

import os
import stat
import time

TYPE_CHECKING = False
if TYPE_CHECKING:  # the hook path imports this module: no typing, pathlib, dataclasses
    from collections.abc import Iterable, Sequence
    from typing import Any, Protocol

    class RepoPaths(Protocol):
        """A gitio.Repo, or the quick check's paths found without git."""

        @property
        def root(self) -> str | os.PathLike[str]: ...
        @property
        def git_dir(self) -> str | os.PathLike[str]: ...
        @property
        def common_dir(self) -> str | os.PathLike[str]: ...


VERSION = 2  # 2: the kept index is the real index as scanned, W is grafted on it
STARTED_NS = time.time_ns()  # before this process read any configuration
RACY_NS = 1_000_000_000  # a file touched this close to a scan may change unseen by stat
TAIL = 32  # the index's checksum trailer (20 bytes for SHA-1, 32 for SHA-256), and more
CONFIG_FILE = ".checkpoint.yaml"


def folder(repo: RepoPaths) -> str:
    return os.path.join(repo.git_dir, "checkpoint", "quick")


def index_tail(index: str | os.PathLike[str]) -> str | None:
    """The size and checksum trailer of an index file, or None when there is none."""
    try:
        with open(index, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            fh.seek(max(0, size - TAIL))
            return f"{size}:{fh.read().hex()}"
    except FileNotFoundError:
        return None


def file_digest(path: str, recording: bool) -> str | None:
    """A small file's bytes (as text), its kind if it is no regular file, None if absent.
    `recording`: "racy" if it changed after this process may have read it."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(st.st_mode):
        return f"mode {st.st_mode:o}"
    if recording and max(st.st_mtime_ns, st.st_ctime_ns) >= STARTED_NS - RACY_NS:
        return "racy"  # written around when we read it: no promise about which version
    with open(path, "rb") as fh:
        return fh.read().decode("latin-1")  # it is small: keep it whole


def file_stat(path: str) -> list[int] | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_mode]


def overlay_stats(
    root: str | os.PathLike[str], files: Iterable[str]
) -> dict[str, list[int] | None]:
    return {f: file_stat(os.path.join(root, f)) for f in files}


def stats_trusted(
    stats: dict[str, list[int] | None], stamp_ns: int, absent_ok: bool = False
) -> bool:
    """Stat data taken before hashing vouches for the content only when the file was not
    touched within RACY_NS of the scan (timestamps are coarse) and it exists (or, with
    `absent_ok`, is known to be gone)."""
    limit = stamp_ns - RACY_NS
    return all(
        (s[1] < limit and s[2] < limit) if s is not None else absent_ok for s in stats.values()
    )


def refs_seen(repo: RepoPaths, task: str) -> dict[str, Any] | None:
    """The task's loose refs (name -> content) and packed-refs' stat data; None when refs
    are not plain files (reftable)."""
    if os.path.exists(os.path.join(repo.common_dir, "reftable")):
        return None
    loose: dict[str, str] = {}
    base = os.path.join(repo.common_dir, "refs", "checkpoints", task)
    try:
        entries = list(os.scandir(base))
    except (FileNotFoundError, NotADirectoryError):
        entries = []
    for entry in entries:
        if entry.is_file(follow_symlinks=False):
            with open(entry.path, "rb") as fh:
                loose[entry.name] = fh.read().decode("ascii", "replace").strip()
        else:
            loose[entry.name + "/"] = ""
    return {"loose": loose, "packed": file_stat(os.path.join(repo.common_dir, "packed-refs"))}


def include_argv(
    root: str | os.PathLike[str], exclude_args: Sequence[str], includes: Sequence[str]
) -> list[str] | None:
    """`ls-files -o` of the includes that exist: without --exclude-standard, ignored files
    under them are listed too; the configured excludes still win over an include. (Run
    it with GIT_LITERAL_PATHSPECS=1.)"""
    present = [p for p in includes if os.path.lexists(os.path.join(root, p))]
    return ["ls-files", "-z", "-o", *exclude_args, "--", *present] if present else None


class Before:
    """Read before a scan: a change after this point shows as a difference later."""

    __slots__ = ("config_file", "head_text", "index", "journal", "stamp_ns")

    def __init__(
        self, head_text: str, index: str | None, config_file: str | None, journal: bool,
        stamp_ns: int,
    ) -> None:  # fmt: skip
        self.head_text = head_text
        self.index = index
        self.config_file = config_file
        self.journal = journal  # a restore is pending
        self.stamp_ns = stamp_ns


def journal_pending(repo: RepoPaths) -> bool:
    """A restore journal in this worktree (journal.py): a restore is running or was
    interrupted."""
    return os.path.exists(os.path.join(repo.git_dir, "checkpoint", "restore-journal.json"))


def before_scan(repo: RepoPaths, recording: bool) -> Before:
    try:
        with open(os.path.join(repo.git_dir, "HEAD"), "rb") as fh:
            head_text = fh.read().decode("utf-8", "surrogateescape")
    except OSError:
        head_text = ""
    return Before(
        head_text=head_text,
        index=index_tail(os.path.join(repo.git_dir, "index")),
        config_file=file_digest(os.path.join(repo.root, CONFIG_FILE), recording),
        journal=journal_pending(repo),
        stamp_ns=time.time_ns(),
    )


class Seed:
    """What capture hands to `record`: the kept index (the real index as the scan left
    it) and what the scan saw."""

    def __init__(
        self,
        *,
        before: Before,
        index_path: str,  # the kept temporary index, to be adopted by `record`
        index_stamp_ns: int | None = None,  # its date when older than `before`'s
        changed: dict[str, list[int] | None],  # tracked paths W took from disk: stat data
        untracked: tuple[str, ...],  # the scan's raw untracked list
        deleted: tuple[str, ...],  # tracked in the real index, gone from the work tree
        include_others: tuple[str, ...],  # `ls-files -o` of the includes (ignored ones too)
        includes: tuple[str, ...],  # the configured includes
        exclude_args: tuple[str, ...],  # the configured excludes, as ls-files options
        overlay: dict[str, list[int] | None],  # stat data of the captured overlay files
        config: list[tuple[str, str]],  # the git config pairs the save used
        intent_to_add: tuple[str, ...],  # `git add -N` entries of the real index
        overlay_bytes: int,
    ) -> None:
        self.before = before
        self.index_path = index_path
        self.index_stamp_ns = index_stamp_ns
        self.changed = changed
        self.untracked = untracked
        self.deleted = deleted
        self.include_others = include_others
        self.includes = includes
        self.exclude_args = exclude_args
        self.overlay = overlay
        self.config = config
        self.intent_to_add = intent_to_add
        self.overlay_bytes = overlay_bytes


def discard_path(path: str | None) -> None:
    if path is not None:
        try:  # noqa: SIM105 (contextlib costs the early scan 3 ms, before git starts)
            os.unlink(path)
        except OSError:
            pass


def discard(seed: Seed | None) -> None:
    discard_path(seed.index_path if seed is not None else None)


def record(
    repo: RepoPaths,
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
        and stats_trusted(seed.overlay, before.stamp_ns)
        and stats_trusted(seed.changed, before.stamp_ns, absent_ok=True)
    )
    where = folder(repo)
    if not usable:
        forget(repo)
        discard(seed)
        return
    refs = refs_seen(repo, task)
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
        "version": VERSION,
        "paths": [os.path.realpath(p) for p in (repo.root, repo.git_dir, repo.common_dir)],
        "env_task": os.environ.get("CHECKPOINT_TASK"),
        "task": task,
        "head_text": before.head_text,
        "index": before.index,
        "config_file": before.config_file,
        "config": [list(p) for p in seed.config],
        "ref": ref,
        "commit": commit,
        "refs": refs,
        "saved_index": index_name,
        "saved_index_tail": index_tail(index),
        "index_stamp_ns": stamp,
        "changed": seed.changed,
        "untracked": list(seed.untracked),
        "deleted": list(seed.deleted),
        "include_others": list(seed.include_others),
        "includes": list(seed.includes),
        "exclude_args": list(seed.exclude_args),
        "overlay": seed.overlay,
        "overlay_bytes": seed.overlay_bytes,
        "intent_to_add": list(seed.intent_to_add),
        "stamp_ns": before.stamp_ns,
        "trees": trees,
    }
    import json  # here: json and re cost the early scan 6 ms before its git starts

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


def forget(repo: RepoPaths) -> None:
    discard_path(os.path.join(folder(repo), "state.json"))


def load(repo: RepoPaths) -> dict[str, Any] | None:
    import json

    try:
        with open(os.path.join(folder(repo), "state.json"), encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("version") != VERSION:
        return None
    return data


def keep_path(repo: RepoPaths) -> str:
    """Where capture parks the index it wants kept (same file system: a rename)."""
    where = folder(repo)
    os.makedirs(where, exist_ok=True)
    return os.path.join(where, f"pending-{os.getpid()}-{time.time_ns()}")
