"""The command line: click parsing of every command.

Everything below this module returns data or raises a `CheckpointError`; console.py
turns results into terminal lines or one JSON object, and errors into one line on
stderr with the exit code design.md §7 gives them. The common forms of `save`,
`restore` and `undo` skip click (fastcli.py).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from .. import __version__
from ..core.interrupts import RestoreInterrupted
from ..fast.prescan import Prescan
from . import cli_setup, console
from . import fastcli as direct
from .cli_setup import json_option
from .cmdline import CommandLine
from .console import context, emit, fail, guarded, page, progress_printer, say_err, use_color

F = TypeVar("F", bound=Callable[..., Any])


class _Interrupted(BaseException):
    """A Ctrl-C, carried past click's own handler (which writes a blank line first)."""


class _ClosedPipe(BaseException):
    """A reader gone (`| head`), carried past click's EPIPE handler (which exits 1, and
    1 says "no" here): the boundary ends the command as a closed pipe, exit 0."""


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except KeyboardInterrupt as exc:
            raise _Interrupted from exc
        except BrokenPipeError as exc:
            raise _ClosedPipe from exc

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        try:  # (`git checkpoint -h | head -1`: the help is written while parsing)
            return super().make_context(info_name, args, parent, **extra)
        except BrokenPipeError as exc:
            raise _ClosedPipe from exc


def _no_pager(ctx: click.Context, param: click.Parameter, value: bool) -> None:
    if value:  # git's own way: what we run, git included, pages no more than we do
        os.environ["GIT_PAGER"] = "cat"


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="git-checkpoint")
@click.option(
    "-P",
    "--no-pager",
    is_flag=True,
    expose_value=False,
    callback=_no_pager,
    help="Print diff, show, log and review straight to the terminal, as git --no-pager.",
)
def cli() -> None:
    """Checkpoints for AI coding agents: save, verify, restore and share the workspace.

    On a terminal, diff, show, log and review go through the pager git would use
    (GIT_PAGER, core.pager, PAGER, less).
    """


@cli.command()
@click.option("-m", "--message", default="", help="What this checkpoint is for.")
@click.option("--task", help="Task name (default: the current branch).")
@click.option("--hypothesis", help="The current hypothesis; kept in the task record.")
@click.option("--next", "next_move", help="The next safe move; kept in the task record.")
@click.option("--include", multiple=True, help="Also capture this (ignored) path.")
@click.option("--auto", is_flag=True, help="Mark as saved automatically (hooks).")
@json_option
@click.pass_obj
def save(prescan: Prescan | None, /, **params: Any) -> int:
    """Save the workspace as the task's next checkpoint."""
    return direct.save(prescan=prescan, **params)


@cli.command(name="list")
@click.option("--task", help="Task name (default: the current branch).")
@click.option("--all", "all_tasks", is_flag=True, help="Every local task.")
@click.option("--remote", help="Checkpoints fetched from this remote.")
@click.option("--session", help="Only the checkpoints of this agent session (id or its start).")
@click.option("--sessions", "list_sessions", is_flag=True, help="The agent sessions recorded.")
@json_option
def list_(
    *,
    task: str | None,
    all_tasks: bool,
    remote: str | None,
    session: str | None,
    list_sessions: bool,
    as_json: bool,
) -> int:
    """List checkpoints: id, age, status, verifiers, overlay, message."""
    from ..app import list as cmd

    if list_sessions:
        return emit(cmd.sessions(context()), as_json)
    found = cmd.run(context(), task=task, all_tasks=all_tasks, remote=remote, session=session)
    return emit(found, as_json)


def terminal_progress() -> Callable[[str], None]:
    """Progress for push and fetch: on stderr, and only when it is a terminal."""
    if not (hasattr(sys.stderr, "isatty") and sys.stderr.isatty()):
        return lambda line: None
    return lambda line: say_err(f"{line}…")


@cli.command()
@click.argument("remote", default="origin")
@click.argument("checkpoints", nargs=-1)
@click.option("--task", "tasks", multiple=True, help="Push this task's checkpoints (repeatable).")
@click.option("--all", "all_tasks", is_flag=True, help="Every local task.")
@click.option("--as", "as_name", help="The task name to use on the remote (one task).")
@click.option("--allow-secrets", is_flag=True, help="Push even when the scan finds secrets.")
@json_option
def push(
    *,
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
    named. Unless checkpoints are named, the notes of checkpoints fetched from REMOTE
    (what this machine verified or promoted) go back too. Usage: git checkpoint push
    [REMOTE] [--task T…|--all|CP…] [--as NAME]
    """
    from ..app import push as cmd

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
@click.option("--prune", is_flag=True, help="Drop fetched checkpoints REMOTE no longer has.")
@json_option
def fetch(remote: str, prune: bool, as_json: bool) -> int:
    """Fetch REMOTE's checkpoints into REMOTE/<task>/cp_NNN and merge their notes."""
    from ..app import fetch as cmd

    return emit(cmd.run(context(), remote, progress=terminal_progress(), prune=prune), as_json)


@cli.command()
@click.argument("task", required=False)
@click.option(
    "--format", "fmt", type=click.Choice(["text", "markdown", "json", "html"]), default="text"
)
@click.option("-o", "--output", type=click.Path(dir_okay=False), help="Write it to this file.")
@json_option
def review(task: str | None, fmt: str, output: str | None, as_json: bool) -> int:
    """A task's timeline for a reviewer: TASK or REMOTE/TASK (default: the current task).

    markdown pastes into a pull request; html is one self-contained page (it loads
    nothing) with each checkpoint's evidence and patch.
    """
    from ..app import review as cmd

    ctx = context()
    result = cmd.run(ctx, task, fmt=fmt)
    if output is not None:
        return emit(cmd.write(result, output), as_json)
    page(ctx, as_json or fmt == "json")
    if as_json or fmt in ("json", "text"):
        return emit(result, as_json or fmt == "json")
    if sys.stdout is not None:  # as is: no terminal colour in a page or markdown
        sys.stdout.write(result.document())
    return 0


@cli.command()
@click.argument("checkpoint", default="@")
@json_option
def scan(checkpoint: str, as_json: bool) -> int:
    """Scan what a checkpoint stores for secrets (exit 1 when any is found)."""
    from ..app import scan as cmd

    return emit(cmd.run(context(), checkpoint), as_json)


@cli.command()
@click.argument("checkpoint", default="@")
@click.option("--manifest", "manifest_only", is_flag=True, help="Only the manifest.")
@click.option("--patch", is_flag=True, help="Include the patch against the base.")
@json_option
def show(checkpoint: str, manifest_only: bool, patch: bool, as_json: bool) -> int:
    """Show a checkpoint: manifest, status, verifiers, diffstat, overlay."""
    from ..app import show as cmd

    ctx = context()
    result = cmd.run(ctx, checkpoint, manifest_only=manifest_only, patch=patch)
    page(ctx, as_json)
    return emit(result, as_json)


@cli.command()
@click.argument("first", required=False)
@click.argument("second", required=False)
@click.option("--stat", is_flag=True, help="A diffstat instead of the patch.")
@click.option("--name-only", is_flag=True, help="Only the names of the changed files.")
@json_option
def diff(first: str | None, second: str | None, stat: bool, name_only: bool, as_json: bool) -> int:
    """Diff a checkpoint against the workspace, or two checkpoints (overlay included)."""
    from ..app import diff as cmd

    color = not as_json and use_color(sys.stdout)
    ctx = context()
    result = cmd.run(ctx, first, second, color=color, stat=stat, name_only=name_only)
    page(ctx, as_json)
    return emit(result, as_json)


@cli.command()
@click.argument("checkpoints", nargs=-1, required=True)
@json_option
def drop(checkpoints: tuple[str, ...], as_json: bool) -> int:
    """Delete checkpoints (each can be brought back with the printed command)."""
    from ..app import drop as cmd

    return emit(cmd.run(context(), list(checkpoints)), as_json)


@cli.command()
@click.option("--dry-run", is_flag=True, help="Say what would go; remove nothing.")
@click.option("--task", help="Task name (default: the current branch).")
@click.option("--all", "all_tasks", is_flag=True, help="Every local task.")
@json_option
def prune(dry_run: bool, task: str | None, all_tasks: bool, as_json: bool) -> int:
    """Apply the retention policy: remove old checkpoints nothing needs."""
    from ..app import prune as cmd

    return emit(cmd.run(context(), dry_run=dry_run, task=task, all_tasks=all_tasks), as_json)


@cli.command()
@click.option("-n", "--limit", type=click.IntRange(min=1), help="Show at most N entries.")
@json_option
def log(limit: int | None, as_json: bool) -> int:
    """The operation log, newest first."""
    from ..app import log as cmd

    ctx = context()
    result = cmd.run(ctx, limit=limit)
    page(ctx, as_json)
    return emit(result, as_json)


class _ThenPaths(click.Command):
    """`restore [CP] [OPTIONS] -- PATH…`: what follows `--` are paths, never the checkpoint."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if "--" in args:
            at = args.index("--")
            args, ctx.meta["paths"] = args[:at], tuple(args[at + 1 :])
        return super().parse_args(ctx, args)


@cli.command(cls=_ThenPaths)
@click.argument("checkpoint", required=False)
@click.option("--dry-run", is_flag=True, help="Print the plan; change nothing.")
@click.option("--move-head", is_flag=True, help="Move the branch back to the checkpoint's base.")
@click.option("--keep-head", is_flag=True, help="Restore files and index over the current HEAD.")
@click.option("--continue", "resume", is_flag=True, help="Finish an interrupted restore.")
@click.option(
    "--before-turn",
    type=click.IntRange(min=1),
    metavar="N",
    help="The workspace as it was before prompt N of an agent session.",
)
@click.option("--session", help="With --before-turn: the agent session (default: the latest).")
@json_option
@click.pass_obj
def restore(prescan: Prescan | None, /, **params: Any) -> int:
    """Make the workspace equal to a checkpoint (default: the latest), undoably; with
    `-- PATH…`, only those files and folders."""
    paths = click.get_current_context().meta.get("paths", ())
    if params["resume"] and (
        paths
        or any(
            params[k]
            for k in ("checkpoint", "dry_run", "move_head", "keep_head", "before_turn", "session")
        )
    ):
        raise click.UsageError("--continue takes no checkpoint and no other option")
    return direct.restore(prescan=prescan, paths=paths, **params)


@cli.command()
@click.option("--task", help="Undo the last restore of this task (default: the last one).")
@click.option("--move-head", is_flag=True, help="Move the branch back to where it was.")
@click.option("--keep-head", is_flag=True, help="Restore files and index over the current HEAD.")
@json_option
@click.pass_obj
def undo(prescan: Prescan | None, /, **params: Any) -> int:
    """Go back over the last restore made in this worktree (to its safety checkpoint)."""
    return direct.undo(prescan=prescan, **params)


@cli.command()
@click.argument("checkpoint", required=False)
@click.option("--verifier", "only", multiple=True, help="Run only this verifier (repeatable).")
@json_option
def verify(checkpoint: str | None, only: tuple[str, ...], as_json: bool) -> int:
    """Run the verifiers; promote or reject by the rule (exit 1 on failure).

    Without CHECKPOINT the workspace is saved (if changed) and verified in place; an
    older checkpoint is verified in a temporary worktree, never in the workspace.
    """
    from ..app import verify as cmd

    result = cmd.run(context(), checkpoint, only=only, progress=progress_printer(as_json))
    return emit(result, as_json)


@cli.command()
@click.argument("commit", default="HEAD")
@json_option
def evidence(commit: str, as_json: bool) -> int:
    """The verifier evidence for COMMIT's tree (default: HEAD), exit 1 when none.

    Found by tree: the checkpoints whose files are the commit's, so the evidence
    survives a rebase or a squash that keeps the tree.
    """
    from ..app import evidence as cmd

    return emit(cmd.evidence(context(), commit), as_json)


@cli.command()
@click.argument("good", required=False)
@click.argument("bad", required=False)
@click.option("--verifier", help="The verifier to follow (default: the first required one).")
@click.option("--task", help="Task name, when GOOD and BAD name none (default: the branch's).")
@json_option
def bisect(
    good: str | None, bad: str | None, verifier: str | None, task: str | None, as_json: bool
) -> int:
    """The first checkpoint of a task where a verifier started failing (exit 1: none).

    Recorded results are reused; the other checkpoints are verified in temporary
    worktrees and their results recorded. Default BAD: the latest failing checkpoint;
    GOOD: the last one passing before it, or the task's first.
    """
    from ..app import bisect as cmd

    progress = progress_printer(as_json)
    result = cmd.bisect(context(), good, bad, verifier=verifier, task=task, progress=progress)
    return emit(result, as_json)


@cli.command()
@click.argument("checkpoint")
@click.option("--force", is_flag=True, help="Promote without passing evidence.")
@click.option("--reason", help="Why (required with --force; recorded with your name).")
@json_option
def promote(checkpoint: str, force: bool, reason: str | None, as_json: bool) -> int:
    """Promote a checkpoint that has passing evidence."""
    from ..app import promote as cmd

    return emit(cmd.run(context(), checkpoint, force=force, reason=reason), as_json)


# The options before CMD (or `--`) are ours, the rest CMD's (entry/cmdline.py reads the
# same way).
@cli.command(context_settings={"allow_interspersed_args": False})
@click.option("--task", help="Task name (default: the current branch).")
@click.option("--attempts", default=3, show_default=True, type=click.IntRange(min=1))
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
@json_option
def run(task: str | None, attempts: int, command: tuple[str, ...], as_json: bool) -> int:
    """Save, run CMD, verify; promote, or roll back and try again.

    Usage: git checkpoint run [--task T] [--attempts N] [--json] -- CMD…
    """
    from ..app import run as cmd

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
    from ..app import status as cmd

    return emit(cmd.run(context(), task=task, exit_code=exit_code), as_json)


@cli.command()
@click.option("--task", help="Task name (default: the current branch).")
@json_option
def resume(task: str | None, as_json: bool) -> int:
    """A brief of the task record, for an agent picking the work up."""
    from ..app import resume as cmd

    return emit(cmd.run(context(), task=task), as_json)


@cli.command()
@click.argument("shell", type=click.Choice(["bash", "zsh"]))
@json_option
def completion(shell: str, as_json: bool) -> int:
    """Print the shell completion script for bash or zsh.

    bash: source it after git's completion, or save it as
    ~/.local/share/bash-completion/completions/git-checkpoint; zsh: save it as
    _git-checkpoint in a folder of your fpath.
    """
    from .completion import script_for

    result = script_for(cli, shell)
    if as_json:
        return emit(result, as_json)
    sys.stdout.write(result.script)  # as is: no status words coloured in shell code
    return 0


for command in (cli_setup.task, cli_setup.hooks, cli_setup.guard, cli_setup.demo):
    cli.add_command(command)
for command in (cli_setup.init, cli_setup.doctor, cli_setup.mcp, cli_setup.server):
    cli.add_command(command)


def main(cmdline: CommandLine | None = None, prescan: Prescan | None = None) -> None:
    """Run the CLI inside the one error boundary; the common forms of `save`, `restore`
    and `undo` without click's parsing (fastcli.py). `cmdline`: the command line read
    already (default: this process's); `prescan`: what the launcher started for it."""
    line = CommandLine(sys.argv[1:]) if cmdline is None else cmdline
    call = direct.parse(line)
    if call is not None:
        guarded(lambda: direct.run(call, prescan), call.as_json)
    as_json = line.as_json

    def body() -> int:
        try:
            code = cli.main(
                args=line.words, prog_name="git checkpoint", standalone_mode=False, obj=prescan
            )
        except _ClosedPipe:
            raise BrokenPipeError from None
        except (click.exceptions.Abort, _Interrupted) as exc:
            if isinstance(exc.__cause__, RestoreInterrupted):
                raise exc.__cause__ from None  # the boundary says which restore it left
            fail("git checkpoint: interrupted", console.interrupted_code(exc.__cause__), as_json)
        except click.exceptions.NoArgsIsHelpError as exc:
            exc.show()
            sys.exit(2)
        except click.ClickException as exc:
            click_ctx = getattr(exc, "ctx", None)
            command = click_ctx.command_path if click_ctx is not None else "git checkpoint"
            fail(f"{command}: {exc.format_message()} (see {command} -h)", 2, as_json)
        return code if isinstance(code, int) else 0

    guarded(body, as_json)
