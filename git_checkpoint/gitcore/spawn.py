"""git started with `os.posix_spawnp` and read from a pipe: the way the hook path and
the launcher's early scan start git, without `subprocess` (and the `signal`,
`selectors` and `threading` it loads). Everything else starts git through `repo.py`.
The same environment rule holds for both: no GIT_DIR and friends of our own
environment reach git. Also the scratch folders both make in the git dir.
"""

from __future__ import annotations

import os

from ..core.interrupts import through_ctrl_c

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

# Variables that would make a git child act on another repository than ours.
# GIT_CONFIG points `git config` alone at another file.
REPO_ENV = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_PREFIX",
    "GIT_CONFIG",
)


# SIGPIPE and SIGXFSZ, which Python ignores, at their default in git and what it runs
# (as subprocess's restore_signals gives them; `signal` is not loaded on this path).
DEFAULT_SIGNALS = (13, 25)


class Spawned:
    """A git child whose stdout is a pipe, or the file `out` (for an output larger than
    a pipe holds, which would stop git until it is read); stderr goes to /dev/null (a
    failure is a nonzero exit, and the caller then falls back to the full path, which
    reports it), or to the file `errors` when the caller reads what git said."""

    def __init__(
        self,
        argv: list[str],
        cwd: str,
        env: dict[str, str] | None = None,
        out: str = "",
        errors: str = "",
    ) -> None:
        self.to_file = bool(out)
        self.done: tuple[int, bytes] | None = None
        self.errors = errors
        if out:
            read_end = os.open(out, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
            write_end = os.dup(read_end)
        else:
            read_end, write_end = os.pipe()
        null = os.open(os.devnull, os.O_RDWR)
        err = os.open(errors, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600) if errors else null
        try:
            self.pid = os.posix_spawnp(
                "git",
                ["git", "-C", cwd, *argv],
                child_env(env),
                file_actions=[
                    (os.POSIX_SPAWN_DUP2, null, 0),
                    (os.POSIX_SPAWN_DUP2, write_end, 1),
                    (os.POSIX_SPAWN_DUP2, err, 2),
                    (os.POSIX_SPAWN_CLOSE, read_end),
                ],
                setsigmask=(),  # none blocked: ours may be, while children start
                setsigdef=DEFAULT_SIGNALS,
            )
        except OSError:
            os.close(read_end)
            self.pid = 0
            self.fd = -1
        else:
            self.fd = read_end
        finally:
            os.close(write_end)
            os.close(null)
            if err != null:
                os.close(err)

    def error_output(self) -> bytes:
        """What git wrote on stderr (to `errors`), once finished; b"" if not asked."""
        if not self.errors:
            return b""
        try:
            with open(self.errors, "rb") as fh:
                return fh.read()
        except OSError:
            return b""

    def result(self, ok: tuple[int, ...] = (0,)) -> bytes | None:
        """All of stdout, or None when git could not run or exited with a code not `ok`."""
        done = self.finish()
        return done[1] if done is not None and done[0] in ok else None

    def finish(self) -> tuple[int, bytes] | None:
        """(exit code, all of stdout), or None when git could not run. Once: later calls
        give the same answer, and an interrupted one (Ctrl-C) has still waited for git."""
        if self.pid == 0:
            return self.done
        pid, self.pid = self.pid, 0
        chunks = []
        status = None
        try:
            if self.to_file:
                _, status = os.waitpid(pid, 0)
                os.lseek(self.fd, 0, os.SEEK_SET)
            while chunk := os.read(self.fd, 1 << 20):
                chunks.append(chunk)
        finally:
            os.close(self.fd)
            if status is None:
                status = _reap(pid)
        if status is not None:
            self.done = os.waitstatus_to_exitcode(status), b"".join(chunks)
        return self.done


def _reap(pid: int) -> int | None:
    """The wait status of child `pid`, waited for whatever comes: a Ctrl-C meanwhile is
    raised once it has ended (the Ctrl-Cs after the first raise nothing:
    core/interrupts.py). None when it was waited for already (when a Ctrl-C came before
    its answer was kept: the KeyboardInterrupt is on its way)."""
    try:
        return os.waitpid(pid, 0)[1]
    except ChildProcessError:
        return None
    except KeyboardInterrupt:
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
        raise


def child_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """Our environment less what would point git at another repository, plus `env`."""
    full = {k: v for k, v in os.environ.items() if k not in REPO_ENV}
    full.update(env or {})
    return full


# --- scratch folders in the git dir (Repo.temp_index, the early scan) ----------------------


SCRATCH_PREFIX = "checkpoint-"  # <git dir>/checkpoint-XXXXXXXXXXXX/


def private_folder(
    parent: str, prefix: str = SCRATCH_PREFIX, named: list[str] | None = None
) -> str:
    """A new folder of ours under `parent`, readable by us alone (as mkdtemp makes);
    doctor finds what a crash leaves by the prefix. `named` has its name before it is
    made: a caller that removes what it names leaves nothing behind when a Ctrl-C
    comes between the folder's making and this function's return."""
    while True:
        folder = os.path.join(parent, f"{prefix}{os.urandom(6).hex()}")
        if named is not None:
            named.append(folder)
        try:
            os.mkdir(folder, 0o700)
            return folder
        except FileExistsError:
            if named is not None:
                named.remove(folder)
            continue


def empty_folder(folder: str | os.PathLike[str]) -> bool:
    """Remove everything in `folder` (never following a link); False when it is missing."""
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return False
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            import shutil  # a folder inside: not what git leaves there, seldom needed

            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            try:
                os.unlink(entry.path)
            except FileNotFoundError:
                pass
    return True


def remove_folder(folder: str | os.PathLike[str]) -> None:
    """Remove what git left in a scratch folder (indexes, their locks), then the folder."""
    if empty_folder(folder):
        try:
            os.rmdir(folder)
        except OSError:
            pass


def remove_folder_whole(folder: str) -> None:
    """remove_folder, finished even when a Ctrl-C comes in the middle of it."""
    through_ctrl_c(lambda: remove_folder(folder))


def link_or_copy(source: str, target: str) -> None:
    """A scratch copy of an index: a hard link where the file system has them, else a
    copy with the mtime kept (a fresh one would hide racily-clean edits).

    A link is the same file for free (nothing to copy, nothing to free after): git
    never writes an index in place, it writes `index.lock` and renames it
    over, so whatever git does to either name leaves the other as it was.
    """
    try:
        os.link(source, target)
        return
    except OSError:
        pass
    src = os.open(source, os.O_RDONLY)
    try:
        st = os.fstat(src)
        dst = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            done = 0
            while done < st.st_size:
                sent = os.sendfile(dst, src, done, st.st_size - done)
                if sent == 0:
                    break
                done += sent
        finally:
            os.close(dst)
    finally:
        os.close(src)
    os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
