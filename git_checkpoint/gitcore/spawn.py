"""git for the hook path: started with `os.posix_spawnp`, read from a pipe.

Every agent tool call pays for the hook's process, and `subprocess` (with `signal`,
`selectors`, `threading`), `dataclasses`, `typing` and `pathlib` cost more CPU to import
than the quick check spends in Python. So the quick check (quicksave.py) runs its few
git commands through this module, which imports `os` only; everything else runs git
through gitio.py. The same environment rules apply: no GIT_DIR and friends from our own
environment reach git.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping

# Variables that would make a git child act on another repository than ours.
REPO_ENV = ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_PREFIX")

# One scan of the work tree against an index (scan.py). --ignore-submodules=dirty: a
# submodule counts by its commit, as `add -u` records it.
STATUS_ARGV = (
    "status",
    "--porcelain=v2",
    "-z",
    "--untracked-files=all",
    "--no-renames",
    "--ignore-submodules=dirty",
)
# The index's marks (assume-unchanged, skip-worktree): snapshot._marks parses the output.
FLAGGED_ARGV = ("ls-files", "-v", "-z")
# The git config a save reads (gitio.CONFIG_PATTERN), compared as read; gc.* and
# maintenance.auto say when git's auto maintenance would act (maintenance.py).
CONFIG_ARGV = (
    "config",
    "-z",
    "--get-regexp",
    r"^(checkpoint\.|remote\.origin\.url$|core\.ignorecase$|core\.autocrlf$"
    r"|core\.sharedrepository$|extensions\.objectformat$"
    r"|(user|author|committer)\.(name|email)$|user\.useconfigonly$|commit\.gpgsign$"
    r"|i18n\.commitencoding$|core\.(loose)?compression$"
    r"|gc\.auto$|gc\.autopacklimit$|maintenance\.auto$)",
)


def parse_config(out: bytes) -> list[tuple[str, str]]:
    """`git config -z --get-regexp`'s output: (key, value) in file order; a key given
    bare reads "true", as git reads it."""
    pairs = []
    for item in out.decode("utf-8", "replace").split("\0"):
        if item:
            key, given, value = item.partition("\n")
            pairs.append((key, value if given else "true"))
    return pairs


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
                try:  # noqa: SIM105 (contextlib costs the early scan 3 ms, before git starts)
                    _, status = os.waitpid(pid, 0)
                except ChildProcessError:  # waited for already, when Ctrl-C came before
                    pass  # its answer was kept: the KeyboardInterrupt is on its way
        if status is not None:
            self.done = os.waitstatus_to_exitcode(status), b"".join(chunks)
        return self.done


def parse_status(
    out: bytes,
) -> tuple[list[str], list[str], list[str], bool, dict[str, str]]:
    """`status --porcelain=v2 -z` records: (tracked paths whose work-tree state differs
    from the index, the subset gone from the work tree, untracked paths, any unmerged,
    changed path -> its work-tree mode as git would record it)."""
    records = out.decode("utf-8", "surrogateescape").split("\0")
    modes: dict[str, str] = {}
    changed: list[str] = []
    deleted: list[str] = []
    untracked: list[str] = []
    unmerged = False
    i = 0
    while i < len(records):
        rec = records[i]
        i += 1
        kind = rec[:1]
        if kind == "1":  # 1 XY sub mH mI mW hH hI path
            fields = rec.split(" ", 8)
            if fields[1][1] != ".":
                changed.append(fields[8])
                modes[fields[8]] = fields[5]
                if fields[1][1] == "D":
                    deleted.append(fields[8])
        elif kind == "2":  # renames are off, but parse them anyway: path, then origPath
            fields = rec.split(" ", 9)
            i += 1
            if fields[1][1] != ".":
                changed.append(fields[9])
        elif kind == "u":
            unmerged = True
            changed.append(rec.split(" ", 10)[10])
        elif kind == "?":
            untracked.append(rec[2:])
    return changed, deleted, untracked, unmerged, modes


def child_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """Our environment less what would point git at another repository, plus `env`."""
    full = {k: v for k, v in os.environ.items() if k not in REPO_ENV}
    full.update(env or {})
    return full


# --- scratch folders in the git dir (gitio.Repo.temp_index, early.py) -----------------------


SCRATCH_PREFIX = "checkpoint-"  # <git dir>/checkpoint-XXXXXXXXXXXX/


def private_folder(parent: str, prefix: str = SCRATCH_PREFIX) -> str:
    """A new folder of ours under `parent`, readable by us alone (as mkdtemp makes);
    doctor.py finds what a crash leaves by the prefix."""
    while True:
        folder = os.path.join(parent, f"{prefix}{os.urandom(6).hex()}")
        try:
            os.mkdir(folder, 0o700)
            return folder
        except FileExistsError:
            continue


def empty_folder(folder: str | os.PathLike[str]) -> bool:
    """Remove everything in `folder` (never following a link); False when it is missing."""
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return False
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            import shutil  # a folder inside: not what git leaves, seldom needed

            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            try:  # noqa: SIM105 (contextlib costs the early scan 3 ms, before git starts)
                os.unlink(entry.path)
            except FileNotFoundError:
                pass
    return True


def remove_folder(folder: str | os.PathLike[str]) -> None:
    """Remove what git left in a scratch folder (indexes, their locks), then the folder."""
    if empty_folder(folder):
        try:  # noqa: SIM105 (as above)
            os.rmdir(folder)
        except OSError:
            pass


def link_or_copy(source: str, target: str) -> None:
    """A scratch copy of an index: a hard link where the file system has them, else a
    copy with the mtime kept (a fresh one would hide racily-clean edits).

    A link is the same file for free (no 12 MB to copy at 100,000 files, none to free
    after): git never writes an index in place, it writes `index.lock` and renames it
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
