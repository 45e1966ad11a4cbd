"""The commands that set the tool up and wrap others: `init`, `hooks`, `doctor`, `task
set`, `guard`, `demo` and `mcp`, as click commands that cli.py adds to its group."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any, TypeVar

import click

from .console import context, emit, progress_printer, say_err

F = TypeVar("F", bound=Callable[..., Any])


def json_option(fn: F) -> F:
    return click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")(fn)


def json_wanted(as_json: bool) -> bool:
    """`--json` given to the subcommand, or to its group before it (`hooks --json status`)."""
    parent = click.get_current_context().parent
    return as_json or bool(parent is not None and parent.params.get("as_json"))


@click.group()
@json_option
def task(as_json: bool) -> None:
    """The resumable task record."""


@task.command(name="set")
@click.option("--task", "name", help="Task name (default: the current branch).")
@click.option("--hypothesis", help="The current hypothesis.")
@click.option("--next", "next_move", help="The next safe move.")
@json_option
def task_set(name: str | None, hypothesis: str | None, next_move: str | None, as_json: bool) -> int:
    """Record the hypothesis and the next safe move."""
    from ..app import task as cmd

    if hypothesis is None and next_move is None:
        raise click.UsageError("give --hypothesis and/or --next")
    result = cmd.run(context(), task=name, hypothesis=hypothesis, next_move=next_move)
    return emit(result, json_wanted(as_json))


@click.group()
@json_option
def hooks(as_json: bool) -> None:
    """Hooks that save before risky operations: agents, git, the shell guard."""


def _hook_options(fn: F) -> F:
    agents = click.Choice(["claude-code", "gemini-cli", "codex", "cursor"])
    for option in reversed(
        [
            click.option("--agent", "agents", multiple=True, type=agents, help="An agent's hooks."),
            click.option("--git", is_flag=True, help="The git hooks of this repository."),
            click.option(
                "--trailers",
                is_flag=True,
                help="With --git: also prepare-commit-msg, which adds Checkpoint and "
                "Verified-by trailers to commits of verified trees (uninstall: it alone).",
            ),
            click.option("--shell", is_flag=True, help="The shell guard line for your rc file."),
            click.option("--local", is_flag=True, help="Claude Code: .claude/settings.local.json."),
            click.option("--user", is_flag=True, help="Your own settings (~/.claude/…)."),
            click.option(
                "--trust",
                is_flag=True,
                help="Codex: trust the project and our hooks in ~/.codex/config.toml, "
                "as /hooks does (install only).",
            ),
            json_option,
        ]
    ):
        fn = option(fn)
    return fn


def _hooks(action: str, as_json: bool, **flags: Any) -> int:
    from ..app import hooks as cmd

    return emit(cmd.run(action, **flags), json_wanted(as_json))


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


# The options before CMD (or `--`) are ours, the rest CMD's (entry/cmdline.py reads the
# same way).
@click.command(context_settings={"allow_interspersed_args": False})
@click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
@json_option
def guard(command: tuple[str, ...], as_json: bool) -> int:
    """Save first when CMD is risky, then run CMD (its stdin, exit code and signals).

    Usage: git checkpoint guard [--json] -- CMD… (one argument is a shell line: run by
    bash -c). --json: what the guard did is one JSON object on stdout, and CMD's
    standard output goes to stderr, as under `run --json`.
    """
    import signal

    from ..app import guard as cmd

    try:
        cwd = os.getcwd()
    except OSError:  # a folder deleted under us: CMD may still run
        cwd = os.environ.get("PWD", ".")
    plan = cmd.plan(list(command), cwd)
    if as_json:
        emit(plan, as_json)
    else:
        for line in plan.lines():
            say_err(f"git checkpoint: {line}")
    sys.stdout.flush()
    sys.stderr.flush()
    if as_json:
        os.dup2(2, 1)  # stdout holds our one JSON object; CMD's output goes beside the log
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


@click.command()
@click.option("--keep", is_flag=True, help="Keep the temporary repository and print its path.")
@json_option
def demo(keep: bool, as_json: bool) -> int:
    """Run the whole loop in a temporary repository and print the real log."""
    from ..app import demo as cmd

    return emit(cmd.run(keep=keep, log=progress_printer(as_json), quiet_stdout=as_json), as_json)


@click.command()
@click.option("--force", is_flag=True, help="Replace an existing file (a copy is kept).")
@click.option(
    "--hooks/--no-hooks",
    "install_hooks",
    default=None,
    help="Install the hooks, or not, without asking (off a terminal: never asked).",
)
@click.option(
    "--agent",
    "agents",
    multiple=True,
    type=click.Choice(["claude-code", "gemini-cli", "codex", "cursor"]),
    help="An agent whose hooks to install (default: those the project has a folder for).",
)
@json_option
def init(force: bool, install_hooks: bool | None, agents: tuple[str, ...], as_json: bool) -> int:
    """Write a commented .checkpoint.yaml at the work-tree root; offer to install hooks.

    The project's test command becomes the verifier when the root makes it plain. An
    existing .checkpoint.yaml is refused (exit 3); --force replaces it and keeps a copy
    in .git/checkpoint/init/.
    """
    from ..app import init as cmd

    def ask(command: str) -> bool:
        return click.confirm(f"install the hooks now ({command})?", default=False, err=True)

    terminal = all(s is not None and s.isatty() for s in (sys.stdin, sys.stdout))
    result = cmd.run(
        force=force,
        install_hooks=install_hooks,
        agents=agents,
        ask=ask if terminal and not as_json else None,
    )
    return emit(result, as_json)


@click.command()
@json_option
def doctor(as_json: bool) -> int:
    """Check the setup, then a save/restore/undo round trip in a temporary worktree."""
    from ..app import doctor as cmd

    return emit(cmd.run(), as_json)


@click.command()
@json_option
def mcp(as_json: bool) -> int:
    """Serve the commands as Model Context Protocol tools over stdio (extra: [mcp]).

    Its stdout carries JSON-RPC messages, so --json is refused in one JSON error object.
    """
    import importlib.util

    from ..core.errors import UsageError
    from ..install.installer import extra_hint

    if as_json:
        raise UsageError("mcp speaks JSON-RPC on stdin and stdout: --json does not apply")
    if importlib.util.find_spec("mcp") is None:
        raise UsageError(f"the MCP server needs the mcp extra: {extra_hint('mcp')}")
    try:
        from .mcp_server import serve
    except ImportError as exc:  # an mcp of another major version: not the extra's
        if not (exc.name or "").startswith("mcp"):
            raise
        raise UsageError(
            f"the MCP server needs the mcp extra ({exc}): {extra_hint('mcp')}"
        ) from None

    serve()
    return 0


@click.group(invoke_without_command=True)
@json_option
@click.pass_context
def server(click_ctx: click.Context, as_json: bool) -> int | None:
    """The command server: save, restore, undo and the hooks without Python's start.

    One process per installation keeps the tool imported and forks a worker for each
    command; it starts with the first such command and exits after 10 idle minutes.
    GIT_CHECKPOINT_SERVER=off runs every command in its own process.
    """
    if click_ctx.invoked_subcommand is not None:
        return None
    from ..app import server as cmd

    return emit(cmd.state(), as_json)


@server.command(name="status")
@json_option
def server_status(as_json: bool) -> int:
    """Whether the server runs, its pid and socket."""
    from ..app import server as cmd

    return emit(cmd.state(), json_wanted(as_json))


@server.command(name="stop")
@json_option
def server_stop(as_json: bool) -> int:
    """Stop the server (the commands it runs finish; the next one starts it again)."""
    from ..app import server as cmd

    return emit(cmd.stop(), json_wanted(as_json))
