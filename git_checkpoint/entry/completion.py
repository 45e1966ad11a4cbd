"""Shell completion scripts, generated from the click commands so they never drift.

`git checkpoint completion bash|zsh` prints one (the copies the distribution ships in
`share/` are made so, and a test keeps them current). bash: `_git_checkpoint`,
which git's own completion calls for `git checkpoint <TAB>` (lazy-loaded by
bash-completion from `bash-completion/completions/git-checkpoint` in the user's data
dir). zsh: `_git-checkpoint`, which zsh's `_git` calls the same way. Both complete
subcommands, options, the values of options that take a choice, task names, checkpoint
names, remote names and agent session ids, each from git or the files git keeps, so a
completion never starts Python.
"""

from __future__ import annotations

from dataclasses import dataclass

import click

# Where the distribution ships each script, under the environment's prefix (the folders
# bash-completion and zsh search below a prefix on their own).
SHARED = {
    "bash": "share/bash-completion/completions/git-checkpoint",
    "zsh": "share/zsh/site-functions/_git-checkpoint",
}

# What a value names, by the argument's or the option's name: each kind has a word list
# made by the scripts (a choice's words are its own, written `=a,b,c`).
ARGUMENT_KINDS = {
    "checkpoint": "checkpoint",
    "checkpoints": "checkpoint",
    "first": "checkpoint",
    "second": "checkpoint",
    "target": "checkpoint",
    "good": "checkpoint",
    "bad": "checkpoint",
    "remote": "remote",
    "task": "task",
}
OPTION_KINDS = {"--task": "task", "--as": "task", "--remote": "remote", "--session": "session"}


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


def _kind(param: click.Parameter, by_name: str | None) -> str:
    """The kind of value `param` takes: a choice's words, or what its name names."""
    if isinstance(param.type, click.Choice):
        return "=" + ",".join(str(c) for c in param.type.choices)
    return by_name or ""


@dataclass(frozen=True)
class Shape:
    """What completion needs to know of one (sub)command."""

    flags: list[str]  # its long options
    valued: list[str]  # those that take a value
    values: dict[str, str]  # option -> the kind of its value (those completion can offer)
    arguments: list[str]  # the kind of each argument in turn; a last one ending in + repeats
    subs: list[str]  # its subcommands, for a group

    @property
    def checkpoints(self) -> bool:
        """Whether an argument names a checkpoint."""
        return any(a.rstrip("+") == "checkpoint" for a in self.arguments)


def describe(group: click.Group) -> dict[str, Shape]:
    """Per (sub)command: its options, which take a value and of what kind, and the kind
    of each of its arguments."""
    table: dict[str, Shape] = {}
    for name, command in _commands(group).items():
        flags: list[str] = []
        valued: list[str] = []
        values: dict[str, str] = {}
        arguments: list[str] = []
        for param in command.params:
            if isinstance(param, click.Option):
                longs = [o for o in param.opts + param.secondary_opts if o.startswith("--")]
                flags += longs
                if not param.is_flag and not param.count:
                    valued += longs
                    for option in longs:
                        kind = _kind(param, OPTION_KINDS.get(option))
                        if kind:
                            values[option] = kind
            elif isinstance(param, click.Argument):
                kind = _kind(param, ARGUMENT_KINDS.get(param.name or ""))
                arguments.append(kind + ("+" if param.nargs == -1 else ""))
        subs = sorted(command.commands) if isinstance(command, click.Group) else []
        table[name] = Shape(flags, valued, values, arguments, subs)
    return table


def _pairs(values: dict[str, str]) -> str:
    return " ".join(f"{option}:{kind}" for option, kind in values.items())


# The lists each kind completes from, as shell functions. Tasks: every local task with a
# checkpoint. Checkpoints: every checkpoint's name (task/cp_NNN, and REMOTE/task/cp_NNN
# for fetched ones), the bare cp_NNN of the task named after the current branch, then @
# and @~1. Sessions: the id in the first turn each recorded session's file holds
# (fast/turns.py).
TASKS = r"""	git for-each-ref --format='%(refname)' refs/checkpoints/ 2>/dev/null |
		sed -n -e '/^refs\/checkpoints\/remotes\//d' \
			-e 's|^refs/checkpoints/\(.*\)/cp_[0-9][0-9]*$|\1|p' | sort -u"""
NAMES = r"""	git for-each-ref --format='%(refname)' refs/checkpoints/ 2>/dev/null |
		sed -n -e 's|^refs/checkpoints/remotes/||p' -e 's|^refs/checkpoints/||p' |
		awk -v task="$(git symbolic-ref --short -q HEAD 2>/dev/null || echo detached)" '{
			print $0
			n = split($0, parts, "/"); id = parts[n]
			if (substr($0, 1, length($0) - length(id) - 1) == task) print id
		}'
	printf '%s\n' '@' '@~1'"""
REMOTES = "\tgit remote 2>/dev/null"
SESSIONS = r"""	local dir
	dir="$(git rev-parse --git-common-dir 2>/dev/null)" || return 0
	FILES
	awk 'FNR == 1 && match($0, /"session": "[^"]*"/) {
		print substr($0, RSTART + 12, RLENGTH - 13)
	}' FILES_ARGS 2>/dev/null | sort -u"""
# The session files: bash leaves a glob that matches nothing as it is (awk then finds no
# such file); zsh would fail on it, so it asks for none then.
BASH_FILES = ('[ -d "$dir/checkpoint/sessions" ] || return 0', '"$dir"/checkpoint/sessions/*.jsonl')
ZSH_FILES = (
    'local -a files; files=("$dir"/checkpoint/sessions/*.jsonl(N)); (( $#files )) || return 0',
    "$files",
)


def _lists(files: tuple[str, str]) -> dict[str, str]:
    sessions = SESSIONS.replace("FILES_ARGS", files[1]).replace("FILES", files[0])
    return {"tasks": TASKS, "names": NAMES, "remotes": REMOTES, "sessions": sessions}


BASH_HELPERS = r"""
# $1: the kind of value; the rest: __gitcomp_nl's prefix and current word, when given
__git_checkpoint_complete_kind ()
{
	local kind="$1" words
	shift
	case "$kind" in
	task) words="$(__git_checkpoint_tasks)" ;;
	checkpoint) words="$(__git_checkpoint_names)" ;;
	remote) words="$(__git_checkpoint_remotes)" ;;
	session) words="$(__git_checkpoint_sessions)" ;;
	=*) words="$(echo "${kind#=}" | tr ',' '\n')" ;;
	*) return ;;
	esac
	__gitcomp_nl "$words" "$@"
}

__git_checkpoint_kind_of ()
{
	local pair
	for pair in $2; do
		if [ "${pair%%:*}" = "$1" ]; then
			echo "${pair#*:}"
			return
		fi
	done
}
"""


def _bash_lists() -> list[str]:
    out = []
    for name, body in _lists(BASH_FILES).items():
        out += [f"__git_checkpoint_{name} ()", "{", body, "}", ""]
    return out


def _bash_shape(info: Shape, indent: str) -> str:
    return (
        f'{indent}flags="{" ".join(info.flags)}" valued="{" ".join(info.valued)}" '
        f'values="{_pairs(info.values)}" arguments="{" ".join(info.arguments)}" ;;'
    )


def bash_script(group: click.Group) -> str:
    table = describe(group)
    top = sorted(n for n in table if " " not in n)
    lines = [
        "# bash completion for git checkpoint (generated from its commands; do not edit)",
        "# git's completion calls _git_checkpoint for `git checkpoint <TAB>`.",
        "",
        *_bash_lists(),
        BASH_HELPERS.strip("\n"),
        "",
        "_git_checkpoint ()",
        "{",
        f'\tlocal subcommands="{" ".join(top)}"',
        '\tlocal subcommand="$(__git_find_on_cmdline "$subcommands")"',
        '\tif [ -z "$subcommand" ]; then',
        '\t\tcase "$cur" in',
        '\t\t-*) __gitcomp "--help --version --no-pager" ;;',
        '\t\t*) __gitcomp "$subcommands" ;;',
        "\t\tesac",
        "\t\treturn",
        "\tfi",
        # the word after which the command's own words begin: its name, or its subcommand's
        '\tlocal flags="" valued="" values="" arguments="" kind="" last="$subcommand"',
        '\tcase "$subcommand" in',
    ]
    for name in top:
        info = table[name]
        lines.append(f"\t{name})")
        if info.subs:
            subs = " ".join(info.subs)
            lines += [
                f'\t\tlast="$(__git_find_on_cmdline "{subs}")"',
                '\t\tif [ -z "$last" ]; then',
                '\t\t\tcase "$cur" in',
                f'\t\t\t-*) __gitcomp "{" ".join(info.flags)}" ;;',
                f'\t\t\t*) __gitcomp "{subs}" ;;',
                "\t\t\tesac",
                "\t\t\treturn",
                "\t\tfi",
                '\t\tcase "$last" in',
            ]
            for sub in info.subs:
                lines.append(_bash_shape(table[f"{name} {sub}"], f"\t\t{sub}) "))
            lines.append("\t\tesac ;;")
        else:
            lines.append(_bash_shape(info, "\t\t"))
    lines += [
        "\tesac",
        '\tcase "$cur" in',
        "\t--*=*)",
        '\t\tkind="$(__git_checkpoint_kind_of "${cur%%=*}" "$values")"',
        '\t\t__git_checkpoint_complete_kind "$kind" "" "${cur#*=}"',
        "\t\treturn ;;",
        '\t-*) __gitcomp "$flags"; return ;;',
        "\tesac",
        '\tcase " $valued " in',
        '\t*" $prev "*)',
        '\t\t__git_checkpoint_complete_kind "$(__git_checkpoint_kind_of "$prev" "$values")"',
        "\t\treturn ;;",
        "\tesac",
        # which argument the cursor is on: the words since the command's name that are
        # neither options nor an option's value
        '\tlocal i n=0 seen=""',
        "\tfor ((i = 1; i < cword; i++)); do",
        '\t\tif [ -z "$seen" ]; then',
        '\t\t\t[ "${words[i]}" = "$last" ] && seen=yes',
        "\t\t\tcontinue",
        "\t\tfi",
        '\t\tcase "${words[i]}" in',
        "\t\t--) ;;",
        "\t\t--*=*) ;;",
        '\t\t-*) case " $valued " in *" ${words[i]} "*) ((i++)) ;; esac ;;',
        "\t\t*) ((n++)) ;;",
        "\t\tesac",
        "\tdone",
        "\tfor kind in $arguments; do",
        '\t\tcase "$kind" in',
        "\t\t*+) break ;;",
        "\t\tesac",
        '\t\t[ "$n" -eq 0 ] && break',
        "\t\t((n--))",
        '\t\tkind=""',
        "\tdone",
        '\t__git_checkpoint_complete_kind "${kind%+}"',
        "}",
        "",
    ]
    return "\n".join(lines)


def _zsh_quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def _zsh_described(commands: dict[str, click.Command]) -> list[str]:
    described = []
    for name, command in commands.items():
        summary = (command.get_short_help_str(60) or name).replace(":", "\\:")
        described.append(f"    {_zsh_quote(f'{name}:{summary}')}")
    return described


def _zsh_shape(info: Shape) -> str:
    values = " ".join(_zsh_quote(f"{o}:{k}") for o, k in info.values.items())
    return (
        f"flags=({' '.join(info.flags)}); valued=({' '.join(info.valued)}); "
        f"values=({values}); arguments=({' '.join(_zsh_quote(a) for a in info.arguments)}) ;;"
    )


ZSH_BODY = r"""
local prev=$words[CURRENT-1] kind= pair i n=0
if [[ $PREFIX == --*=* ]]; then
  prev=${PREFIX%%=*}
  compset -P '*='
elif [[ $PREFIX == -* ]]; then
  compadd -a flags
  return
elif (( ! ${valued[(Ie)$prev]} )); then
  prev=
  for (( i = first; i < CURRENT; i++ )); do
    case $words[i] in
      (--|--*=*) ;;
      (-*) (( ${valued[(Ie)$words[i]]} )) && (( i++ )) ;;
      (*) (( n++ )) ;;
    esac
  done
  for kind in $arguments; do
    [[ $kind == *+ ]] && break
    (( n == 0 )) && break
    (( n-- ))
    kind=
  done
  kind=${kind%+}
fi
if [[ -n $prev ]]; then
  for pair in $values; do
    [[ ${pair%%:*} == $prev ]] && kind=${pair#*:}
  done
fi
case $kind in
  (task) names=(${(f)"$(__git_checkpoint_tasks)"}) ;;
  (checkpoint) names=(${(f)"$(__git_checkpoint_names)"}) ;;
  (remote) names=(${(f)"$(__git_checkpoint_remotes)"}) ;;
  (session) names=(${(f)"$(__git_checkpoint_sessions)"}) ;;
  ([=]*) names=(${(s:,:)${kind#=}}) ;;
  (*) return ;;
esac
compadd -a names
"""


def zsh_script(group: click.Group) -> str:
    table = describe(group)
    top = sorted(n for n in table if " " not in n)
    lists = []
    for name, body in _lists(ZSH_FILES).items():
        lists += [
            f"(( $+functions[__git_checkpoint_{name}] )) ||",
            f"__git_checkpoint_{name} () {{",
        ]
        lists += [body, "}"]
    groups = []
    cases = []
    for name in top:
        info = table[name]
        if info.subs:
            command = group.commands[name]
            assert isinstance(command, click.Group)
            subs = {s: command.commands[s] for s in info.subs}
            groups += [
                f"    ({name})",
                "      if (( CURRENT == 3 )); then",
                "        subs=(",
                *("  " + line for line in _zsh_described(subs)),
                "        )",
                f"        _describe -t commands {_zsh_quote(f'{name} command')} subs",
                "        return",
                "      fi",
                '      command="$words[2] $words[3]"; first=4 ;;',
            ]
            cases += [
                f"    ({_zsh_quote(f'{name} {sub}')}) {_zsh_shape(table[f'{name} {sub}'])}"
                for sub in info.subs
            ]
            cases.append(f"    ({name}) {_zsh_shape(info)}")
        else:
            cases.append(f"    ({name}) {_zsh_shape(info)}")
    return "\n".join(
        [
            "#compdef git-checkpoint",
            "# zsh completion for git checkpoint (generated from its commands; do not edit).",
            "# zsh's _git calls _git-checkpoint for `git checkpoint <TAB>`.",
            "",
            *lists,
            "",
            "local -a commands subs flags valued values arguments names",
            "while [[ $words[2] == (-P|--no-pager) ]]; do",  # git checkpoint -P show
            "  words[2]=()",
            "  (( CURRENT-- ))",
            "done",
            "local command=$words[2] first=3",
            "commands=(",
            *_zsh_described({n: group.commands[n] for n in top}),
            ")",
            "if (( CURRENT == 2 )); then",
            "  _describe -t commands 'git checkpoint command' commands",
            "  return",
            "fi",
            "case $command in",
            *groups,
            "esac",
            "case $command in",
            *cases,
            "esac",
            ZSH_BODY.lstrip("\n"),
        ]
    )


@dataclass(frozen=True)
class CompletionScript:
    """What `git checkpoint completion SHELL` prints (`--json`: both fields)."""

    shell: str
    script: str

    def lines(self) -> list[str]:
        return self.script.splitlines()


def script_for(group: click.Group, shell: str) -> CompletionScript:
    text = bash_script(group) if shell == "bash" else zsh_script(group)
    return CompletionScript(shell, text)
