"""The scan of a save, restore or undo, started before the rest of the tool is loaded.

Python takes 50 to 80 ms to import click, PyYAML and the save path. The work-tree scan
depends on none of it: `git status` against a copy of the index, `write-tree` of a
second copy and `ls-files -v` (snapshot._fast_capture's three commands; 33 ms at 10,000
files, 260 ms at 100,000). So the installed command (launch.py) takes the repository's
checkpoint lock first, notes HEAD's commit, links (or copies) the index twice and starts
those three, and only then imports the rest; `take` hands their output to the save
path, which would otherwise run them itself.

The lock is what makes the early scan the scan of record: no other git-checkpoint can
change the workspace between it and the save; a HEAD that moved all the same (a commit
by hand) drops it. Whatever is unusual starts nothing (GIT_* variables that move the
repository, a git dir git would not take or that is not ours, the lock held elsewhere,
an interrupted restore, help asked), and whatever fails (a git that exits nonzero: an
unmerged index) leaves the save path to run the commands itself, which reports it.

This module imports os, fcntl and three small modules of ours (no json, re or
contextlib: 6 ms): it runs before anything.
"""

from __future__ import annotations

import fcntl
import os
import sys

from ..gitcore.spawn import (
    FLAGGED_ARGV,
    STATUS_ARGV,
    Spawned,
    link_or_copy,
    private_folder,
    remove_folder,
)
from . import quickstate
from .quickcheck import Paths, find_repo, head_commit

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from threading import Thread
    from types import FrameType, TracebackType

    Marks = dict[str, str]  # snapshot._marks: path -> "h", "S" or both

COMMANDS = ("save", "restore", "undo")
_NOT_NOW = ("-h", "--help", "--continue")  # help, or a journal to finish first
LOCK = "lock"  # under <common dir>/checkpoint/, as state.locked takes it


class Early:
    """The scan's children and the scratch folder they write in.

    `env` points git at the index copy that status refreshes (the save keeps it for the
    quick auto-save), `tree_env` at the one write-tree writes its cache tree into."""

    def __init__(self, repo: Paths, folder: str) -> None:
        self.repo = repo
        self.folder = folder
        self.env = {"GIT_INDEX_FILE": os.path.join(folder, "index")}
        self.tree_env = {"GIT_INDEX_FILE": os.path.join(folder, "tree-index")}
        self.before: quickstate.Before | None = None
        self.head: str | None = None  # HEAD's commit when the index was copied
        self.children: list[Spawned] = []
        self.outputs: tuple[bytes, bytes, Marks] | None = None
        self.status_errors = b""  # status's stderr: the paths it could not look at

    def spawn(self) -> None:
        """Note HEAD, copy the index twice (the second copy from the first: one index,
        whatever git does to the real one meanwhile; gitfast.link_or_copy), then start
        the three."""
        self.before = quickstate.before_scan(self.repo, recording=True)
        self.head = head_commit(self.repo, self.before.head_text)
        index = os.path.join(self.repo.git_dir, "index")
        if os.path.exists(index):
            link_or_copy(index, self.env["GIT_INDEX_FILE"])
            link_or_copy(self.env["GIT_INDEX_FILE"], self.tree_env["GIT_INDEX_FILE"])
        errors = os.path.join(self.folder, "status-errors")  # what status skipped, and why
        self.children.append(Spawned(list(STATUS_ARGV), self.repo.root, self.env, errors=errors))
        self.children.append(Spawned(["write-tree"], self.repo.root, self.tree_env))
        marks = os.path.join(self.folder, "marks")  # 6 MB at 100,000 files: no pipe
        self.children.append(Spawned(list(FLAGGED_ARGV), self.repo.root, self.tree_env, marks))

    def results(self, marks: Callable[[bytes], Marks]) -> tuple[bytes, bytes, Marks] | None:
        """(status, write-tree, `marks` of ls-files -v) output, or None when any of them
        failed. ls-files is read and parsed first: at 100,000 files it ends 100 ms
        before status does, and its 6 MB take 6 ms to look through."""
        if self.children:
            status, tree, flagged = self.children  # kept until done: close() waits on them
            listed = flagged.result()
            parsed = marks(listed) if listed is not None else None
            written, scanned = tree.result(), status.result()
            self.status_errors = status.error_output()
            self.children = []
            if scanned is not None and written is not None and parsed is not None:
                self.outputs = scanned, written, parsed
        return self.outputs

    def wait(self) -> None:
        """Wait for the children (their output unread): done with the index copies."""
        for child in self.children:
            child.result()
        self.children = []

    def __enter__(self) -> Early:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Wait for the children, then remove the scratch folder on a thread of its own:
        at 100,000 files its two 12 MB indexes take 8 ms to free, which the command's
        next git children need not wait for. `discard` (at exit) waits for it."""
        self.wait()
        import threading  # subprocess has imported it by now

        global _REMOVING
        _finish_removing()
        _REMOVING = threading.Thread(target=remove_folder, args=(self.folder,))
        _REMOVING.start()


_STARTED: Early | None = None
_LOCK: tuple[str, int] | None = None  # (path, descriptor) until state.locked adopts it
_REMOVING: Thread | None = None  # the scratch folder's removal, until discard waits for it


def _finish_removing() -> None:
    global _REMOVING
    if _REMOVING is not None:
        _REMOVING.join()
        _REMOVING = None


_INTERRUPTED = False
_STARTING = False  # in start(): a Ctrl-C waits until every child it started is listed
_PENDING = False  # a Ctrl-C that came meanwhile


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    global _INTERRUPTED, _PENDING
    if _INTERRUPTED:
        return  # the first is on its way out: what it cleans up must not be cut short
    if _STARTING:
        _PENDING = True  # raised once start() has every child on its list
        return
    if _in_finalizer(frame):
        _again_soon()
        return
    _INTERRUPTED = True
    raise KeyboardInterrupt


def _in_finalizer(frame: FrameType | None) -> bool:
    """Whether a finalizer (Popen.__del__, run wherever the last reference goes) is
    running: a KeyboardInterrupt cannot leave one (Python prints a traceback, carries on,
    and the Ctrl-C is lost, the ones after it ignored as the first on its way out)."""
    while frame is not None:
        if frame.f_code.co_name in ("__del__", "_unraisable"):
            return True
        frame = frame.f_back
    return False


def _again_soon() -> None:
    """The Ctrl-C sent again in a millisecond, from a thread, to the main thread: as a
    signal, it waits while the main thread blocks SIGINT (quicksave, starting children)."""
    import _thread
    import signal
    import threading
    import time

    main = threading.main_thread().ident
    assert main is not None

    def again() -> None:
        time.sleep(0.001)
        signal.pthread_kill(main, signal.SIGINT)

    _thread.start_new_thread(again, ())  # (Thread.start would wait for it to run)


def _unraisable(unraisable: sys.UnraisableHookArgs) -> None:
    """A Ctrl-C raised in a finalizer that _in_finalizer does not know (a weakref
    callback): no traceback, and it comes again."""
    global _INTERRUPTED
    if unraisable.exc_type is KeyboardInterrupt and _INTERRUPTED:
        _INTERRUPTED = False
        _again_soon()
        return
    sys.__unraisablehook__(unraisable)


def interrupt_once() -> None:
    """From here on, a Ctrl-C raises KeyboardInterrupt once, and the ones after it wait
    for its way out (children waited for, scratch folders removed, the lock released):
    a second Ctrl-C leaves nothing half undone, and no traceback. A handler of our own,
    not SIG_IGN, so that git children get the default back when they start. The launcher
    sets it first thing; console.guarded on every path (the main thread only)."""
    import signal

    if signal.getsignal(signal.SIGINT) is not _on_sigint:
        try:  # noqa: SIM105 (contextlib costs the early scan 3 ms, before git starts)
            signal.signal(signal.SIGINT, _on_sigint)
        except ValueError:  # not the main thread: Python's own handler stays
            pass
        sys.unraisablehook = _unraisable


def start(argv: list[str]) -> None:
    """Start the scan when `argv` (the command line after the program's name) is a save,
    a restore or an undo in a repository found without git. Raises nothing but a Ctrl-C
    (KeyboardInterrupt), after what had started is waited for and removed."""
    if not argv or argv[0] not in COMMANDS or any(a in _NOT_NOW for a in argv):
        return
    try:
        with held():  # a Ctrl-C during the start: raised once every child is on the list
            _start()
    except (OSError, ValueError):  # ValueError: a path with a NUL in it
        discard()
    except BaseException:  # Ctrl-C: what started is removed
        discard()
        raise


class held:
    """A Ctrl-C that comes inside the block is raised as the block ends (_on_sigint waits
    while _STARTING), whatever else the block raised: what it started is in the caller's
    hands by then, to wait for or stop."""

    def __enter__(self) -> None:
        global _STARTING
        _STARTING = True

    def __exit__(self, *exc_info: object) -> None:
        global _STARTING, _PENDING, _INTERRUPTED
        _STARTING = False
        if _PENDING:
            _PENDING, _INTERRUPTED = False, True
            raise KeyboardInterrupt


def _start() -> None:
    global _LOCK, _STARTED
    repo = find_repo(os.getcwd())
    if repo is None or not _ours(repo) or quickstate.journal_pending(repo):
        return
    state = os.path.join(repo.common_dir, "checkpoint")
    if not os.path.isdir(state):
        os.mkdir(state)  # its parents are git's: never made here (a race: no early scan)
    path = os.path.realpath(os.path.join(state, LOCK))
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # held: the save path waits for it, and scans after
        os.close(fd)
        return
    _LOCK = path, fd
    if quickstate.journal_pending(repo):  # an interrupted restore: the save path decides
        return
    _STARTED = early = Early(repo, private_folder(repo.git_dir))  # discard() finds it
    try:
        early.spawn()
    except (OSError, ValueError):
        _STARTED = None
        early.close()


def take(root: str, git_dir: str) -> Early | None:
    """The scan started for this repository, once; None when there is none."""
    global _STARTED
    early, _STARTED = _STARTED, None
    if early is None:
        return None
    if (os.path.realpath(root), os.path.realpath(git_dir)) != (early.repo.root, early.repo.git_dir):
        _STARTED = early  # not this repository's: left for the exit to clean up
        return None
    return early


def adopt_lock(path: str) -> int | None:
    """The descriptor of the lock taken for the early scan, if it is `path`'s: handed
    over once, to state.locked, which releases it."""
    global _LOCK
    if _LOCK is None or os.path.realpath(path) != _LOCK[0]:
        return None
    fd = _LOCK[1]
    _LOCK = None
    return fd


def discard() -> None:
    """At exit: an early scan nobody took is waited for and cleaned up; a lock nobody
    adopted is released."""
    global _STARTED, _LOCK
    early, _STARTED = _STARTED, None
    if early is not None:
        early.close()
    _finish_removing()
    if _LOCK is not None:
        os.close(_LOCK[1])
        _LOCK = None


def _ours(repo: Paths) -> bool:
    """A repository git itself would take, before anything is written into it: a git
    dir with HEAD, objects and refs (as git's is_git_directory checks), and a work tree
    and git dir owned by us (else git refuses them as of dubious ownership)."""
    uid = os.geteuid()
    try:
        return (
            os.path.isfile(os.path.join(repo.git_dir, "HEAD"))
            and os.path.isdir(os.path.join(repo.common_dir, "objects"))
            and os.path.isdir(os.path.join(repo.common_dir, "refs"))
            and os.stat(repo.root).st_uid == uid
            and os.stat(repo.git_dir).st_uid == uid
        )
    except OSError:
        return False
