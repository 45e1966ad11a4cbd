"""Rules that need a few lines of code for programs that write files: in-place editors,
copies and moves that may overwrite, downloads, archives, make targets; and `judge`, which
picks the rule for a program (tables in `risk_rules`, git in `risk_git`, commands that run
commands in `risk_wrappers`).
"""

from __future__ import annotations

import itertools
import os

from .git import git
from .shellwords import UNKNOWN
from .tables import (
    ALWAYS,
    DATA_KEYWORDS,
    FLAGS,
    HARMLESS,
    KEYWORDS,
    TOOLS,
    flags,
    options,
    show,
    target_risk,
    tool,
)
from .wrappers import RULES as RUNNING

TYPE_CHECKING = False  # typing is not imported on the hook path
if TYPE_CHECKING:
    from .context import Ctx
    from .tables import Rule


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


def judge(name: str, args: list[str], ctx: Ctx) -> str | None:
    """Why the command `name args…` is risky, or None when it is harmless."""
    if name in HARMLESS:
        return None
    if name in ALWAYS:
        return f"{name} {ALWAYS[name]}"
    if name in KEYWORDS:  # `if`, `then`, `!`, `{`…: the command follows
        return ctx.argv(args)
    if name in DATA_KEYWORDS:
        return None
    rule = RULES.get(name)
    if rule is not None:
        return rule(name, args, ctx)
    if name in TOOLS:
        return tool(name, args, ctx)
    if name in FLAGS:
        return flags(name, args, FLAGS[name])
    return f"{name}: not a command known to be harmless"


# -- in-place editors and writers ----------------------------------------------------


def _sed(name: str, args: list[str], ctx: Ctx) -> str | None:
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg.startswith("--in-place"):
            return "sed -i rewrites files in place"
        if arg in ("-e", "-f", "-l", "--expression", "--file", "--line-length"):
            i += 1
        elif arg.startswith("-") and not arg.startswith("--"):
            for letter in arg[1:]:
                if letter == "i":
                    return "sed -i rewrites files in place"
                if letter in "efl":
                    i += arg.endswith(letter)  # the value is the next word
                    break
    return None


def _awk(name: str, args: list[str], ctx: Ctx) -> str | None:
    found, operands = options(args, _set("-f -v -F -i --include -e --source -E --exec"))
    if found.get("-i") == "inplace" or found.get("--include") == "inplace":
        return f"{name} -i inplace rewrites files"
    if found.keys() & {"-f", "-E", "--exec"}:
        return f"{name} -f runs an awk program file"
    program = found.get("-e") or found.get("--source") or (operands[0] if operands else "")
    import re

    if re.search(r"\bsystem\s*\(|\bprintf?\b[^;}]*?>|\|\s*\"", program):
        return f"{name} program writes files or runs commands"
    return None


def _find(name: str, args: list[str], ctx: Ctx) -> str | None:
    for i, arg in enumerate(args):
        if arg == "-delete":
            return "find -delete removes files"
        if arg in ("-exec", "-execdir", "-ok", "-okdir"):
            end = next((j for j in range(i + 1, len(args)) if args[j] in (";", "+")), len(args))
            reason = ctx.argv([w.replace("{}", UNKNOWN) for w in args[i + 1 : end]])
            if reason:
                return f"find {arg}: {reason}"
        writes = arg in ("-fprint", "-fprint0", "-fprintf", "-fls") and i + 1 < len(args)
        if writes and ctx.clobbers(args[i + 1]) is not False:
            return f"find {arg} overwrites {show(args[i + 1])}"
    return None


def _fd(name: str, args: list[str], ctx: Ctx) -> str | None:
    for i, arg in enumerate(args):
        if arg in ("-x", "--exec", "-X", "--exec-batch"):
            end = args.index(";", i) if ";" in args[i:] else len(args)
            return ctx.argv([*(w.replace("{}", UNKNOWN) for w in args[i + 1 : end]), UNKNOWN])
    return None


def _tee(name: str, args: list[str], ctx: Ctx) -> str | None:
    found, files = options(args)
    if found.keys() & {"-a", "--append"}:
        return None
    for path in files:
        if ctx.clobbers(path) is not False:
            return f"tee overwrites {show(path)}"
    return None


def _dd(name: str, args: list[str], ctx: Ctx) -> str | None:
    target = next((a[3:] for a in args if a.startswith("of=")), None)
    if target is not None and (target.startswith("/dev/") or ctx.clobbers(target) is not False):
        return f"dd overwrites {show(target)}"
    return None


def _download(name: str, args: list[str], ctx: Ctx) -> str | None:
    """curl -o / -O and wget -O write files; they are risky only over an existing one."""
    letter = "o" if name == "curl" else "O"
    long = "--output" if name == "curl" else "--output-document"
    targets = []
    for i, arg in enumerate(args):
        value = arg.partition("=")[2] if arg.startswith(long + "=") else None
        if arg == long or (
            arg.startswith("-") and not arg.startswith("--") and arg.endswith(letter)
        ):
            value = args[i + 1] if i + 1 < len(args) else None
        elif arg.startswith("-") and not arg.startswith("--") and letter in arg:
            value = arg[arg.index(letter) + 1 :]
        if value is not None:
            targets.append(value)
        if name == "curl" and arg.startswith("-") and not arg.startswith("--") and "O" in arg:
            urls = [a for a in args if "://" in a]
            targets += [u.split("?")[0].rstrip("/").rsplit("/", 1)[-1] for u in urls]
    for path in targets:
        if path != "-" and ctx.clobbers(path) is not False:
            return f"{name} overwrites {show(path)}"
    return None


def _copy_or_move(name: str, args: list[str], ctx: Ctx) -> str | None:
    with_value = "-t --target-directory -S --suffix"
    if name == "install":
        with_value += " -m --mode -o --owner -g --group"
    found, operands = options(args, _set(with_value))
    if name == "install" and found.keys() & {"-d", "--directory"}:
        return None
    if found.keys() & _set("-n --no-clobber -b --backup --update"):
        return None
    target = found.get("-t") or found.get("--target-directory")
    if target is None:
        if len(operands) < 2:
            return None
        *operands, target = operands
    if name == "mv" and (target.startswith(("/", "..", "~")) and not _inside(target, ctx)):
        return f"mv moves files out of this folder, to {show(target)}"
    clobbers = ctx.clobbers(target)
    if clobbers is not False:
        return f"{name} {'overwrites' if clobbers else 'may overwrite'} {show(target)}"
    full = ctx.path(target)
    if full is None or not os.path.isdir(full):
        return None
    for source in operands:
        inside = os.path.join(target, os.path.basename(source.rstrip("/")))
        if ctx.exists(inside) is not False:
            return f"{name} may overwrite files in {show(target)}"
    return None


def _tar(name: str, args: list[str], ctx: Ctx) -> str | None:
    letters = args[0] if args and not args[0].startswith("-") else ""  # tar xzf a.tgz
    with_value = "-f --file -C --directory -T --files-from -X --exclude-from --exclude -b -H"
    found, _ = options(args[1:] if letters else args, _set(with_value))
    if "x" not in letters and not found.keys() & {"-x", "--extract", "--get", "--delete"}:
        return None
    folder = found.get("-C") or found.get("--directory")
    if folder and os.path.isabs(folder) and not _inside(folder, ctx):
        return None  # extracts somewhere else
    return "tar -x extracts over files"


def _openssl(name: str, args: list[str], ctx: Ctx) -> str | None:
    for flag, path in itertools.pairwise(args):
        if flag in ("-out", "-keyout") and ctx.clobbers(path) is not False:
            return f"openssl {flag} overwrites {show(path)}"
    return None


def _scp(name: str, args: list[str], ctx: Ctx) -> str | None:
    import re

    _, operands = options(args, _set("-P -i -o -F -c -l -J -S"))
    if len(operands) < 2 or re.match(r"^[^/]*:", operands[-1]):
        return None  # the copy goes to another machine
    sources = [re.sub(r"^[^/]*:", "", s) for s in operands[:-1]]
    return _copy_or_move(name, [*sources, operands[-1]], ctx)


_SQL_WRITES = (
    r"(?i)\b(insert|update|delete|drop|create|alter|truncate|replace|vacuum|attach|import)\b"
    r"|^\s*\."
)


def _sqlite(name: str, args: list[str], ctx: Ctx) -> str | None:
    _, operands = options(args, _set("-cmd -separator -newline -nullvalue"))
    sql = " ".join(operands[1:])
    if not sql:
        return f"{name} runs the SQL it reads from its input"
    import re

    if re.search(_SQL_WRITES, sql) and not sql.strip().startswith((".tables", ".schema", ".dump")):
        return f"{name} changes the database file"
    return None


def _inside(path: str, ctx: Ctx) -> bool:
    full = ctx.path(path)
    if full is None or ctx.cwd is None:
        return False
    return os.path.normpath(full).startswith(os.path.normpath(ctx.cwd) + os.sep)


def _rsync(name: str, args: list[str], ctx: Ctx) -> str | None:
    found, operands = options(args, _set("-e --rsh --exclude --include --filter -f"))
    if found.keys() & _set("-n --dry-run --list-only"):
        return None
    if any(f.startswith("--delete") or f == "--remove-source-files" for f in found):
        return "rsync --delete removes files"
    target = operands[-1] if len(operands) > 1 else None
    import re

    if target is None or re.match(r"^[^/]*:", target):
        return None  # a listing, or a remote destination
    return "rsync overwrites files" if ctx.exists(target) is not False else None


def _ruff(name: str, args: list[str], ctx: Ctx) -> str | None:
    found, operands = options(args, _set("--config --target-version --select --ignore"))
    if operands[:1] == ["format"]:
        return None if found.keys() & {"--check", "--diff"} else "ruff format rewrites files"
    return "ruff --fix rewrites files" if "--fix" in found else None


def _make(name: str, args: list[str], ctx: Ctx) -> str | None:
    with_value = "-C --directory -f --file --makefile -I --include-dir -l --load-average -o "
    with_value += "--old-file -W --what-if --new-file -E --eval"
    found, operands = options(args, _set(with_value))
    if found.keys() & _set(
        "-n --dry-run --just-print --recon -q --question -h --help -v --version"
    ):
        return None
    for target in operands:
        if "=" not in target and not target.isdigit():
            reason = target_risk(name, target)
            if reason:
                return reason
    return None


RULES: dict[str, Rule] = {
    "git": git,
    "sed": _sed,
    "gsed": _sed,
    "awk": _awk,
    "gawk": _awk,
    "mawk": _awk,
    "nawk": _awk,
    "find": _find,
    "fd": _fd,
    "fdfind": _fd,
    "tee": _tee,
    "dd": _dd,
    "curl": _download,
    "wget": _download,
    "cp": _copy_or_move,
    "mv": _copy_or_move,
    "rsync": _rsync,
    "scp": _scp,
    "install": _copy_or_move,
    "tar": _tar,
    "openssl": _openssl,
    "sqlite3": _sqlite,
    "ruff": _ruff,
    "make": _make,
    "gmake": _make,
    "just": _make,
    "task": _make,
    **RUNNING,
}
