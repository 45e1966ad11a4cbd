"""What every command prints and the one error boundary, without click.

`save`, `restore` and `undo` in their common forms run without loading click
(fastcli.py); the rest go through cli.py. Both print, load their context and fail
through here, so the two paths say the same things. The long outputs (`diff`, `show`,
`log`, `review`) go through the user's pager on a terminal, chosen as git chooses it.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from ..core.errors import CheckpointError
from ..core.interrupts import RestoreInterrupted, interrupt_once
from ..core.text import ERROR_WIDTH, follow_quote_path
from . import relay

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    import subprocess
    from typing import Any, NoReturn, Protocol

    from ..app.context import Context
    from ..fast.prescan import Prescan
    from ..gitcore.repo import Repo

    class Result(Protocol):
        def lines(self) -> list[str]: ...


def echo(line: str, err: bool = False) -> None:
    """One line on stdout (or stderr), flushed. Unlike click.echo, escape sequences are
    never stripped off a pipe: our colors go to terminals only (use_color), and what
    else carries them is content, such as a diff of a file that holds them (user text
    is made printable before it gets here: untrusted.printable)."""
    stream = sys.stderr if err else sys.stdout
    if stream is None:  # closed (`2>&-`): nothing to say it on
        return
    stream.write(line + "\n")
    stream.flush()


def _terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, OSError, ValueError):
        return False


def say_err(line: str) -> None:
    echo(line, err=True)


def use_color(stream: Any) -> bool:
    """Colour on a terminal, and on stdout into a pager (ours, or the one git started for
    `git -p checkpoint` or pager.checkpoint), as git colours into its pager."""
    if "NO_COLOR" in os.environ:
        return False
    return _terminal(stream) or (stream is sys.stdout and _pager_in_use())


# What git sets for its pager when the user has not (git's core default PAGER_ENV).
PAGER_ENV = {"LESS": "FRX", "LV": "-c"}
# The pager this process started (page): exit_now closes its pipe and waits for it.
_STARTED: list[subprocess.Popen[bytes]] = []


def _pager_in_use() -> bool:
    """GIT_PAGER_IN_USE, as git reads it: set by the git that started a pager (ours, or a
    parent's `git -p`), so that nothing under it starts a second."""
    from ..gitcore.formats import config_bool

    return config_bool(os.environ.get("GIT_PAGER_IN_USE", "false")) is True


def pager_command(repo: Repo) -> str | None:
    """The pager git would start for `git checkpoint` here (git's git_pager), None for
    none: only for a terminal, never under another pager; GIT_PAGER, else
    pager.checkpoint when it names a command, else core.pager, else PAGER, else less;
    `cat` or an empty one is none, and so is pager.checkpoint=false (as `git
    checkpoint` with it runs us with GIT_PAGER=cat, as `--no-pager` does)."""
    from ..gitcore.formats import config_bool

    if not _terminal(sys.stdout) or _pager_in_use():
        return None
    per_command = repo.config_value("pager.checkpoint")
    wanted = config_bool(per_command) if per_command is not None else None
    if wanted is False:
        return None
    command = os.environ.get("GIT_PAGER")
    if command is None:
        named = per_command if per_command is not None and wanted is None else None
        command = named if named is not None else repo.config_value("core.pager")
    if command is None:
        command = os.environ.get("PAGER", "less")
    return None if command in ("", "cat") else command


def page(ctx: Context, as_json: bool) -> None:
    """Send what this command prints from now on through the pager (pager_command), as
    git does for its own diff, show and log: the pager reads stdout, and stderr when
    that is the terminal too; exit_now waits for it. Nothing under --json."""
    import subprocess

    command = None if as_json else pager_command(ctx.repo)
    if command is None:
        return
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            stream.flush()
    env = {**PAGER_ENV, **os.environ}
    env.pop("GIT_PAGER_IN_USE", None)  # (git unsets it for the pager itself)
    try:
        pager = subprocess.Popen(command, shell=True, stdin=subprocess.PIPE, env=env)
    except OSError:  # no /bin/sh: the output comes as it would without a pager
        return
    assert pager.stdin is not None
    os.environ["GIT_PAGER_IN_USE"] = "true"  # for our children, as git sets it
    if _terminal(sys.stderr):
        os.dup2(pager.stdin.fileno(), 2)
    os.dup2(pager.stdin.fileno(), 1)
    pager.stdin.close()
    _STARTED.append(pager)


def _wait_for_pager() -> None:
    """End the pager's input and wait until the user leaves it (a Ctrl-C meanwhile is
    the pager's), so the shell gets the terminal back only then."""
    if not _STARTED:
        return
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    devnull = os.open(os.devnull, os.O_WRONLY)
    for fd in (1, 2):  # the pipe's last write ends: the pager sees the end
        os.dup2(devnull, fd)
    os.close(devnull)
    while _STARTED:
        _STARTED.pop().wait()


_COLORS = {
    "passed": 32,  # green
    "promoted": 32,
    "clean": 32,
    "failed": 31,  # red
    "rejected": 31,
    "error": 31,
    "timeout": 31,
    "candidate": 33,  # yellow
}
_WORDS = re.compile(r"\b(" + "|".join(_COLORS) + r")\b")


def colorize(line: str) -> str:
    """Status words in color (the bytes click.style writes for them)."""
    return _WORDS.sub(lambda m: f"\033[{_COLORS[m.group(1)]}m{m.group(1)}\033[0m", line)


def to_jsonable(result: Any) -> Any:
    import dataclasses

    if dataclasses.is_dataclass(result) and not isinstance(result, type):
        return dataclasses.asdict(result)
    return result


def emit(result: Result, as_json: bool) -> int:
    """Print a result; return the exit code it carries (0 unless it says otherwise)."""
    code = getattr(result, "exit_code", 0)
    warnings = getattr(result, "warnings", None)
    if callable(warnings):
        for line in warnings():
            say_err(f"warning: {line}")
    if as_json:
        import json

        if sys.stdout is not None:  # closed (`>&-`): the exit code says it all
            sys.stdout.write(json.dumps(to_jsonable(result), ensure_ascii=False, default=str))
            sys.stdout.write("\n")
        return code if isinstance(code, int) else 0
    color = use_color(sys.stdout)
    for line in result.lines():
        echo(colorize(line) if color else line)
    return code if isinstance(code, int) else 0


def progress_printer(as_json: bool) -> Callable[[str], None]:
    """Progress lines for long commands: stdout for people, stderr under --json."""
    stream = sys.stderr if as_json else sys.stdout
    color = use_color(stream)

    def say(line: str) -> None:
        echo(colorize(line) if color else line, err=as_json)

    return say


def context(*, tolerant: bool = False, prescan: Prescan | None = None) -> Context:
    """The command's context; `tolerant` (restore, undo): a broken configuration is a
    warning and the defaults stand in, so a bad `.checkpoint.yaml` can be undone.
    `prescan`: what the launcher started for this command.
    """
    from ..app.context import load_context
    from ..fast import quickstate

    ctx = load_context(tolerant=tolerant, prescan=prescan)
    follow_quote_path(ctx.repo.quotes_paths())
    ctx.repo.on_lock_wait.append(lambda line: say_err(f"note: {line}"))
    if ctx.config_problem:
        say_err(f"warning: {ctx.config_problem}; using the default settings")
    if quickstate.in_place_pending(ctx.repo):
        from ..storage.journal import in_place_left

        left = in_place_left(ctx.repo)
        if left is not None:  # (it names the way back of a journal it left too)
            say_err(f"warning: {left}")
            return ctx
    if not quickstate.journal_pending(ctx.repo):
        return ctx  # no restore under way (and the journal's module not needed)
    from ..storage.journal import read_journal

    try:
        journal = read_journal(ctx.repo)
    except CheckpointError as exc:  # `undo` sets it aside; every command says so meanwhile
        from ..restore.undo import past_an_unreadable_journal

        say_err(f"warning: {exc}; {past_an_unreadable_journal(ctx.repo)}")
        return ctx
    if journal is not None:
        from ..storage.lock import lock_holder, lock_path

        # A restore in progress (its lock held) is said when a command waits for it, at
        # that moment: said here, it would be stale by the time this command is done.
        # The lock this command took already (the launcher's) is no restore of another.
        ours = prescan is not None and prescan.holds_lock(str(lock_path(ctx.repo)))
        if ours or lock_holder(ctx.repo) is None:
            say_err(
                f"warning: a restore of {journal.target_name} was interrupted; run "
                "`git checkpoint restore --continue` to finish it or `git checkpoint undo`"
            )
    return ctx


def below_top(root: Path, path: str) -> str:
    """A path given as git takes pathspecs (from the current folder), from the top of the
    work tree; the current folder's own links are followed, the path's are not."""
    here = os.path.realpath(os.getcwd())
    full = os.path.normpath(os.path.join(here, path))
    return os.path.relpath(full, os.path.realpath(root)).replace(os.sep, "/")


def from_cwd(root: Path, path: str) -> str:
    """An --include path, given like a git pathspec (from the current folder), from the root."""
    from ..config.model import include_problem
    from ..core.errors import UsageError

    full = os.path.abspath(path) if path.strip() else ""
    rel = os.path.relpath(full, root).replace(os.sep, "/") if full else path
    problem = include_problem(rel)
    if problem:
        raise UsageError(f"--include {path}: {problem}")
    try:
        rel.encode("utf-8")  # the manifest names it, in YAML
    except UnicodeEncodeError:
        raise UsageError(
            f"--include {path!r}: not UTF-8; include the folder that holds it"
        ) from None
    if not os.path.lexists(full):
        raise UsageError(f"--include {path}: no such file or folder")
    return rel + "/" if os.path.isdir(full) and not rel.endswith("/") else rel


@contextlib.contextmanager
def slow_notice(doing: str, after: float = 1.0) -> Iterator[None]:
    """On a terminal, one line on stderr when `doing` takes longer than `after` seconds
    (a large work tree): the user sees why nothing happens yet. Never in pipes or JSON."""
    if not _terminal(sys.stderr):
        yield
        return
    import threading

    start = time.monotonic()

    def say() -> None:
        say_err(f"{doing}… ({time.monotonic() - start:.0f}s so far)")

    timer = threading.Timer(after, say)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


_OS_HINTS = {
    errno.EACCES: "check its permissions",
    errno.EPERM: "check its permissions, and `lsattr` for an immutable flag",
    errno.EROFS: "the file system is mounted read-only",
    errno.ENOSPC: "free some space and run it again",
    errno.EDQUOT: "the disk quota is used up",
}


def os_error_line(exc: OSError) -> str:
    """A failed file operation as one line: what failed, where, and what to look at."""
    names = [os.fsdecode(f) for f in (exc.filename, exc.filename2) if f is not None]
    where = " -> ".join(names)  # two for a copy or a rename
    what = exc.strerror or type(exc).__name__
    hint = _OS_HINTS.get(exc.errno or 0)
    return f"{where + ': ' if where else ''}{what}{f' ({hint})' if hint else ''}"


def fail(line: str, code: int, as_json: bool) -> NoReturn:
    """One line on stderr; under --json, one JSON object on stdout too. Each as far as
    it can be written (a full disk, a closed stream): the exit code is the answer."""
    if len(line) > ERROR_WIDTH:  # a path of any length named in it
        line = line[: ERROR_WIDTH - 1] + "…"
    with contextlib.suppress(OSError):
        say_err(line)
    if as_json and sys.stdout is not None:
        import json

        message = line.removeprefix("git checkpoint: ")
        with contextlib.suppress(OSError):
            sys.stdout.write(json.dumps({"error": message, "exit_code": code}) + "\n")
            sys.stdout.flush()
    sys.exit(code)


def interrupted_code(exc: BaseException | None) -> int:
    """128 + the signal that stopped us: 130 for a Ctrl-C, 143 for SIGTERM and 129 for
    SIGHUP (verify/procgroup.Stopped and RestoreInterrupted carry those)."""
    code = getattr(exc, "exit_code", None)
    return code if isinstance(code, int) else 130


def guarded(body: Callable[[], int], as_json: bool) -> NoReturn:
    """Run a command inside the one error boundary: every failure is one line and the
    exit code design.md §7 gives it (GIT_CHECKPOINT_DEBUG=1: the traceback instead)."""
    interrupt_once()
    debug = os.environ.get("GIT_CHECKPOINT_DEBUG") == "1"
    try:
        code = body()
    except CheckpointError as exc:
        if debug:
            raise
        fail(f"git checkpoint: {exc}", exc.exit_code, as_json)
    except RestoreInterrupted as exc:
        fail(
            f"git checkpoint: interrupted, the restore of {exc.target} half done: "
            "`git checkpoint restore --continue` finishes it, `git checkpoint undo` goes back",
            interrupted_code(exc),
            as_json,
        )
    except KeyboardInterrupt as exc:
        fail("git checkpoint: interrupted", interrupted_code(exc), as_json)
    except BrokenPipeError:
        sys.exit(0)
    except OSError as exc:  # a file we could not read or write: permissions, a full disk
        if debug:
            raise
        fail(f"git checkpoint: {os_error_line(exc)}", 4, as_json)
    except Exception as exc:
        if debug:
            raise
        fail(
            f"git checkpoint: internal error: {type(exc).__name__}: {exc} "
            "(GIT_CHECKPOINT_DEBUG=1 shows the traceback)",
            4,
            as_json,
        )
    sys.exit(code if isinstance(code, int) else 0)


def entry(main: Callable[[], None], cleanup: Callable[[], None] | None = None) -> NoReturn:
    """The installed command: `main()`, then `cleanup()` (the launcher's early scan, if
    the command did not take it), then out without tearing the interpreter down: module
    finalizers have nothing left to do (every file, lock, temporary folder and child is
    closed by then, and the output is flushed first)."""
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
        if isinstance(exc.code, str):
            say_err(exc.code)
    except KeyboardInterrupt as exc:  # the first Ctrl-C, just outside the error boundary
        code = _interrupted(exc)
    exit_now(code, cleanup)


def _interrupted(exc: KeyboardInterrupt) -> int:
    with contextlib.suppress(OSError, ValueError):
        say_err("git checkpoint: interrupted")
    return interrupted_code(exc)


def exit_now(code: int, cleanup: Callable[[], None] | None = None) -> NoReturn:
    """Flush, then exit with `code`; output that cannot be written (a full disk) is a
    failure, unless nobody reads any more (a closed pipe: nothing left to say)."""
    if cleanup is not None:
        try:
            cleanup()
        except KeyboardInterrupt as exc:  # the first Ctrl-C came as the command ended
            code = _interrupted(exc)
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except BrokenPipeError:
            pass
        except (OSError, ValueError) as exc:
            if stream is sys.stdout and code == 0:
                code = 4
                with contextlib.suppress(OSError, ValueError):
                    sys.stderr.write(f"git checkpoint: cannot write the output: {exc}\n")
                    sys.stderr.flush()
    _wait_for_pager()
    relay.exit_process(code)
