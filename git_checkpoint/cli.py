"""The command line: click parsing, printing, and the one error boundary.

Everything below this module returns data or raises a `CheckpointError`; this module
turns results into terminal lines or one JSON object, and errors into one line on
stderr with the exit code design.md §7 gives them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import json
import os
import re
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, Protocol, TypeVar

import click

from . import __version__
from .errors import CheckpointError

if TYPE_CHECKING:
    from .context import Context

F = TypeVar("F", bound=Callable[..., Any])


class Result(Protocol):
    def lines(self) -> list[str]: ...


def use_color(stream: Any) -> bool:
    return "NO_COLOR" not in os.environ and hasattr(stream, "isatty") and stream.isatty()


_COLORS = {
    "passed": "green",
    "promoted": "green",
    "clean": "green",
    "failed": "red",
    "rejected": "red",
    "error": "red",
    "timeout": "red",
    "candidate": "yellow",
}
_WORDS = re.compile(r"\b(" + "|".join(_COLORS) + r")\b")


def colorize(line: str) -> str:
    return _WORDS.sub(lambda m: click.style(m.group(1), fg=_COLORS[m.group(1)]), line)


def to_jsonable(result: Any) -> Any:
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
        sys.stdout.write(json.dumps(to_jsonable(result), ensure_ascii=False, default=str) + "\n")
        return code if isinstance(code, int) else 0
    color = use_color(sys.stdout)
    for line in result.lines():
        click.echo(colorize(line) if color else line)
    return code if isinstance(code, int) else 0


def say_err(line: str) -> None:
    click.echo(line, err=True)


def progress_printer(as_json: bool) -> Callable[[str], None]:
    """Progress lines for long commands: stdout for people, stderr under --json."""
    stream = sys.stderr if as_json else sys.stdout
    color = use_color(stream)

    def say(line: str) -> None:
        click.echo(colorize(line) if color else line, err=as_json)
        stream.flush()

    return say


def _from_cwd(root: Path, path: str) -> str:
    """An --include path, given like a git pathspec (from the current folder), from the root."""
    from .config import include_problem
    from .errors import UsageError

    full = os.path.abspath(path) if path.strip() else ""
    rel = os.path.relpath(full, root).replace(os.sep, "/") if full else path
    problem = include_problem(rel)
    if problem:
        raise UsageError(f"--include {path}: {problem}")
    if not os.path.lexists(full):
        raise UsageError(f"--include {path}: no such file or folder")
    return rel + "/" if os.path.isdir(full) and not rel.endswith("/") else rel


def json_option(fn: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")(fn)


def context(*, tolerant: bool = False) -> Context:
    """The command's context; `tolerant` (restore, undo): a broken configuration is a
    warning and the defaults stand in, so a bad `.checkpoint.yaml` can be undone.
    """
    from .context import load_context
    from .journal import read_journal

    ctx = load_context(tolerant=tolerant)
    if ctx.config_problem:
        say_err(f"warning: {ctx.config_problem}; using the default settings")
    try:
        journal = read_journal(ctx.repo)
    except CheckpointError as exc:  # `undo` sets it aside; every command says so meanwhile
        say_err(f"warning: {exc}; `git checkpoint undo` goes back to before that restore")
        return ctx
    if journal is not None:
        from .state import lock_holder

        holder = lock_holder(ctx.repo)
        if holder is not None:
            say_err(f"note: a restore of {journal.target_name} is in progress (pid {holder})")
        else:
            say_err(
                f"warning: a restore of {journal.target_name} was interrupted; run "
                "`git checkpoint restore --continue` to finish it or `git checkpoint undo`"
            )
    return ctx


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="git-checkpoint")
def cli() -> None:
    """Checkpoints for AI coding agents: save, verify, restore and share the workspace."""


@cli.command()
@click.option("-m", "--message", default="", help="What this checkpoint is for.")
@click.option("--task", help="Task name (default: the current branch).")
@click.option("--hypothesis", help="The current hypothesis; kept in the task record.")
@click.option("--next", "next_move", help="The next safe move; kept in the task record.")
@click.option("--include", multiple=True, help="Also capture this (ignored) path.")
@click.option("--auto", is_flag=True, help="Mark as saved automatically (hooks).")
@json_option
def save(
    message: str,
    task: str | None,
    hypothesis: str | None,
    next_move: str | None,
    include: tuple[str, ...],
    auto: bool,
    as_json: bool,
) -> int:
    """Save the workspace as the task's next checkpoint."""
    from .commands import save as cmd

    ctx = context()
    if include:
        # Like git pathspecs, --include paths are relative to the current folder.
        rooted = tuple(_from_cwd(ctx.repo.root, p) for p in include)
        ctx = dataclasses.replace(ctx, config=ctx.config.with_include(rooted))
    with slow_notice("saving the workspace"):
        result = cmd.run(
            ctx,
            task=task,
            message=message,
            hypothesis=hypothesis,
            next_move=next_move,
            auto=auto,
        )
    return emit(result, as_json)


@contextlib.contextmanager
def slow_notice(doing: str, after: float = 1.0) -> Iterator[None]:
    """On a terminal, one line on stderr when `doing` takes longer than `after` seconds
    (a large work tree): the user sees why nothing happens yet. Never in pipes or JSON."""
    if not sys.stderr.isatty():
        yield
        return
    import threading

    start = time.monotonic()

    def say() -> None:
        click.echo(f"{doing}… ({time.monotonic() - start:.0f}s so far)", err=True)

    timer = threading.Timer(after, say)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


@cli.command(name="list")
@click.option("--task", help="Task name (default: the current branch).")
@click.option("--all", "all_tasks", is_flag=True, help="Every local task.")
@click.option("--remote", help="Checkpoints fetched from this remote.")
@json_option
def list_(task: str | None, all_tasks: bool, remote: str | None, as_json: bool) -> int:
    """List checkpoints: id, age, status, verifiers, overlay, message."""
    from .commands import list as cmd

    return emit(cmd.run(context(), task=task, all_tasks=all_tasks, remote=remote), as_json)


def terminal_progress() -> Callable[[str], None]:
    """Progress for push and fetch: on stderr, and only when it is a terminal."""
    if not (hasattr(sys.stderr, "isatty") and sys.stderr.isatty()):
        return lambda line: None
    return lambda line: click.echo(f"{line}…", err=True)


@cli.command()
@click.argument("remote", default="origin")
@click.argument("checkpoints", nargs=-1)
@click.option("--task", "tasks", multiple=True, help="Push this task's checkpoints (repeatable).")
@click.option("--all", "all_tasks", is_flag=True, help="Every local task.")
@click.option("--as", "as_name", help="The task name to use on the remote (one task).")
@click.option("--allow-secrets", is_flag=True, help="Push even when the scan finds secrets.")
@json_option
def push(
    remote: str,
    checkpoints: tuple[str, ...],
    tasks: tuple[str, ...],
    all_tasks: bool,
    as_name: str | None,
    allow_secrets: bool,
    as_json: bool,
) -> int:
    """Push checkpoints and their notes (default: the current task's) to REMOTE.

    Never overwrites a checkpoint on the remote; safety checkpoints stay local unless
    named. Usage: git checkpoint push [REMOTE] [--task T…|--all|CP…] [--as NAME]
    """
    from .commands import push as cmd

    result = cmd.run(
        context(),
        remote,
        names=checkpoints,
        tasks=tasks,
        all_tasks=all_tasks,
        as_name=as_name,
        allow_secrets=allow_secrets,
        progress=terminal_progress(),
    )
    return emit(result, as_json)


@cli.command()
@click.argument("remote", default="origin")
@json_option
def fetch(remote: str, as_json: bool) -> int:
    """Fetch REMOTE's checkpoints into REMOTE/<task>/cp_NNN and merge their notes."""
    from .commands import fetch as cmd

    return emit(cmd.run(context(), remote, progress=terminal_progress()), as_json)


@cli.command()
@click.argument("task", required=False)
@click.option("--format", "fmt", type=click.Choice(["text", "markdown", "json"]), default="text")
@json_option
def review(task: str | None, fmt: str, as_json: bool) -> int:
    """A task's timeline for a reviewer: TASK or REMOTE/TASK (default: the current task)."""
    from .commands import review as cmd

    return emit(cmd.run(context(), task, fmt=fmt), as_json or fmt == "json")


@cli.command()
@click.argument("checkpoint", default="@")
@json_option
def scan(checkpoint: str, as_json: bool) -> int:
    """Scan what a checkpoint stores for secrets (exit 1 when any is found)."""
    from .commands import scan as cmd

    return emit(cmd.run(context(), checkpoint), as_json)


@cli.command()
@click.argument("checkpoint", default="@")
@click.option("--manifest", "manifest_only", is_flag=True, help="Only the manifest.")
@click.option("--patch", is_flag=True, help="Include the patch against the base.")
@json_option
def show(checkpoint: str, manifest_only: bool, patch: bool, as_json: bool) -> int:
    """Show a checkpoint: manifest, status, verifiers, diffstat, overlay."""
    from .commands import show as cmd

    return emit(cmd.run(context(), checkpoint, manifest_only=manifest_only, patch=patch), as_json)


@cli.command()
@click.argument("first", required=False)
@click.argument("second", required=False)
@click.option("--stat", is_flag=True, help="A diffstat instead of the patch.")
@click.option("--name-only", is_flag=True, help="Only the names of the changed files.")
@json_option
def diff(first: str | None, second: str | None, stat: bool, name_only: bool, as_json: bool) -> int:
    """Diff a checkpoint against the workspace, or two checkpoints (overlay included)."""
    from .commands import diff as cmd

    color = not as_json and use_color(sys.stdout)
    result = cmd.run(context(), first, second, color=color, stat=stat, name_only=name_only)
    return emit(result, as_json)


@cli.command()
@click.argument("checkpoints", nargs=-1, required=True)
@json_option
def drop(checkpoints: tuple[str, ...], as_json: bool) -> int:
    """Delete checkpoints (each can be brought back with the printed command)."""
    from .commands import drop as cmd

    return emit(cmd.run(context(), list(checkpoints)), as_json)


@cli.command()
@click.option("--dry-run", is_flag=True, help="Say what would go; remove nothing.")
@click.option("--task", help="Task name (default: the current branch).")
@click.option("--all", "all_tasks", is_flag=True, help="Every local task.")
@json_option
def prune(dry_run: bool, task: str | None, all_tasks: bool, as_json: bool) -> int:
    """Apply the retention policy: remove old checkpoints nothing needs."""
    from .commands import prune as cmd

    return emit(cmd.run(context(), dry_run=dry_run, task=task, all_tasks=all_tasks), as_json)


@cli.command()
@click.option("-n", "--limit", type=click.IntRange(min=1), help="Show at most N entries.")
@json_option
def log(limit: int | None, as_json: bool) -> int:
    """The operation log, newest first."""
    from .commands import log as cmd

    return emit(cmd.run(context(), limit=limit), as_json)


@cli.command()
@click.argument("checkpoint", required=False)
@click.option("--dry-run", is_flag=True, help="Print the plan; change nothing.")
@click.option("--move-head", is_flag=True, help="Move the branch back to the checkpoint's base.")
@click.option("--keep-head", is_flag=True, help="Restore files and index over the current HEAD.")
@click.option("--continue", "resume", is_flag=True, help="Finish an interrupted restore.")
@json_option
def restore(
    checkpoint: str | None,
    dry_run: bool,
    move_head: bool,
    keep_head: bool,
    resume: bool,
    as_json: bool,
) -> int:
    """Make the workspace equal to a checkpoint (default: the latest), undoably."""
    from .commands import restore as cmd

    if resume and (checkpoint or dry_run or move_head or keep_head):
        raise click.UsageError("--continue takes no checkpoint and no other option")
    return emit(
        cmd.run(
            context(tolerant=True),
            checkpoint,
            dry_run=dry_run,
            move_head=move_head,
            keep_head=keep_head,
            resume=resume,
        ),
        as_json,
    )


@cli.command()
@click.option("--task", help="Undo the last restore of this task (default: the last one).")
@click.option("--move-head", is_flag=True, help="Move the branch back to where it was.")
@click.option("--keep-head", is_flag=True, help="Restore files and index over the current HEAD.")
@json_option
def undo(task: str | None, move_head: bool, keep_head: bool, as_json: bool) -> int:
    """Go back over the last restore made in this worktree (to its safety checkpoint)."""
    from .commands import undo as cmd

    return emit(
        cmd.run(context(tolerant=True), task=task, move_head=move_head, keep_head=keep_head),
        as_json,
    )


@cli.command()
@click.argument("checkpoint", required=False)
@click.option("--verifier", "only", multiple=True, help="Run only this verifier (repeatable).")
@json_option
def verify(checkpoint: str | None, only: tuple[str, ...], as_json: bool) -> int:
    """Run the verifiers; promote or reject by the rule (exit 1 on failure).

    Without CHECKPOINT the workspace is saved (if changed) and verified in place; an
    older checkpoint is verified in a temporary worktree, never in the workspace.
    """
    from .commands import verify as cmd

    result = cmd.run(context(), checkpoint, only=only, progress=progress_printer(as_json))
    return emit(result, as_json)


@cli.command()
@click.argument("checkpoint")
@click.option("--force", is_flag=True, help="Promote without passing evidence.")
@click.option("--reason", help="Why (required with --force; recorded with your name).")
@json_option
def promote(checkpoint: str, force: bool, reason: str | None, as_json: bool) -> int:
    """Promote a checkpoint that has passing evidence."""
    from .commands import promote as cmd

    return emit(cmd.run(context(), checkpoint, force=force, reason=reason), as_json)


@cli.command(context_settings={"ignore_unknown_options": True})
@click.option("--task", help="Task name (default: the current branch).")
@click.option("--attempts", default=3, show_default=True, type=click.IntRange(min=1))
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
@json_option
def run(task: str | None, attempts: int, command: tuple[str, ...], as_json: bool) -> int:
    """Save, run CMD, verify; promote, or roll back and try again.

    Usage: git checkpoint run [--task T] [--attempts N] -- CMD…
    """
    from .commands import run as cmd

    result = cmd.run(
        context(),
        task=task,
        attempts=attempts,
        argv=list(command),
        log=progress_printer(as_json),
        quiet_stdout=as_json,
    )
    return emit(result, as_json)


@cli.command()
@click.option("--task", help="Task name (default: the current branch).")
@click.option("--exit-code", is_flag=True, help="Exit 1 when the workspace drifted.")
@json_option
def status(task: str | None, exit_code: bool, as_json: bool) -> int:
    """Task, latest and last good checkpoint, drift, verifier results, next move."""
    from .commands import status as cmd

    return emit(cmd.run(context(), task=task, exit_code=exit_code), as_json)


@cli.command()
@click.option("--task", help="Task name (default: the current branch).")
@json_option
def resume(task: str | None, as_json: bool) -> int:
    """A brief of the task record, for an agent picking the work up."""
    from .commands import resume as cmd

    return emit(cmd.run(context(), task=task), as_json)


@cli.group()
def task() -> None:
    """The resumable task record."""


@task.command(name="set")
@click.option("--task", "name", help="Task name (default: the current branch).")
@click.option("--hypothesis", help="The current hypothesis.")
@click.option("--next", "next_move", help="The next safe move.")
@json_option
def task_set(name: str | None, hypothesis: str | None, next_move: str | None, as_json: bool) -> int:
    """Record the hypothesis and the next safe move."""
    from .commands import task as cmd

    if hypothesis is None and next_move is None:
        raise click.UsageError("give --hypothesis and/or --next")
    return emit(cmd.run(context(), task=name, hypothesis=hypothesis, next_move=next_move), as_json)


@cli.group()
def hooks() -> None:
    """Hooks that save before risky operations: agents, git, the shell guard."""


def _hook_options(fn: F) -> F:
    agents = click.Choice(["claude-code", "gemini-cli", "codex", "cursor"])
    for option in reversed(
        [
            click.option("--agent", "agents", multiple=True, type=agents, help="An agent's hooks."),
            click.option("--git", is_flag=True, help="The git hooks of this repository."),
            click.option("--shell", is_flag=True, help="The shell guard line for your rc file."),
            click.option("--local", is_flag=True, help="Claude Code: .claude/settings.local.json."),
            click.option("--user", is_flag=True, help="Your own settings (~/.claude/…)."),
            json_option,
        ]
    ):
        fn = option(fn)
    return fn


def _hooks(action: str, as_json: bool, **flags: Any) -> int:
    from .commands import hooks as cmd

    return emit(cmd.run(action, **flags), as_json)


@hooks.command(name="install")
@_hook_options
def hooks_install(as_json: bool, **flags: Any) -> int:
    """Install hooks beside the ones already there (repeat --agent for several)."""
    return _hooks("install", as_json, **flags)


@hooks.command(name="uninstall")
@_hook_options
def hooks_uninstall(as_json: bool, **flags: Any) -> int:
    """Take the hooks out again, putting back exactly what was there (default: all)."""
    return _hooks("uninstall", as_json, **flags)


@hooks.command(name="status")
@_hook_options
def hooks_status(as_json: bool, **flags: Any) -> int:
    """What is installed where, and whether it is current."""
    return _hooks("status", as_json, **flags)


@cli.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
def guard(command: tuple[str, ...]) -> int:
    """Save first when CMD is risky, then run CMD (its stdin, exit code and signals).

    Usage: git checkpoint guard -- CMD… (one argument is a shell line: run by bash -c)
    """
    import signal

    from .commands import guard as cmd

    try:
        cwd = os.getcwd()
    except OSError:  # a folder deleted under us: CMD may still run
        cwd = os.environ.get("PWD", ".")
    plan = cmd.plan(list(command), cwd)
    for line in plan.lines():
        say_err(f"git checkpoint: {line}")
    sys.stdout.flush()
    sys.stderr.flush()
    for name in ("SIGPIPE", "SIGXFSZ"):  # Python ignores these; CMD must not inherit that
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    try:
        os.execvp(plan.argv[0], plan.argv)
    except FileNotFoundError:
        say_err(f"git checkpoint guard: {plan.argv[0]}: command not found")
        return 127
    except OSError as exc:
        say_err(f"git checkpoint guard: {plan.argv[0]}: {exc.strerror}")
        return 126


@cli.command()
@click.option("--keep", is_flag=True, help="Keep the temporary repository and print its path.")
@json_option
def demo(keep: bool, as_json: bool) -> int:
    """Run the whole loop in a temporary repository and print the real log."""
    from .commands import demo as cmd

    return emit(cmd.run(keep=keep, log=progress_printer(as_json), quiet_stdout=as_json), as_json)


@cli.command()
@json_option
def doctor(as_json: bool) -> int:
    """Check the setup, then a save/restore/undo round trip in a temporary worktree."""
    from .commands import doctor as cmd

    return emit(cmd.run(), as_json)


@cli.command()
def mcp() -> int:
    """Serve the commands as Model Context Protocol tools over stdio (extra: [mcp])."""
    import importlib.util

    from .errors import UsageError

    if importlib.util.find_spec("mcp") is None:
        raise UsageError(
            "the MCP server needs the mcp extra: pip install 'git-checkpoint[mcp]' "
            f"(into {sys.prefix})"
        )
    from .mcp_server import serve

    serve()
    return 0


def _wants_json(argv: list[str] | None) -> bool:
    """Whether the command line asks for JSON (an agent's own `--json` after `--` does not)."""
    args = sys.argv[1:] if argv is None else argv
    return "--json" in (args[: args.index("--")] if "--" in args else args)


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


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the CLI inside the one error boundary."""
    debug = os.environ.get("GIT_CHECKPOINT_DEBUG") == "1"
    as_json = _wants_json(argv)

    def fail(line: str, code: int) -> NoReturn:
        """One line on stderr; under --json, one JSON object on stdout too."""
        say_err(line)
        if as_json:
            message = line.removeprefix("git checkpoint: ")
            sys.stdout.write(json.dumps({"error": message, "exit_code": code}) + "\n")
        sys.exit(code)

    try:
        code = cli.main(args=argv, prog_name="git checkpoint", standalone_mode=False)
    except click.exceptions.Abort:
        fail("git checkpoint: interrupted", 130)
    except click.exceptions.NoArgsIsHelpError as exc:
        exc.show()
        sys.exit(2)
    except click.ClickException as exc:
        click_ctx = getattr(exc, "ctx", None)
        command = click_ctx.command_path if click_ctx is not None else "git checkpoint"
        fail(f"{command}: {exc.format_message()} (see {command} -h)", 2)
    except CheckpointError as exc:
        if debug:
            raise
        fail(f"git checkpoint: {exc}", exc.exit_code)
    except KeyboardInterrupt:
        fail("git checkpoint: interrupted", 130)
    except BrokenPipeError:
        sys.exit(0)
    except OSError as exc:  # a file we could not read or write: permissions, a full disk
        if debug:
            raise
        fail(f"git checkpoint: {os_error_line(exc)}", 4)
    except Exception as exc:
        if debug:
            raise
        fail(
            f"git checkpoint: internal error: {type(exc).__name__}: {exc} "
            "(GIT_CHECKPOINT_DEBUG=1 shows the traceback)",
            4,
        )
    sys.exit(code if isinstance(code, int) else 0)


def entry() -> NoReturn:
    """The installed command: `main()`, then out without tearing the interpreter down
    (module finalizers cost 11 ms here and have nothing left to do: every file, lock,
    temporary folder and child is closed by then, and the output is flushed first)."""
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
        if isinstance(exc.code, str):
            say_err(exc.code)
    exit_now(code)


def exit_now(code: int) -> NoReturn:
    """Flush, then exit with `code`; output that cannot be written (a full disk) is a
    failure, unless nobody reads any more (a closed pipe: nothing left to say)."""
    from . import early

    early.discard()  # an early scan this command did not take: its children, its folder
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
    os._exit(code)
