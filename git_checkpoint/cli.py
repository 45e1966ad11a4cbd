"""The command line: click parsing, printing, and the one error boundary.

Everything below this module returns data or raises a `CheckpointError`; this module
turns results into terminal lines or one JSON object, and errors into one line on
stderr with the exit code design.md §7 gives them.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import sys
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

import click

from . import __version__
from .errors import CheckpointError

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


def emit(result: Result, as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps(to_jsonable(result), ensure_ascii=False, default=str) + "\n")
        return
    warnings = getattr(result, "warnings", None)
    if callable(warnings):
        for line in warnings():
            say_err(f"warning: {line}")
    color = use_color(sys.stdout)
    for line in result.lines():
        click.echo(colorize(line) if color else line)


def say_err(line: str) -> None:
    click.echo(line, err=True)


def progress(line: str) -> None:
    """Progress lines for long commands: stdout for people, stderr under --json."""
    click.echo(colorize(line) if use_color(sys.stdout) else line)


def json_option(fn: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")(fn)


def context() -> Any:
    from .context import load_context
    from .restore import read_journal

    ctx = load_context()
    journal = read_journal(ctx.repo)
    if journal is not None:
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
) -> None:
    """Save the workspace as the task's next checkpoint."""
    from .commands import save as cmd

    ctx = context()
    if include:
        ctx = dataclasses.replace(ctx, config=ctx.config.with_include(include))
    emit(
        cmd.run(
            ctx,
            task=task,
            message=message,
            hypothesis=hypothesis,
            next_move=next_move,
            auto=auto,
        ),
        as_json,
    )


@cli.command(name="list")
@click.option("--task", help="Task name (default: the current branch).")
@click.option("--all", "all_tasks", is_flag=True, help="Every local task.")
@click.option("--remote", help="Checkpoints fetched from this remote.")
@json_option
def list_(task: str | None, all_tasks: bool, remote: str | None, as_json: bool) -> None:
    """List checkpoints: id, age, status, verifiers, overlay, message."""
    from .commands import list as cmd

    emit(cmd.run(context(), task=task, all_tasks=all_tasks, remote=remote), as_json)


@cli.command()
@click.argument("checkpoint", default="@")
@click.option("--manifest", "manifest_only", is_flag=True, help="Only the manifest.")
@click.option("--patch", is_flag=True, help="Include the patch against the base.")
@json_option
def show(checkpoint: str, manifest_only: bool, patch: bool, as_json: bool) -> None:
    """Show a checkpoint: manifest, status, verifiers, diffstat, overlay."""
    from .commands import show as cmd

    emit(cmd.run(context(), checkpoint, manifest_only=manifest_only, patch=patch), as_json)


@cli.command()
@click.argument("first", required=False)
@click.argument("second", required=False)
@json_option
def diff(first: str | None, second: str | None, as_json: bool) -> None:
    """Diff a checkpoint against the workspace, or two checkpoints (overlay included)."""
    from .commands import diff as cmd

    color = not as_json and use_color(sys.stdout)
    emit(cmd.run(context(), first, second, color=color), as_json)


@cli.command()
@click.argument("checkpoints", nargs=-1, required=True)
@json_option
def drop(checkpoints: tuple[str, ...], as_json: bool) -> None:
    """Delete checkpoints (each can be brought back with the printed command)."""
    from .commands import drop as cmd

    emit(cmd.run(context(), list(checkpoints)), as_json)


@cli.command()
@click.option("-n", "--limit", type=click.IntRange(min=1), help="Show at most N entries.")
@json_option
def log(limit: int | None, as_json: bool) -> None:
    """The operation log, newest first."""
    from .commands import log as cmd

    emit(cmd.run(context(), limit=limit), as_json)


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
) -> None:
    """Make the workspace equal to a checkpoint (default: the latest), undoably."""
    from .commands import restore as cmd

    if resume and (checkpoint or dry_run or move_head or keep_head):
        raise click.UsageError("--continue takes no checkpoint and no other option")
    emit(
        cmd.run(
            context(),
            checkpoint,
            dry_run=dry_run,
            move_head=move_head,
            keep_head=keep_head,
            resume=resume,
        ),
        as_json,
    )


@cli.command()
@json_option
def undo(as_json: bool) -> None:
    """Restore the latest safety checkpoint: the undo of the last restore."""
    from .commands import undo as cmd

    emit(cmd.run(context()), as_json)


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the CLI inside the one error boundary."""
    debug = os.environ.get("GIT_CHECKPOINT_DEBUG") == "1"
    try:
        code = cli.main(args=argv, prog_name="git checkpoint", standalone_mode=False)
    except click.exceptions.Abort:
        say_err("git checkpoint: interrupted")
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(2)
    except CheckpointError as exc:
        if debug:
            raise
        say_err(f"git checkpoint: {exc}")
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        say_err("git checkpoint: interrupted")
        sys.exit(130)
    except BrokenPipeError:
        sys.exit(0)
    except Exception as exc:
        if debug:
            raise
        say_err(f"git checkpoint: internal error: {type(exc).__name__}: {exc}")
        say_err("  (run with GIT_CHECKPOINT_DEBUG=1 for the traceback)")
        sys.exit(4)
    sys.exit(code if isinstance(code, int) else 0)
