"""`save`, `restore` and `undo` without click: the commands an agent runs most, and the
ones whose speed the benchmark holds to `git status`.

`parse` reads the common forms of their command lines, exactly as click would read them
(the tests compare the two), and gives up on anything else: help, --continue, `--`, an
unknown option, a value that starts with "-", a second argument. Those go to cli.py,
which says what click says. The bodies below serve both paths.
"""

from __future__ import annotations

from .cmdline import CommandLine
from .console import below_top, context, emit, from_cwd, slow_notice

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    from typing import Any

    from ..fast.prescan import Prescan

# option -> (the parameter it sets, whether it takes a value, whether it repeats)
_Spec = dict[str, tuple[str, bool, bool]]
_SAVE: _Spec = {
    "-m": ("message", True, False),
    "--message": ("message", True, False),
    "--task": ("task", True, False),
    "--hypothesis": ("hypothesis", True, False),
    "--next": ("next_move", True, False),
    "--include": ("include", True, True),
    "--auto": ("auto", False, False),
    "--json": ("as_json", False, False),
}
_RESTORE: _Spec = {
    "--dry-run": ("dry_run", False, False),
    "--move-head": ("move_head", False, False),
    "--keep-head": ("keep_head", False, False),
    "--before-turn": ("before_turn", True, False),
    "--session": ("session", True, False),
    "--json": ("as_json", False, False),
}
# Values click reads as whole numbers of at least 1 (anything else: click's to say).
_COUNTS = {"before_turn"}
_UNDO: _Spec = {
    "--task": ("task", True, False),
    "--move-head": ("move_head", False, False),
    "--keep-head": ("keep_head", False, False),
    "--json": ("as_json", False, False),
}
_DEFAULTS: dict[str, dict[str, Any]] = {
    "save": {
        "message": "",
        "task": None,
        "hypothesis": None,
        "next_move": None,
        "include": (),
        "auto": False,
        "as_json": False,
    },
    "restore": {
        "checkpoint": None,
        "dry_run": False,
        "move_head": False,
        "keep_head": False,
        "before_turn": None,
        "session": None,
        "as_json": False,
    },
    "undo": {"task": None, "move_head": False, "keep_head": False, "as_json": False},
}
_SPECS = {"save": _SAVE, "restore": _RESTORE, "undo": _UNDO}
_ARGUMENT = {"restore": "checkpoint"}  # the one optional argument a command takes


class Call:
    """A command this reader parsed: its name and its parameters, as click hands them
    to cli.py's command (a plain class: typing and dataclasses are not loaded yet)."""

    __slots__ = ("command", "params")

    def __init__(self, command: str, params: dict[str, Any]) -> None:
        self.command = command
        self.params = params

    def __repr__(self) -> str:
        return f"Call({self.command!r}, {self.params!r})"

    @property
    def as_json(self) -> bool:
        return self.params["as_json"] is True


def parse(cmdline: CommandLine) -> Call | None:
    """The command and its parameters, as click would parse the words after the
    program's name; None for whatever this reader leaves to click."""
    argv = cmdline.words
    if not argv or argv[0] not in _SPECS:
        return None
    command, words = argv[0], argv[1:]
    spec = _SPECS[command]
    params = dict(_DEFAULTS[command])
    argument = _ARGUMENT.get(command)
    given_argument = False
    i = 0
    while i < len(words):
        word = words[i]
        i += 1
        if not word.startswith("-") or word == "-":
            if argument is None or given_argument or word == "-":
                return None  # click: "Got unexpected extra argument" (or a literal "-")
            params[argument], given_argument = word, True
            continue
        name, eq, attached = word.partition("=") if word.startswith("--") else (word, "", "")
        if not eq and not word.startswith("--") and len(word) > 2:
            name, attached, eq = word[:2], word[2:], "="  # -mVALUE
        if name not in spec:
            return None  # --help, --continue, --, unknown options: click's to say
        param, takes_value, repeats = spec[name]
        if not takes_value:
            if eq:
                return None  # click: "Option does not take a value"
            params[param] = True
            continue
        if eq:
            value = attached
        elif i < len(words):
            value = words[i]
            i += 1
        else:
            return None  # click: "Option requires an argument"
        if value.startswith("-"):
            return None  # click would take it as the value; this reader does not guess
        if param in _COUNTS:
            if not (value.isascii() and value.isdigit()) or int(value) < 1:
                return None
            params[param] = int(value)
        elif repeats:
            params[param] = (*params[param], value)
        else:
            params[param] = value
    return Call(command, params)


def run(call: Call, prescan: Prescan | None = None) -> int:
    """Carry out a parsed command; its exit code. `prescan`: what the launcher started."""
    if call.command == "save":
        return save(prescan=prescan, **call.params)
    if call.command == "restore":
        return restore(resume=False, prescan=prescan, **call.params)
    return undo(prescan=prescan, **call.params)


def save(
    *,
    message: str,
    task: str | None,
    hypothesis: str | None,
    next_move: str | None,
    include: tuple[str, ...],
    auto: bool,
    as_json: bool,
    prescan: Prescan | None = None,
) -> int:
    import dataclasses

    from ..app import save as cmd

    ctx = context(tolerant=True, prescan=prescan)  # a broken config: the net stays on
    if include:
        # Like git pathspecs, --include paths are relative to the current folder.
        rooted = tuple(from_cwd(ctx.repo.root, p) for p in include)
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


def restore(
    *,
    checkpoint: str | None,
    dry_run: bool,
    move_head: bool,
    keep_head: bool,
    resume: bool,
    as_json: bool,
    prescan: Prescan | None = None,
    before_turn: int | None = None,
    session: str | None = None,
    paths: tuple[str, ...] = (),
) -> int:
    from ..app import restore as cmd

    ctx = context(tolerant=True, prescan=prescan)
    result = cmd.run(
        ctx,
        checkpoint,
        dry_run=dry_run,
        move_head=move_head,
        keep_head=keep_head,
        resume=resume,
        before_turn=before_turn,
        session=session,
        paths=tuple(below_top(ctx.repo.root, p) for p in paths),
    )
    return emit(result, as_json)


def undo(
    *,
    task: str | None,
    move_head: bool,
    keep_head: bool,
    as_json: bool,
    prescan: Prescan | None = None,
) -> int:
    from ..app import undo as cmd

    ctx = context(tolerant=True, prescan=prescan)
    result = cmd.run(ctx, task=task, move_head=move_head, keep_head=keep_head)
    return emit(result, as_json)
