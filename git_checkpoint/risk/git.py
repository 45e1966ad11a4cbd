"""Which git commands can lose uncommitted work: the discarding forms, subcommand by subcommand.

Git runs no hook before `reset --hard`, `checkout -- …`, `restore` or `clean` overwrite or
delete, so the classifier has to know them. Reading commands, and commands git itself
refuses to run over local changes (`checkout BRANCH`, `switch`), are harmless.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported on the hook path
if TYPE_CHECKING:
    from collections.abc import Callable

    from .context import Ctx


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


def _options(args: list[str], with_value: str = "") -> tuple[dict[str, str], list[str]]:
    from .tables import options

    return options(args, _set(with_value))


_GLOBAL_WITH_VALUE = _set(
    "-C -c --git-dir --work-tree --namespace --config-env --super-prefix --exec-path"
)
_READING = _set(
    """status diff log show blame annotate branch fetch remote config rev-parse rev-list
    ls-files ls-tree ls-remote cat-file describe shortlog grep tag reflog help version
    whatchanged show-ref show-branch for-each-ref merge-base name-rev cherry range-diff
    diff-tree diff-files diff-index count-objects fsck verify-commit verify-tag var
    check-ignore check-attr check-ref-format hash-object add stage commit push init clone
    notes format-patch archive bundle gc maintenance prune repack pack-refs fast-export
    difftool request-pull send-email credential instaweb rerere patch-id mailinfo mailsplit
    write-tree commit-tree mktree mktag merge-tree interpret-trailers stripspace column
    fmt-merge-msg get-tar-commit-id show-index verify-pack unpack-objects checkpoint gui
    citool gitk"""
)
_ALWAYS = {
    "pull": "git pull merges into the work tree",
    "read-tree": "git read-tree replaces the index",
    "checkout-index": "git checkout-index writes files",
    "filter-branch": "git filter-branch rewrites history and files",
    "filter-repo": "git filter-repo rewrites history and files",
    "mergetool": "git mergetool rewrites conflicted files",
    "update-ref": "git update-ref moves a branch under the work tree",
    "symbolic-ref": "git symbolic-ref moves HEAD under the work tree",
    "replace": "git replace changes what commits contain",
}
# subcommand: (flags that make it harmless, reason) — risky unless one of the flags is given.
_UNLESS = {
    "clean": ("-n --dry-run", "git clean deletes untracked files"),
    "rebase": ("--continue --show-current-patch --edit-todo", "git rebase rewrites the work tree"),
    "merge": ("--continue", "git merge changes the work tree"),
    "am": ("--continue --show-current-patch", "git am applies patches to the work tree"),
    "cherry-pick": ("--continue", "git cherry-pick changes the work tree"),
    "revert": ("--continue", "git revert changes the work tree"),
    "rm": ("--cached -n --dry-run", "git rm deletes files"),
    "apply": ("--check --stat --numstat --summary --cached", "git apply changes files"),
    "merge-file": ("-p --stdout", "git merge-file rewrites a file"),
    "update-index": ("--refresh --really-refresh -q", "git update-index rewrites the index"),
}
# subcommand: (first words that make it risky, reason).
_IF_WORD = {
    "bisect": (
        "start good bad new old skip reset run replay",
        "git bisect checks out other commits",
    ),
    "worktree": ("remove", "git worktree remove deletes a worktree"),
    "sparse-checkout": (
        "set add reapply disable init",
        "git sparse-checkout changes which files are present",
    ),
    "lfs": ("pull checkout migrate prune", "git lfs rewrites files"),
}


def git(name: str, args: list[str], ctx: Ctx) -> str | None:
    """Skip git's own options (`-C dir` moves the folder), then judge the subcommand."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        arg = args[i]
        if arg in ("--version", "--help", "-h", "--exec-path", "--html-path", "--man-path"):
            return None
        option, eq, value = arg.partition("=")
        if not eq and arg in _GLOBAL_WITH_VALUE and i + 1 < len(args):
            i, value = i + 1, args[i + 1]
        if option in ("-C", "--work-tree") and value:  # the folder of what follows
            ctx = ctx.at(ctx.path(value))
        elif option == "--git-dir" and value:  # a repository the command changes
            ctx.path(value)
        i += 1
    if i == len(args):
        return None
    sub, rest = args[i], args[i + 1 :]
    if sub in _READING:
        return None
    if sub in _ALWAYS:
        return _ALWAYS[sub]
    special = _SPECIAL.get(sub)
    if special is not None:
        return special(rest, ctx)
    if sub in _UNLESS:
        harmless, reason = _UNLESS[sub]
        found, _ = _options(rest, "-e --exclude -s --source -m --message -X --strategy-option")
        if sub in ("rebase", "merge", "am", "cherry-pick", "revert") and "--abort" in found:
            return f"git {sub} --abort discards the {sub} in progress"
        return None if found.keys() & _set(harmless) else reason
    if sub in _IF_WORD:
        words, reason = _IF_WORD[sub]
        operands = [a for a in rest if not a.startswith("-")]
        return reason if operands and operands[0] in _set(words) else None
    return f"git {sub}: not a git command known to be harmless"


def _reset(args: list[str], ctx: Ctx) -> str | None:
    for flag in ("--hard", "--merge", "--keep"):
        if flag in args:
            return f"git reset {flag} discards changes"
    return None


def _checkout(args: list[str], ctx: Ctx) -> str | None:
    if "--" in args[:-1]:
        return "git checkout -- PATH discards changes to it"
    found, operands = _options(args, "-b -B --orphan --conflict --pathspec-from-file")
    for flags, what in (
        ("-f --force", "git checkout --force discards changes"),
        ("-p --patch", "git checkout --patch discards changes"),
        ("--ours --theirs -m --merge", "git checkout --ours/--theirs overwrites files"),
        ("--pathspec-from-file", "git checkout of paths discards changes to them"),
    ):
        if found.keys() & _set(flags):
            return what
    if found.keys() & _set("-b -B --orphan"):
        return "git checkout START PATH discards changes" if len(operands) > 1 else None
    if len(operands) > 1:
        return f"git checkout {operands[0]} PATH discards changes to the path"
    if not operands or operands[0] == "-":
        return None
    target = operands[0]
    exists = ctx.exists(target)
    if exists or target == ".":
        return f"git checkout {target} discards changes to it"
    if exists is None and any(c in target for c in "*?[./"):
        return f"git checkout {target} may name files whose changes it discards"
    return None  # a branch or commit: git refuses to overwrite local changes


def _restore(args: list[str], ctx: Ctx) -> str | None:
    found, _ = _options(args, "-s --source --pathspec-from-file --conflict")
    staged = bool(found.keys() & {"-S", "--staged"})
    worktree = bool(found.keys() & {"-W", "--worktree"})
    return None if staged and not worktree else "git restore discards changes"


def _stash(args: list[str], ctx: Ctx) -> str | None:
    sub = args[0] if args and not args[0].startswith("-") else "push"
    if sub in ("list", "show", "create", "store"):
        return None
    if sub in ("push", "save"):
        return "git stash takes the changes out of the work tree"
    if sub in ("pop", "apply", "branch"):
        return f"git stash {sub} rewrites the work tree"
    return f"git stash {sub} deletes stashed changes"


def _switch(args: list[str], ctx: Ctx) -> str | None:
    found, _ = _options(args, "-c -C --create --force-create --orphan --conflict")
    if found.keys() & {"--discard-changes", "-f", "--force"}:
        return "git switch --discard-changes discards changes"
    if found.keys() & {"-m", "--merge"}:
        return "git switch --merge merges local changes"
    return None


def _mv(args: list[str], ctx: Ctx) -> str | None:
    found, _ = _options(args)
    return "git mv -f overwrites files" if found.keys() & {"-f", "--force"} else None


def _submodule(args: list[str], ctx: Ctx) -> str | None:
    """Submodules are left out of checkpoints: only what `foreach` runs here counts."""
    if "foreach" not in args:
        return None
    command = args[args.index("foreach") + 1 :]
    while command and command[0].startswith("-"):  # --recursive, -q
        command = command[1:]
    return ctx.line(" ".join(command))


_SPECIAL: dict[str, Callable[[list[str], Ctx], str | None]] = {
    "submodule": _submodule,
    "reset": _reset,
    "checkout": _checkout,
    "restore": _restore,
    "stash": _stash,
    "switch": _switch,
    "mv": _mv,
}
