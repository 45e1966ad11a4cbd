"""The man page `git-checkpoint.1`, generated from the click commands so it never drifts.

`python -m git_checkpoint.entry.manpage [FILE]` writes it. The distribution ships the copy
made so at `share/man/man1/git-checkpoint.1` (a test keeps it current), which every
installer puts in the environment's `share/man`, where `man` looks beside a `bin/` on
PATH; install.sh copies it beside the folder it links the command into.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .. import __version__

SHARED = "share/man/man1/git-checkpoint.1"  # in the distribution and the environment

EXIT_STATUS = (
    ("0", "done"),
    (
        "1",
        "the operation ran and its answer is no: a verifier failed, all attempts failed, "
        "drift found with status --exit-code, promotion without evidence",
    ),
    ("2", "bad usage or bad input: unknown checkpoint, bad .checkpoint.yaml"),
    (
        "3",
        "refused for safety: secrets, overlay over its limit, unsafe path, HEAD moved, "
        "lock held past its wait",
    ),
    ("4", "git failed underneath, with git's message"),
    (
        "128+N",
        "stopped by signal N: 130 after Ctrl-C, 143 after SIGTERM, 129 after SIGHUP "
        "(run stops its agent and all the agent started first)",
    ),
)

EXAMPLES = (
    ("git checkpoint init", "write a commented .checkpoint.yaml; offers to install the hooks"),
    ("git checkpoint save -m 'before the migration'", "save the workspace: cp_001"),
    ("git checkpoint diff --stat", "what changed since the latest checkpoint"),
    ("git checkpoint restore cp_001", "back to cp_001 (a safety checkpoint is taken first)"),
    ("git checkpoint undo", "changed your mind: back to before that restore"),
    ("git checkpoint verify", "run the verifiers on the workspace, saved first"),
    ("git checkpoint run --attempts 3 -- ./agent.sh", "the loop: attempt, verify, roll back"),
    ("git checkpoint prune --dry-run", "what the retention policy would remove"),
    ("git checkpoint doctor", "check the setup with a real round trip"),
)

ENVIRONMENT = (
    ("GIT_CHECKPOINT_DEBUG", "set to 1: show the traceback of an error"),
    ("NO_COLOR", "no colour, even on a terminal"),
    ("CHECKPOINT_TASK", "set by run for the agent's command: saves land in the loop's task"),
    ("GIT_CHECKPOINT_NOW", "a fixed clock (ISO 8601 time or epoch seconds), for tests only"),
)


def escape(text: str) -> str:
    """Text as roff reads it: backslashes and leading dots or quotes made literal."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    lines = []
    for line in text.splitlines():
        lines.append("\\&" + line if line.startswith((".", "'")) else line)
    return "\n".join(lines)


def _paragraphs(text: str) -> list[str]:
    blocks = [" ".join(b.split()) for b in click.unstyle(text or "").split("\n\n")]
    return [b for b in blocks if b]


def _commands(group: click.Group, prefix: str = "") -> list[tuple[str, click.Command]]:
    out: list[tuple[str, click.Command]] = []
    for name in sorted(group.commands):
        command = group.commands[name]
        if command.hidden:
            continue
        full = f"{prefix}{name}"
        if isinstance(command, click.Group):
            out += _commands(command, f"{full} ")
        else:
            out.append((full, command))
    return out


def _synopsis(ctx: click.Context, name: str, command: click.Command) -> str:
    pieces = command.collect_usage_pieces(ctx)
    return f"git checkpoint {name} {' '.join(pieces)}".rstrip()


def _option_rows(ctx: click.Context, command: click.Command) -> list[tuple[str, str]]:
    rows = []
    for param in command.get_params(ctx):
        if not isinstance(param, click.Option) or "--help" in param.opts:
            continue
        record = param.get_help_record(ctx)
        if record is not None:
            rows.append(record)
    return rows


def render(group: click.Group) -> str:
    """The whole page, in roff (man macros)."""
    root = click.Context(group, info_name="git checkpoint", **group.context_settings)
    out = [
        f'.TH GIT\\-CHECKPOINT 1 "" "git-checkpoint {__version__}" "Git Manual"',
        ".SH NAME",
        f"git\\-checkpoint \\- {escape(_paragraphs(group.help or '')[0])}",
        ".SH SYNOPSIS",
        ".B git checkpoint",
        "\\fICOMMAND\\fR [\\fIOPTIONS\\fR] [\\fB\\-\\-json\\fR]",
        ".br",
        ".B git checkpoint",
        "\\fB\\-h\\fR | \\fICOMMAND\\fR \\fB\\-h\\fR",
        ".SH DESCRIPTION",
        escape(
            "Saves the workspace (tracked files, the index and untracked files git does not "
            "ignore) as stash-shaped commits under refs/checkpoints/<task>/cp_NNN, restores it "
            "exactly after taking a safety checkpoint, runs verifiers and promotes a checkpoint "
            "only on their evidence, and keeps a resumable task record. Checkpoints are named "
            "cp_003 (current task), task/cp_003, a full ref, a commit id, or @ and @~1 (the "
            "latest and the one before). Every command takes --json and prints one JSON object; "
            "an error under --json is one object too, with error and exit_code."
        ),
        ".SH COMMANDS",
    ]
    for name, command in _commands(group):
        ctx = click.Context(command, info_name=name, parent=root)
        out += [".TP", f"\\fB{escape(_synopsis(ctx, name, command))}\\fR"]
        paragraphs = _paragraphs(command.help or command.short_help or "")
        out.append(escape(paragraphs[0]) if paragraphs else "")
        for paragraph in paragraphs[1:]:
            out += [".IP", escape(paragraph)]
        for flags, text in _option_rows(ctx, command):
            out += [".RS", ".TP", f"\\fB{escape(flags)}\\fR", escape(" ".join(text.split())), ".RE"]
    out.append(".SH EXAMPLES")
    for example, text in EXAMPLES:
        out += [".TP", f"\\fB{escape(example)}\\fR", escape(text)]
    out.append(".SH EXIT STATUS")
    for code, text in EXIT_STATUS:
        out += [".TP", f"\\fB{code}\\fR", escape(text)]
    out.append(".SH ENVIRONMENT")
    for name, text in ENVIRONMENT:
        out += [".TP", f"\\fB{name}\\fR", escape(text)]
    out += [
        ".SH FILES",
        ".TP",
        "\\fB.checkpoint.yaml\\fR",
        escape(
            "project configuration: untracked include/exclude, verifiers, promotion_rule, "
            "retention, limits, secrets, hooks (git checkpoint init writes a commented one)"
        ),
        ".TP",
        "\\fB$GIT_DIR/checkpoint/\\fR",
        escape("local state: the operation log, task records, the lock, the restore journal"),
        ".SH SEE ALSO",
        "\\fBgit\\-stash\\fR(1), \\fBgit\\-notes\\fR(1), \\fBgit\\-worktree\\fR(1)",
        "",
    ]
    return "\n".join(out)


def main(argv: list[str] | None = None) -> None:
    from .cli import cli

    args = sys.argv[1:] if argv is None else argv
    page = render(cli)
    if args:
        target = Path(args[0])
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(page, encoding="utf-8")
    else:
        sys.stdout.write(page)


if __name__ == "__main__":
    main()
