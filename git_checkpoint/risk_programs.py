"""Rules that need a few lines of code: wrappers that run another command, interpreters
whose inline code is read, in-place editors, and copies or moves that may overwrite.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from .risk_git import git
from .risk_rules import (
    ALWAYS,
    DATA_KEYWORDS,
    FLAGS,
    HARMLESS,
    KEYWORDS,
    TOOLS,
    Rule,
    flags,
    options,
    run_wrapped,
    show,
    target_risk,
    tool,
)
from .shellwords import UNKNOWN

if TYPE_CHECKING:
    from .risk import Ctx


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


def judge(name: str, args: list[str], ctx: Ctx) -> str | None:
    """Why the command `name args…` is risky, or None when it is harmless."""
    if name in HARMLESS:
        return None
    if name in ALWAYS:
        return ALWAYS[name]
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


# -- wrappers: judge the command they run --------------------------------------------

# name: (options that take a value, operands to skip before the command)
_WRAPPERS: dict[str, tuple[str, int]] = {
    "sudo": ("-u -g -h -p -C -D -r -t -U -T --user --group --host --prompt --chdir", 0),
    "doas": ("-u -C", 0),
    "nohup": ("", 0),
    "setsid": ("", 0),
    "time": ("-f -o --format --output", 0),
    "nice": ("-n --adjustment", 0),
    "ionice": ("-c -n -p -t --class --classdata", 0),
    "stdbuf": ("-i -o -e --input --output --error", 0),
    "unbuffer": ("", 0),
    "chronic": ("", 0),
    "caffeinate": ("-t -w", 0),
    "builtin": ("", 0),
    "exec": ("-a", 0),
    "timeout": ("-s -k --signal --kill-after", 1),
    "gtimeout": ("-s -k --signal --kill-after", 1),
    "strace": ("-o -e -p -s -u -E -P -I -b -S -X -a", 0),
    "ltrace": ("-o -e -p -s -u -n -a", 0),
    "command": ("", 0),
    "catchsegv": ("", 0),
    "dotenv": ("-e -c -v", 0),
}


def _wrapper(name: str, args: list[str], ctx: Ctx) -> str | None:
    with_value, skip = _WRAPPERS[name]
    found, rest = options(args, _set(with_value), stop=True)
    if name == "command" and found.keys() & {"-v", "-V"}:
        return None  # only looks the name up
    return ctx.argv(rest[skip:])


def _env(name: str, args: list[str], ctx: Ctx) -> str | None:
    found, rest = options(args, _set("-u --unset -C --chdir -S --split-string"), stop=True)
    split = found.get("-S") or found.get("--split-string")
    if split:
        return ctx.line(" ".join([split, *rest]))
    folder = found.get("-C") or found.get("--chdir")
    return (ctx.at(ctx.path(folder)) if folder else ctx).argv(rest)


def _xargs(name: str, args: list[str], ctx: Ctx) -> str | None:
    with_value = "-a --arg-file -d --delimiter -E -I --replace -L --max-lines -n --max-args "
    with_value += "-P --max-procs -s --max-chars --process-slot-var"
    found, rest = options(args, _set(with_value), stop=True)
    rest = rest or ["echo"]
    marker = found.get("-I") or found.get("--replace")
    if marker:  # xargs -I{} mv {} dst/: the input fills in the marker
        return ctx.argv([w.replace(marker, UNKNOWN) for w in rest])
    return ctx.argv([*rest, UNKNOWN])


def _parallel(name: str, args: list[str], ctx: Ctx) -> str | None:
    _, rest = options(args, _set("-j --jobs -S --sshlogin --joblog -a --arg-file"), stop=True)
    command = rest[: rest.index(":::")] if ":::" in rest else rest
    if len(command) == 1 and " " in command[0]:
        return ctx.line(command[0].replace("{}", "x"))
    return ctx.argv([*(w.replace("{}", UNKNOWN) for w in command), UNKNOWN]) if command else None


def _flock(name: str, args: list[str], ctx: Ctx) -> str | None:
    found, rest = options(
        args, _set("-w --timeout -E --conflict-exit-code -c --command"), stop=True
    )
    command = found.get("-c") or found.get("--command")
    if command:
        return ctx.line(command)
    if len(rest) > 1 and rest[1] in ("-c", "--command"):
        return ctx.line(" ".join(rest[2:]))
    return ctx.argv(rest[1:])


def _watch(name: str, args: list[str], ctx: Ctx) -> str | None:
    _, rest = options(args, _set("-n --interval -d --differences"), stop=True)
    return ctx.line(" ".join(rest)) if rest else None


def _trap(name: str, args: list[str], ctx: Ctx) -> str | None:
    operands = [a for a in args if not a.startswith("-")]
    return ctx.line(operands[0]) if operands else None


def _eval(name: str, args: list[str], ctx: Ctx) -> str | None:
    text = " ".join(args)
    if UNKNOWN in text:
        return f"eval {show(text)} runs a command computed at run time"
    return ctx.line(text)


def _source(name: str, args: list[str], ctx: Ctx) -> str | None:
    if not args:
        return None
    base = os.path.basename(args[0])
    if base in _ENV_SCRIPTS or base.endswith(".env"):
        return None
    return f"{name} {show(args[0])} runs a script"


_ENV_SCRIPTS = _set(
    "activate activate.sh activate.bash activate.zsh .bashrc .zshrc .profile .bash_profile "
    ".envrc .env env nvm.sh"
)


def _shell(name: str, args: list[str], ctx: Ctx) -> str | None:
    """`bash -c 'line'` is judged as a line; a script, or commands from stdin, are unknown."""
    command = False
    i = 0
    while i < len(args) and args[i][:1] in "-+" and args[i] not in ("-", "--"):
        arg = args[i]
        if arg in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            i += 1
        elif not arg.startswith("--") and "c" in arg:
            command = True
        elif arg == "-n":
            return None  # syntax check only
        i += 1
    operands = args[i + (args[i : i + 1] == ["--"]) :]
    if command and operands:
        return ctx.line(operands[0])
    if operands and operands[0] != "-":
        return f"{name} {show(operands[0])} runs a script"
    return f"{name} runs commands it reads from its input"


# -- interpreters: read the inline code for file writes -----------------------------

_CODE_WRITES = re.compile(
    r"\b(?:remove|unlink|unlinkSync|rmtree|rmdir|rmdirSync|rm|rmSync|removedirs|rename"
    r"|renameSync|renames|truncate|truncateSync|write_text|write_bytes|writeFile|writeFileSync"
    r"|appendFile|appendFileSync|createWriteStream|copyFile|copyFileSync|cpSync|symlink"
    r"|symlink_to|hardlink_to|system|popen|spawn\w*|execSync|execFile\w*|exec[lv]p?e?|exec"
    r"|eval|to_csv|to_excel|to_parquet|to_pickle|savefig|save|savez|file_put_contents"
    r"|shell_exec|passthru|fwrite|fputs)\s*\("
    r"|\b(?:subprocess|shutil|child_process|FileUtils)\b|\bos\.replace\b"
    r"|\bFile\.(?:write|delete|unlink|rename|truncate)\b"
    r"|\bf?open(?:Sync)?\s*\([^)]*?['\"][rbt]*[wax+][rwxabt+]*['\"]"
)
_PERL_WRITES = re.compile(
    r"\b(?:unlink|rename|rmtree|remove_tree|system|exec|qx|truncate)\b|`"
    r"|\bopen\b[^;]*?['\"]\s*\+?[>|]"
)
_RUBY_WRITES = re.compile(r"`|%x|\b(?:system|exec|spawn)\b")


def _code_risk(language: str, code: str) -> str | None:
    extra = {"perl": _PERL_WRITES, "ruby": _RUBY_WRITES}.get(language)
    if _CODE_WRITES.search(code) or (extra is not None and extra.search(code)):
        return f"{language} code that writes, deletes or runs something"
    return None


# interpreter: (options that take a value, options whose value is code)
_INTERPRETERS: dict[str, tuple[str, str]] = {
    "python": ("-W -X -c -m --check-hash-based-pycs", "-c"),
    "pypy": ("-W -X -c -m", "-c"),
    "node": (
        "-e --eval -p --print -r --require --import --loader --input-type --env-file -C",
        "-e --eval -p --print",
    ),
    "nodejs": ("-e --eval -p --print -r --require --import --loader", "-e --eval -p --print"),
    "ruby": ("-e -r -I -C -E -F", "-e"),
    "php": ("-r -d -c -f -S -t", "-r"),
    "perl": ("-e -E -M -m -I -x -d -D -C -l -0", "-e -E"),
}
_HARMLESS_MODULES = _set(
    "unittest doctest json.tool http.server pydoc timeit cProfile profile venv compileall "
    "py_compile build twine site sysconfig platform tabnanny calendar this ensurepip"
)


def _interpreter(name: str, args: list[str], ctx: Ctx) -> str | None:
    with_value, code_options = (_set(s) for s in _INTERPRETERS[name])
    found, operands = options(args, with_value, stop=True, last=code_options | {"-m"})
    language = "python" if name == "pypy" else "node" if name == "nodejs" else name
    if language in ("perl", "ruby") and any(f == "-i" or f.startswith("-i") for f in found):
        return f"{name} -i rewrites files in place"
    for option in code_options:
        if option in found:
            return _code_risk(language, found[option])
    module = found.get("-m")
    if module:
        return None if module in _HARMLESS_MODULES else ctx.argv([module, *operands])
    if found.keys() & _set("-V --version -v -h --help --check -c -l --test"):
        return None
    if not operands or operands[0] == "-":
        return f"{name} runs code it reads from its input"
    script = os.path.basename(operands[0])
    if script in ("manage.py", "artisan"):
        return ctx.argv([script, *operands[1:]])
    return f"{name} {show(operands[0])} runs a script"


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
    found, operands = options(args, _set("-t --target-directory -S --suffix"))
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


def _scp(name: str, args: list[str], ctx: Ctx) -> str | None:
    _, operands = options(args, _set("-P -i -o -F -c -l -J -S"))
    if len(operands) < 2 or re.match(r"^[^/]*:", operands[-1]):
        return None  # the copy goes to another machine
    sources = [re.sub(r"^[^/]*:", "", s) for s in operands[:-1]]
    return _copy_or_move(name, [*sources, operands[-1]], ctx)


_SQL_WRITES = re.compile(
    r"\b(insert|update|delete|drop|create|alter|truncate|replace|vacuum|attach|import)\b|^\s*\.",
    re.IGNORECASE,
)


def _sqlite(name: str, args: list[str], ctx: Ctx) -> str | None:
    _, operands = options(args, _set("-cmd -separator -newline -nullvalue"))
    sql = " ".join(operands[1:])
    if not sql:
        return f"{name} runs the SQL it reads from its input"
    if _SQL_WRITES.search(sql) and not sql.strip().startswith((".tables", ".schema", ".dump")):
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
    "sqlite3": _sqlite,
    "ruff": _ruff,
    "make": _make,
    "gmake": _make,
    "just": _make,
    "task": _make,
    "env": _env,
    "xargs": _xargs,
    "parallel": _parallel,
    "flock": _flock,
    "watch": _watch,
    "trap": _trap,
    "eval": _eval,
    "source": _source,
    ".": _source,
    "npx": run_wrapped,
    "bunx": run_wrapped,
    "pnpx": run_wrapped,
    "uvx": run_wrapped,
    **{shell: _shell for shell in ("bash", "sh", "zsh", "dash", "ksh", "fish")},
    **{name: _wrapper for name in _WRAPPERS},
    **{name: _interpreter for name in _INTERPRETERS},
}
