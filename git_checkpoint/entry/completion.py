"""Shell completion scripts, generated from the click commands so they never drift.

`python -m git_checkpoint.completion bash|zsh [FILE]` writes one. bash: `_git_checkpoint`,
which git's own completion calls for `git checkpoint <TAB>` (lazy-loaded by
bash-completion from `bash-completion/completions/git-checkpoint` in the user's data
dir). zsh: `_git-checkpoint`, which zsh's `_git` calls the same way. Both complete
subcommands, options, task names and checkpoint names from `git for-each-ref`, so a
completion never starts Python.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import click

# Arguments that name a checkpoint, and options whose value is a task.
CHECKPOINT_ARGS = {"checkpoint", "checkpoints", "first", "second", "target"}
TASK_OPTIONS = {"--task", "--as"}


def _commands(group: click.Group, prefix: str = "") -> dict[str, click.Command]:
    out: dict[str, click.Command] = {}
    for name in sorted(group.commands):
        command = group.commands[name]
        if command.hidden:
            continue
        if isinstance(command, click.Group):
            out[f"{prefix}{name}"] = command
            out.update(_commands(command, f"{prefix}{name} "))
        else:
            out[f"{prefix}{name}"] = command
    return out


@dataclass(frozen=True)
class Shape:
    """What completion needs to know of one (sub)command."""

    flags: list[str]  # its long options
    valued: list[str]  # those that take a value
    checkpoints: bool  # whether its arguments name checkpoints
    subs: list[str]  # its subcommands, for a group


def describe(group: click.Group) -> dict[str, Shape]:
    """Per (sub)command: its options, which take a value, whether it takes checkpoints."""
    table: dict[str, Shape] = {}
    for name, command in _commands(group).items():
        flags, valued = [], []
        for param in command.params:
            if isinstance(param, click.Option):
                longs = [o for o in param.opts + param.secondary_opts if o.startswith("--")]
                flags += longs
                if not param.is_flag and not param.count:
                    valued += longs
        takes_cp = any(
            isinstance(p, click.Argument) and p.name in CHECKPOINT_ARGS for p in command.params
        )
        subs = sorted(command.commands) if isinstance(command, click.Group) else []
        table[name] = Shape(flags, valued, takes_cp, subs)
    return table


BASH_HELPERS = r"""
__git_checkpoint_tasks ()
{
	git for-each-ref --format='%(refname)' refs/checkpoints/ 2>/dev/null |
		sed -n -e '/^refs\/checkpoints\/remotes\//d' \
			-e 's|^refs/checkpoints/\(.*\)/cp_[0-9][0-9]*$|\1|p' | sort -u
}

__git_checkpoint_names ()
{
NAMES
}
"""

# Every checkpoint's name (task/cp_NNN, and REMOTE/task/cp_NNN for fetched ones), the bare
# cp_NNN of the task named after the current branch, then @ and @~1.
NAMES = r"""	git for-each-ref --format='%(refname)' refs/checkpoints/ 2>/dev/null |
		sed -n -e 's|^refs/checkpoints/remotes/||p' -e 's|^refs/checkpoints/||p' |
		awk -v task="$(git symbolic-ref --short -q HEAD 2>/dev/null || echo detached)" '{
			print $0
			n = split($0, parts, "/"); id = parts[n]
			if (substr($0, 1, length($0) - length(id) - 1) == task) print id
		}'
	printf '%s\n' '@' '@~1'"""


def bash_script(group: click.Group) -> str:
    table = describe(group)
    top = sorted(n for n in table if " " not in n)
    lines = [
        "# bash completion for git checkpoint (generated from its commands; do not edit)",
        "# git's completion calls _git_checkpoint for `git checkpoint <TAB>`.",
        BASH_HELPERS.replace("NAMES", NAMES),
        "_git_checkpoint ()",
        "{",
        f'\tlocal subcommands="{" ".join(top)}"',
        '\tlocal subcommand="$(__git_find_on_cmdline "$subcommands")"',
        '\tif [ -z "$subcommand" ]; then',
        '\t\tcase "$cur" in',
        '\t\t-*) __gitcomp "--help --version" ;;',
        '\t\t*) __gitcomp "$subcommands" ;;',
        "\t\tesac",
        "\t\treturn",
        "\tfi",
        '\tlocal flags="" valued="" checkpoints=""',
        '\tcase "$subcommand" in',
    ]
    for name in top:
        info = table[name]
        subs = info.subs
        lines.append(f"\t{name})")
        if subs:
            lines += [
                f'\t\tlocal sub="$(__git_find_on_cmdline "{" ".join(subs)}")"',
                '\t\tif [ -z "$sub" ]; then __gitcomp "' + " ".join(subs) + '"; return; fi',
                '\t\tcase "$sub" in',
            ]
            for sub in subs:
                sub_info = table[f"{name} {sub}"]
                lines.append(
                    f'\t\t{sub}) flags="{" ".join(sub_info.flags)}" '
                    f'valued="{" ".join(sub_info.valued)}" ;;'
                )
            lines.append("\t\tesac ;;")
        else:
            lines.append(
                f'\t\tflags="{" ".join(info.flags)}" valued="{" ".join(info.valued)}" '
                f'checkpoints="{"yes" if info.checkpoints else ""}" ;;'
            )
    tasks = " ".join(sorted(TASK_OPTIONS))
    lines += [
        "\tesac",
        '\tcase "$cur" in',
        "\t--*=*)",
        '\t\tcase "${cur%%=*}" in',
        f"\t\t{tasks.replace(' ', '|')})",
        '\t\t\t__gitcomp_nl "$(__git_checkpoint_tasks)" "" "${cur#*=}" ;;',
        "\t\tesac",
        "\t\treturn ;;",
        '\t-*) __gitcomp "$flags"; return ;;',
        "\tesac",
        '\tcase " $valued " in',
        '\t*" $prev "*)',
        '\t\tcase "$prev" in',
        f'\t\t{tasks.replace(" ", "|")}) __gitcomp_nl "$(__git_checkpoint_tasks)" ;;',
        "\t\tesac",
        "\t\treturn ;;",
        "\tesac",
        '\tif [ -n "$checkpoints" ]; then',
        '\t\t__gitcomp_nl "$(__git_checkpoint_names)"',
        "\tfi",
        "}",
        "",
    ]
    return "\n".join(lines)


def zsh_script(group: click.Group) -> str:
    table = describe(group)
    top = sorted(n for n in table if " " not in n)
    described = []
    for name in top:
        command = group.commands[name]
        summary = (command.get_short_help_str(60) or name).replace("'", "'\\''").replace(":", "\\:")
        described.append(f"    '{name}:{summary}'")
    cases = []
    for name in top:
        info = table[name]
        flags = " ".join(info.flags)
        mark = "1" if info.checkpoints else ""
        cases.append(f"    ({name}) flags=({flags}); checkpoints={mark} ;;")
    return "\n".join(
        [
            "#compdef git-checkpoint",
            "# zsh completion for git checkpoint (generated from its commands; do not edit).",
            "# zsh's _git calls _git-checkpoint for `git checkpoint <TAB>`.",
            "",
            "local -a commands flags names",
            "local checkpoints",
            "commands=(",
            *described,
            ")",
            "if (( CURRENT == 2 )); then",
            "  _describe -t commands 'git checkpoint command' commands",
            "  return",
            "fi",
            "case $words[2] in",
            *cases,
            "esac",
            "if [[ $words[CURRENT-1] == --task || $words[CURRENT-1] == --as ]]; then",
            "  names=(${(f)\"$(git for-each-ref --format='%(refname)' refs/checkpoints/ 2>/dev/null"
            " | sed -n -e '/^refs\\/checkpoints\\/remotes\\//d'"
            " -e 's|^refs/checkpoints/\\(.*\\)/cp_[0-9]*$|\\1|p' | sort -u)\"})",
            "  compadd -a names",
            "elif [[ $PREFIX == -* ]]; then",
            "  compadd -a flags",
            "elif [[ -n $checkpoints ]]; then",
            '  names=(${(f)"$(',
            NAMES,
            ')"})',
            "  compadd -a names",
            "fi",
            "",
        ]
    )


def main(argv: list[str] | None = None) -> None:
    from .cli import cli

    args = sys.argv[1:] if argv is None else argv
    if not args or args[0] not in ("bash", "zsh"):
        sys.stderr.write("usage: python -m git_checkpoint.completion bash|zsh [FILE]\n")
        sys.exit(2)
    text = bash_script(cli) if args[0] == "bash" else zsh_script(cli)
    if len(args) > 1:
        target = Path(args[1])
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
