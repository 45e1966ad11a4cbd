"""The scan of a save, restore or undo, started by the launcher before the rest of the
tool is loaded, so that git scans while Python imports.

The work-tree scan depends on nothing the import brings: `git status` against a copy of
the index, `write-tree` of a second copy and `ls-files -v` (the capture's three
commands). So the installed command takes the repository's checkpoint lock first, notes
HEAD's commit, links (or copies) the index twice and starts those three; the capture
takes their output (`Prescan.take_scan`) instead of running them itself, and the command
adopts the lock (`Prescan.take_lock`).

The lock is what makes the early scan the scan of record: no other git-checkpoint can
change the workspace between it and the save; a HEAD that moved all the same (a commit
by hand) drops it. Whatever is unusual starts nothing (GIT_* variables that move the
repository, a git dir git would not take or that is not ours, the lock held elsewhere,
an interrupted restore), and whatever fails (a git that exits nonzero: an unmerged
index) leaves the capture to run the commands itself, which reports it.

Imports os and small modules of ours only: it runs before anything else.
"""

from __future__ import annotations

import os

from ..core.interrupts import held, through_ctrl_c
from ..core.lock import FileLock
from ..gitcore.formats import FLAGGED_ARGV, STATUS_ARGV
from ..gitcore.locate import Paths, find_repo, head_commit
from ..gitcore.spawn import Spawned, link_or_copy, private_folder, remove_folder
from . import quickstate

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from threading import Event
    from types import TracebackType

    Marks = dict[str, str]  # path -> "h", "S" or both (the capture's reading of ls-files -v)

LOCK = "lock"  # under <common dir>/checkpoint/, the repository's checkpoint lock


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
        self.removing: Event | None = None  # set when the scratch folder is removed

    def spawn(self) -> None:
        """Note HEAD, copy the index twice (the second copy from the first: one index,
        whatever git does to the real one meanwhile; spawn.link_or_copy), then start
        the three."""
        self.before = quickstate.before_scan(self.repo, recording=True)
        self.head = head_commit(self.repo.common_dir, self.before.head_text)
        index = os.path.join(self.repo.git_dir, "index")
        if os.path.exists(index):
            link_or_copy(index, self.env["GIT_INDEX_FILE"])
            link_or_copy(self.env["GIT_INDEX_FILE"], self.tree_env["GIT_INDEX_FILE"])
        errors = os.path.join(self.folder, "status-errors")  # what status skipped, and why
        self.children.append(Spawned(list(STATUS_ARGV), self.repo.root, self.env, errors=errors))
        self.children.append(Spawned(["write-tree"], self.repo.root, self.tree_env))
        marks = os.path.join(self.folder, "marks")  # large in a large index: a file, no pipe
        self.children.append(Spawned(list(FLAGGED_ARGV), self.repo.root, self.tree_env, marks))

    def results(self, marks: Callable[[bytes], Marks]) -> tuple[bytes, bytes, Marks] | None:
        """(status, write-tree, `marks` of ls-files -v) output, or None when any of them
        failed. ls-files is read and parsed first: it ends well before status does."""
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
        its two index copies can take a while to free in a large repository, and the
        command's next git children need not wait for that. `Prescan.discard` (at exit)
        waits for it."""
        self.wait()
        if self.removing is not None:
            return
        import threading  # subprocess has imported it by now

        removed = threading.Event()

        def remove() -> None:
            try:
                remove_folder(self.folder)
            finally:
                removed.set()

        # Known once running (a Ctrl-C before: discard() closes it again, and starts
        # another; two removals of one folder do no harm).
        threading.Thread(target=remove).start()
        self.removing = removed


class Prescan:
    """What the launcher started before the tool was loaded: the checkpoint lock and the
    early scan, each handed over once to the command that runs."""

    def __init__(self) -> None:
        self.lock: FileLock | None = None
        self.scan: Early | None = None
        self._closed: list[Early] = []  # taken or dropped: their removal waited for at exit

    def take_scan(self, root: str, git_dir: str) -> Early | None:
        """The scan started for this repository, once; None when there is none."""
        early = self.scan
        if early is None:
            return None
        if (os.path.realpath(root), os.path.realpath(git_dir)) != (
            early.repo.root,
            early.repo.git_dir,
        ):
            return None  # not this repository's: left for the exit to clean up
        self.scan = None
        self._closed.append(early)
        return early

    def holds_lock(self, path: str) -> bool:
        """Whether the lock taken for the early scan is `path`'s (not handed over yet)."""
        return self.lock is not None and os.path.realpath(path) == self.lock.path

    def take_lock(self, path: str) -> FileLock | None:
        """The lock taken for the early scan, if it is `path`'s: handed over once."""
        lock = self.lock
        if lock is None or not self.holds_lock(path):
            return None
        self.lock = None
        return lock

    def discard(self) -> None:
        """At exit: an early scan nobody took is waited for and cleaned up, the removal
        of every scratch folder is waited for, and a lock nobody adopted is released.
        A Ctrl-C meanwhile is raised once all that is done (the ones after the first
        raise nothing: core/interrupts.py)."""
        early, self.scan = self.scan, None
        if early is not None:
            self._closed.append(early)
        through_ctrl_c(self._end_all)

    def _end_all(self) -> None:
        for done in self._closed:
            done.close()  # (again, for one the command took: nothing left to do)
            while done.removing is not None and not done.removing.is_set():
                done.removing.wait()  # (not Thread.join, which a Ctrl-C spoils in 3.11)
        self._closed = []
        if self.lock is not None:
            self.lock.release()
            self.lock = None


def start() -> Prescan:
    """Start the scan of the repository of the current folder, when one is found without
    git and it is ours to scan. Raises nothing but a Ctrl-C (KeyboardInterrupt), after
    what had started is waited for and removed."""
    prescan = Prescan()
    try:
        with held():  # a Ctrl-C during the start: raised once every child is on the list
            _start(prescan)
    except (OSError, ValueError):  # ValueError: a path with a NUL in it
        prescan.discard()
    except BaseException:  # Ctrl-C: what started is removed
        prescan.discard()
        raise
    return prescan


def _start(prescan: Prescan) -> None:
    repo = find_repo(os.getcwd())
    if repo is None or not _ours(repo) or quickstate.journal_pending(repo):
        return
    state = os.path.join(repo.common_dir, "checkpoint")
    if not os.path.isdir(state):
        os.mkdir(state)  # its parents are git's: never made here (a race: no early scan)
    prescan.lock = FileLock.try_take(os.path.realpath(os.path.join(state, LOCK)))
    if prescan.lock is None:  # held: the command waits for it, and scans after
        return
    if quickstate.journal_pending(repo):  # an interrupted restore: the command decides
        return
    prescan.scan = early = Early(repo, private_folder(repo.git_dir))  # discard() finds it
    try:
        early.spawn()
    except (OSError, ValueError):
        prescan.scan = None
        early.close()
        prescan._closed.append(early)


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
