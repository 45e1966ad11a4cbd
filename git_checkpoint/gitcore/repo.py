"""The one place that starts git for the full tool (the hook path's light start is
`spawn.py`).

`Repo` holds the locations of a work tree and its git dirs and runs git there (every
scan, hash, tree and ref goes through the git CLI); `objects` reads trees and blobs
through one `cat-file --batch` child (catfile.py), and `odb` is a pygit2 handle for
notes, opened on first use (only notes pay for importing pygit2).
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import subprocess
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

from ..core.errors import GitFailed, UsageError
from ..core.interrupts import held
from . import locate
from .formats import CONFIG_PATTERN, ZERO_OID, config_bool, parse_config
from .spawn import (
    SCRATCH_PREFIX,
    child_env,
    link_or_copy,
    private_folder,
    remove_folder_whole,
)

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    from typing import Any

    import pygit2

    from .catfile import Objects

# From this many new trees, they are written as one pack (loose.write_pack) rather than
# one loose file each, as git's fetch keeps a pack from 100 objects on
# (fetch.unpackLimit). Not `index-pack --stdin`: its collision check lists every loose
# object folder, which costs more than the pack saves in a repository with many.
PACK_FROM = 128
# Config that says where a repository is: not carried to a scratch repository.
_NOT_CARRIED = ("include.path", "core.worktree", "core.bare", "core.hookspath")


def _config_entries(listing: bytes) -> dict[str, str]:
    """`git config --list -z` output as the environment that passes every entry to a
    git command, in order (GIT_CONFIG_COUNT, GIT_CONFIG_KEY_<n>, GIT_CONFIG_VALUE_<n>:
    no limit on one variable's size). A key written without a value is a boolean
    there, and passes as true."""
    env: dict[str, str] = {}
    count = 0
    for entry in listing.decode("utf-8", "surrogateescape").split("\0"):
        if not entry:
            continue
        key, has_value, value = entry.partition("\n")
        if key in _NOT_CARRIED or (key.startswith("includeif.") and key.endswith(".path")):
            continue
        env[f"GIT_CONFIG_KEY_{count}"] = key
        env[f"GIT_CONFIG_VALUE_{count}"] = value if has_value else "true"
        count += 1
    env["GIT_CONFIG_COUNT"] = str(count)
    return env


# Repo.refs_elsewhere's folders, <common dir>/checkpoint-refs-<pid>-<random>/: a scratch
# folder doctor finds, and the pid tells whether the process that made it still runs.
REFS_ELSEWHERE = f"{SCRATCH_PREFIX}refs-"


def run_git(
    argv: list[str],
    cwd: str | Path,
    *,
    stdin: bytes | None = None,
    env: Mapping[str, str] | None = None,
    check: bool = True,
    pass_fds: Iterable[int] = (),
) -> subprocess.CompletedProcess[bytes]:
    """Run `git argv…` and return the completed process; raise GitFailed on error.

    GIT_DIR, GIT_INDEX_FILE and friends from our own environment never reach git (hooks
    run with them set): each call names its repository by `cwd`, its index by `env`.
    `pass_fds`: descriptors the child inherits (the checkpoint lock, Repo.lock_fds).
    """
    full_env = child_env(env)
    # Its output is ours to print, never a pager's: under `git -p checkpoint` git would
    # colour it for the pager it started.
    full_env.pop("GIT_PAGER_IN_USE", None)
    child = None
    try:
        # A Ctrl-C while git starts: raised once it is ours to wait for (inside Popen,
        # it would leave git running, the lock in its hands, past our exit).
        with held():
            child = subprocess.Popen(
                ["git", *argv],
                cwd=cwd,
                stdin=subprocess.PIPE if stdin is not None else None,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=full_env,
                pass_fds=tuple(pass_fds),
            )
    except OSError as exc:  # git missing, cwd gone: named as a path, not a Path's repr
        where = f": {os.fsdecode(exc.filename)}" if exc.filename is not None else ""
        raise GitFailed(argv, 127, f"{exc.strerror or exc}{where}") from exc
    except KeyboardInterrupt:
        if child is not None:
            with child:
                pass_ctrl_c_on(child, grace=10)
        raise
    with child:
        try:
            out, err = child.communicate(stdin)
        except KeyboardInterrupt:
            pass_ctrl_c_on(child, grace=10)
            raise
    if child.returncode == -signal.SIGINT:  # a Ctrl-C reached git too (on any thread)
        raise KeyboardInterrupt
    proc = subprocess.CompletedProcess(["git", *argv], child.returncode, out, err)
    if check and proc.returncode != 0:
        raise GitFailed(argv, proc.returncode, proc.stderr.decode(errors="replace"))
    return proc


def _current_folder() -> Path:
    """The current folder; one that was removed is named by the shell's $PWD."""
    try:
        return Path.cwd()
    except FileNotFoundError:
        raise UsageError(
            f"the current folder was removed: {os.environ.get('PWD') or '.'}; "
            "cd into the work tree and run it again"
        ) from None


def run_git_quietly(argv: list[str], cwd: str | Path) -> None:
    """Run `git argv…` for its effect alone (git's auto maintenance): no pipes, so that
    nothing a child leaves running (a detached gc, what a hook starts) is waited for; no
    descriptor of ours (the lock's); its output and its failure are git's business."""
    quiet = subprocess.DEVNULL
    subprocess.run(
        ["git", *argv], cwd=cwd, stdin=quiet, stdout=quiet, stderr=quiet, env=child_env()
    )


def pass_ctrl_c_on(child: subprocess.Popen[Any], grace: float) -> None:
    """After a Ctrl-C: pass it on to `child`, as a terminal's Ctrl-C would (git removes
    its lock files and stops), and wait for the child itself, not for the end of its
    output (a child of its own, such as ssh, may hold that open). A SIGKILL only once
    `grace` seconds have gone by: a killed git can leave a ref's lock file behind.
    (core.interrupts: the Ctrl-Cs after the first wait for this.)"""
    with contextlib.suppress(ProcessLookupError):
        child.send_signal(signal.SIGINT)
    try:
        child.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        child.kill()
        child.wait()


def concurrently(*calls: Callable[[], Any]) -> list[Any]:
    """Each call's result, the calls run side by side on threads (their git children
    then share the cores); once all have finished, the exception of the first call (in
    the order given) that raised one is raised, a Ctrl-C before any other (the failures
    it caused follow from it): which git failed first in time is no part of what a
    command says."""
    import threading  # subprocess has imported it already

    results: list[Any] = [None] * len(calls)
    errors: list[BaseException] = []
    failed: dict[int, BaseException] = {}  # call -> what it raised
    ended = [threading.Event() for _ in calls]

    def run(n: int) -> None:
        try:
            results[n] = calls[n]()
        except BaseException as exc:  # handed to the caller below
            failed[n] = exc
        finally:
            ended[n].set()

    threads = [threading.Thread(target=run, args=(n,)) for n in range(1, len(calls))]
    started = 0
    try:
        # A Ctrl-C while the threads start: raised once each is running (and waited
        # for below), not while one is half started and could be left behind.
        with held():
            for thread in threads:
                thread.start()
                started += 1
    except KeyboardInterrupt as exc:
        errors.append(exc)
        for event in [ended[0], *ended[1 + started :]]:  # the calls never begun
            event.set()
    else:
        run(0)
    # Through a Ctrl-C too: a thread's git may be writing a ref. (Not Thread.join: a
    # Ctrl-C inside it marks a running thread as ended, in Python 3.11.)
    for event in ended:
        while not event.is_set():
            try:
                event.wait()
            except KeyboardInterrupt as exc:
                errors.insert(0, exc)
    for thread in threads[:started]:
        thread.join()  # ended already
    errors += [failed[n] for n in sorted(failed)]
    interrupts = [e for e in errors if isinstance(e, KeyboardInterrupt)]
    if interrupts or errors:
        raise (interrupts or errors)[0]
    return results


def nul_list(paths: Iterable[str]) -> bytes:
    """Paths as `-z --stdin` wants them."""
    return b"".join(os.fsencode(p) + b"\0" for p in paths)


@dataclass
class Repo:
    """A work tree and its repository."""

    root: Path  # top of the work tree
    git_dir: Path  # this worktree's git dir (index, HEAD)
    common_dir: Path  # shared across linked worktrees (refs, objects, our state)
    # Descriptors git children inherit: the checkpoint lock while it is held
    # (storage.lock), so that a git process still writing after we were killed keeps the
    # lock until it is done. A copy made with dataclasses.replace shares the list.
    lock_fds: list[int] = field(default_factory=list, compare=False, repr=False)
    # Told, once, when a command has to wait for the checkpoint lock: who holds it (the
    # entry says so at that moment, not before: by the end it may be over).
    on_lock_wait: list[Callable[[str], None]] = field(
        default_factory=list, compare=False, repr=False
    )

    @classmethod
    def discover(cls, cwd: str | Path | None = None, *, user_env: bool = True) -> Repo:
        """The repository of `cwd`; `user_env`: honour the user's GIT_DIR/GIT_WORK_TREE."""
        where = Path(cwd) if cwd is not None else _current_folder()
        if not where.is_dir():
            raise UsageError(f"{'not a folder' if where.exists() else 'no such folder'}: {where}")
        known = locate.confirmed(str(where)) if user_env else None
        if known is not None:
            root, git_dir, common = (Path(p) for p in known)
            return cls(root, git_dir, common)
        argv = [
            "rev-parse",
            "--path-format=absolute",
            "--show-toplevel",
            "--absolute-git-dir",
            "--git-common-dir",
        ]
        # The one call that honours GIT_DIR / GIT_WORK_TREE, if the user set them.
        names = ("GIT_DIR", "GIT_WORK_TREE") if user_env else ()
        inherited = {k: os.environ[k] for k in names if k in os.environ}
        proc = run_git(argv, where, check=False, env=inherited)
        if proc.returncode != 0:
            msg = proc.stderr.decode(errors="replace").strip().splitlines()
            reason = msg[0].lower() if msg else "not a git repository"
            if "not a git repository" in reason or "work tree" in reason:
                raise UsageError(f"not inside a git work tree: {where}")
            raise GitFailed(argv, proc.returncode, proc.stderr.decode(errors="replace"))
        lines = os.fsdecode(proc.stdout).splitlines()  # a path need not be UTF-8
        if len(lines) != 3:
            raise UsageError(f"not inside a git work tree (a bare repository?): {where}")
        root, git_dir, common = (Path(x) for x in lines)
        if inherited:
            if not root.is_dir():  # GIT_WORK_TREE names a folder git does not check
                raise UsageError(f"no such folder: {root} (GIT_WORK_TREE)")
            plain = run_git(["rev-parse", "--absolute-git-dir"], root, check=False)
            if Path(os.fsdecode(plain.stdout).strip()) != git_dir:
                raise UsageError(
                    f"GIT_DIR={os.environ.get('GIT_DIR', '')} is not the git dir of the work "
                    f"tree {root}: run git checkpoint without it, from the work tree"
                )
        else:
            locate.confirm(lines)
        return cls(root=root, git_dir=git_dir, common_dir=common)

    # --- the CLI ---------------------------------------------------------------

    def run(
        self,
        argv: list[str],
        *,
        stdin: bytes | None = None,
        env: Mapping[str, str] | None = None,
        check: bool = True,
    ) -> subprocess.CompletedProcess[bytes]:
        """Run git in the work tree (run_git); the lock's descriptors go with it."""
        return run_git(argv, self.root, stdin=stdin, env=env, check=check, pass_fds=self.lock_fds)

    def git(
        self,
        *args: str,
        stdin: bytes | None = None,
        env: Mapping[str, str] | None = None,
    ) -> bytes:
        """Run git in the work tree; return stdout. Raises GitFailed with git's message."""
        return self.run(list(args), stdin=stdin, env=env).stdout

    def git_lines(self, *args: str, env: Mapping[str, str] | None = None) -> list[str]:
        """Run a `-z` git command and split its NUL-separated output."""
        out = self.git(*args, env=env)
        return [p for p in out.decode("utf-8", "surrogateescape").split("\0") if p]

    @cached_property
    def objects(self) -> Objects:
        """Trees and blobs through one `cat-file --batch` child (catfile.py)."""
        from .catfile import Objects

        return Objects(self.root, child_env())

    # --- pygit2 ------------------------------------------------------------------

    @cached_property
    def odb(self) -> pygit2.Repository:
        import pygit2

        try:
            return pygit2.Repository(str(self.root))
        except pygit2.GitError as exc:
            raise GitFailed(["(pygit2) open", str(self.root)], 128, str(exc)) from exc

    def no_index(self) -> dict[str, str]:
        """The environment for a command that compares trees alone: git's diff-tree reads
        the whole index first and never uses it (a cost that grows with it); an index file
        that is not there reads as an empty one. (Anything at that folder's name, even a
        file, which git would fail on: the real index, as before.)"""
        folder = os.path.join(self.git_dir, "checkpoint", "no-index")
        return {} if os.path.lexists(folder) else {"GIT_INDEX_FILE": os.path.join(folder, "index")}

    @contextlib.contextmanager
    def temp_index(self, seed: Path | None = None) -> Iterator[dict[str, str]]:
        """A scratch index in the git dir (`seed` linked or copied, spawn.link_or_copy;
        or empty); yields the environment that points git at it. The user's index is
        never written.
        (A folder of its own, for git's `index.lock` beside it; no tempfile or shutil
        import: the hook's save path makes one for every save.)
        """
        named: list[str] = []
        try:
            folder = private_folder(str(self.git_dir), named=named)
            index = os.path.join(folder, "index")
            if seed is not None and seed.exists():
                link_or_copy(str(seed), index)
            yield {"GIT_INDEX_FILE": index}
        finally:
            for made in named:
                remove_folder_whole(made)

    @contextlib.contextmanager
    def refs_elsewhere(self, refs: Mapping[str, str]) -> Iterator[tuple[list[str], dict[str, str]]]:
        """A scratch repository in the git dir holding `refs` (name -> commit) in one
        packed-refs file, for a command that reads many refs at once: git writes each
        ref of a repository as a file of its own, and ten thousand of those cost more
        than the push that reads them. It borrows this repository's objects (alternates)
        and shallow boundary, and the command run there reads this repository's config
        as git reads it here: every file, every conditional include resolved here,
        passed whole on the command line, and no config of its own. Its hooks are not
        run (the caller runs this repository's: run_hook). Yields the git options and
        the environment that point a command at it; removed after."""
        config = _config_entries(self.git("config", "--list", "-z"))
        named: list[str] = []
        try:
            folder = private_folder(
                str(self.common_dir), f"{REFS_ELSEWHERE}{os.getpid()}-", named=named
            )
            git_dir = Path(folder)
            (git_dir / "objects" / "info").mkdir(parents=True)
            (git_dir / "refs").mkdir()
            objects = (self.common_dir / "objects").resolve()
            (git_dir / "objects" / "info" / "alternates").write_text(f"{objects}\n")
            (git_dir / "HEAD").write_text("ref: refs/heads/main\n")
            (git_dir / "config").write_text("[core]\n\trepositoryformatversion = 0\n")
            if (self.common_dir / "shallow").exists():
                link_or_copy(str(self.common_dir / "shallow"), str(git_dir / "shallow"))
            lines = sorted(f"{oid} {name}\n".encode() for name, oid in refs.items())
            packed = b"# pack-refs with: peeled fully-peeled sorted \n" + b"".join(lines)
            (git_dir / "packed-refs").write_bytes(packed)
            env = {
                "GIT_CONFIG_NOSYSTEM": "1",
                "GIT_CONFIG_GLOBAL": os.devnull,
                "GIT_CONFIG_PARAMETERS": "",  # the user's own are in the listing
                **config,
            }
            yield [f"--git-dir={git_dir}"], env
        finally:
            for made in named:
                remove_folder_whole(made)

    def run_hook(
        self, name: str, args: list[str], stdin: bytes
    ) -> subprocess.CompletedProcess[bytes] | None:
        """Run this repository's hook `name` as git runs it (in the top of the work
        tree, `args`, `stdin`), output captured; None when there is none."""
        hooks = self.git("rev-parse", "--git-path", "hooks").decode().strip()
        hook = os.path.join(self.root, hooks, name)
        if not (os.path.isfile(hook) and os.access(hook, os.X_OK)):
            return None
        for argv in ([hook, *args], ["/bin/sh", hook, *args]):
            try:
                return subprocess.run(
                    argv, cwd=self.root, input=stdin, capture_output=True, env=child_env()
                )
            except OSError as exc:
                if exc.errno != errno.ENOEXEC:  # no interpreter line: git runs it in sh
                    raise GitFailed([name], 126, f"cannot run {hook}: {exc.strerror}") from None
        raise GitFailed([name], 126, f"cannot run {hook}")  # pragma: no cover - sh itself

    def state_dir(self) -> Path:
        """Our local, unshared state: shared by all linked worktrees of the repository."""
        path = self.common_dir / "checkpoint"
        path.mkdir(parents=True, exist_ok=True)
        return path

    # --- HEAD and refs -------------------------------------------------------------

    def head(self) -> tuple[str | None, str | None]:
        """(commit id or None when unborn, branch short name or None when detached)."""
        text = locate.read_head(self.git_dir)
        detached = locate.object_id_or_none(text.strip())
        if text.startswith("ref: "):
            ref = text[5:].strip()
        elif detached:
            ref = ""
        else:  # a HEAD we cannot read as a file: ask git
            sym = self.run(["symbolic-ref", "-q", "HEAD"], check=False)
            ref = sym.stdout.decode("utf-8", "surrogateescape").strip()
        branch = ref[len("refs/heads/") :] if ref.startswith("refs/heads/") else None
        fast = locate.read_ref(self.common_dir, ref) if branch else detached
        return fast or self.resolve_ref("HEAD^{commit}"), branch

    def create_ref(self, name: str, oid: str, reason: str) -> bool:
        """Create ref `name` at `oid` with a reflog entry; False if it already exists."""
        proc = self.run(
            ["update-ref", "--create-reflog", "-m", reason, name, oid, ZERO_OID], check=False
        )
        if proc.returncode == 0:
            return True
        if self.resolve_ref(name) is not None:
            return False
        raise GitFailed(["update-ref", name], proc.returncode, proc.stderr.decode(errors="replace"))

    def update_ref(self, name: str, new: str, old: str, reason: str) -> None:
        """Compare-and-swap `name` from old to new, with a reflog entry."""
        self.git("update-ref", "-m", reason, name, new, old)

    def delete_ref(self, name: str, old: str) -> None:
        self.git("update-ref", "-d", name, old)

    def resolve_ref(self, name: str) -> str | None:
        proc = self.run(["rev-parse", "-q", "--verify", name], check=False)
        if proc.returncode != 0:
            return None
        return proc.stdout.decode().strip() or None

    @cached_property
    def _config(self) -> list[tuple[str, str]]:
        """Our `checkpoint.*` keys, the origin URL, core.ignoreCase, core.autocrlf, and
        what says how git writes objects and commits (formats.CONFIG_PATTERN), read once."""
        proc = self.run(["config", "-z", "--get-regexp", CONFIG_PATTERN], check=False)
        if proc.returncode not in (0, 1):
            raise GitFailed(["config", "--get-regexp"], proc.returncode, proc.stderr.decode())
        return parse_config(proc.stdout)

    def remember_config(self, pairs: list[tuple[str, str]]) -> None:
        """What `_config` would read, read already (by the hook's quick check)."""
        self.__dict__["_config"] = list(pairs)

    def checkpoint_config(self) -> list[tuple[str, str]]:
        """Every `git config checkpoint.*` entry, in file order."""
        return [(k, v) for k, v in self._config if k.startswith("checkpoint.")]

    def config_pairs(self) -> list[tuple[str, str]]:
        """Every pair `_config` read (CONFIG_PATTERN), as read."""
        return list(self._config)

    def autocrlf(self) -> str:
        """core.autocrlf as `git config --get` gives it, lowercased; "" when unset."""
        values = [v for k, v in self._config if k == "core.autocrlf"]
        return values[-1].strip().lower() if values else ""

    def ignore_case(self) -> bool:
        values = [v.lower() for k, v in self._config if k == "core.ignorecase"]
        return bool(values) and values[-1] in ("true", "yes", "on", "1")

    def sha1(self) -> bool:
        """Whether objects are named by SHA-1 (else SHA-256: extensions.objectFormat)."""
        values = [v.lower() for k, v in self._config if k == "extensions.objectformat"]
        return not values or values[-1] == "sha1"

    def origin_url(self) -> str | None:
        urls = [v for k, v in self._config if k == "remote.origin.url"]
        return urls[-1] if urls else None

    def config_value(self, key: str) -> str | None:
        """The value git gives `key` (lowercase; one CONFIG_PATTERN reads): the last one
        set, None when it is not."""
        values = [v for k, v in self._config if k == key]
        return values[-1] if values else None

    def quotes_paths(self) -> bool:
        """core.quotePath: whether names are printed with their bytes outside ASCII in
        octal (git's default, and what a value git would refuse reads as)."""
        value = self.config_value("core.quotepath")
        return value is None or config_bool(value) is not False

    def store_trees(self, trees: Mapping[str, bytes], top: str) -> bool:
        """Write trees (id -> body; `top` holds all the others) as loose objects, as
        `mktree` would; False where git must write them (loose.usable), or could not be
        written here (a read-only folder: git then says why)."""
        from . import loose

        if not loose.usable(self._config):
            return False
        if len(trees) >= PACK_FROM:  # one pack, not a file each: unless stored before
            if self._stored(top):
                return True
            with contextlib.suppress(OSError):
                if loose.write_pack(self.common_dir / "objects", 2, trees):
                    return True
        try:
            loose.write_trees(self.common_dir / "objects", trees)
        except OSError:
            return False
        return True

    def _stored(self, top: str) -> bool:
        """Whether git has the tree `top`, and so every tree below it (git writes a tree
        after its children): a save that finds the same change again must not pack its
        trees again. Only the top is asked for: each missing object costs `cat-file` a
        rescan of the pack folder, which adds up over a thousand trees."""
        out = self.git("cat-file", "--batch-check=%(objectname)", stdin=f"{top}\n".encode())
        return not out.decode().rstrip().endswith(" missing")

    def commit_tree(self, tree: str, parents: list[str], message: str) -> str:
        """A new commit of `tree` on `parents`: written here as git would write it when
        the identity is plain (loose.commit_body), else by `git commit-tree`."""
        from . import loose

        body = loose.commit_body(self._config, tree, parents, message)
        if body is not None:
            with contextlib.suppress(OSError):  # (a read-only folder: git says so below)
                return loose.write_commit(self.common_dir / "objects", body)
        argv = ["commit-tree", tree]
        for parent in parents:
            argv += ["-p", parent]
        try:
            return self.git(*argv, stdin=message.encode()).decode().strip()
        except GitFailed as exc:
            if "identity" not in exc.stderr and "empty ident" not in exc.stderr:
                raise
        # No user.name/email configured: a checkpoint is still better than none.
        fallback = {
            "GIT_AUTHOR_NAME": os.environ.get("GIT_AUTHOR_NAME") or "git-checkpoint",
            "GIT_AUTHOR_EMAIL": os.environ.get("GIT_AUTHOR_EMAIL") or "git-checkpoint@localhost",
            "GIT_COMMITTER_NAME": os.environ.get("GIT_COMMITTER_NAME") or "git-checkpoint",
            "GIT_COMMITTER_EMAIL": os.environ.get("GIT_COMMITTER_EMAIL")
            or "git-checkpoint@localhost",
        }
        return self.git(*argv, stdin=message.encode(), env=fallback).decode().strip()

    def user_ident(self) -> str:
        proc = self.run(["var", "GIT_COMMITTER_IDENT"], check=False)
        ident = proc.stdout.decode(errors="replace").strip()
        return ident.rsplit(" ", 2)[0] if ident else "unknown"
