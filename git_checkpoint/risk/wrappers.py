"""Rules for commands that run other commands: wrappers (sudo, env, xargs, timeout…),
shells given a line (`bash -c`), `eval`, `source`, and interpreters whose inline code
(`python -c`, `node -e`, `perl -e`…) is read for file writes.
"""

from __future__ import annotations

import os

from .shellwords import UNKNOWN
from .tables import options, run_wrapped, show, tool

TYPE_CHECKING = False  # typing is not imported on the hook path
if TYPE_CHECKING:
    from .context import Ctx
    from .tables import Rule


def _set(words: str) -> frozenset[str]:
    return frozenset(words.split())


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

_CODE_WRITES = (  # compiled on first use (re caches it): most calls never need it
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
_PERL_WRITES = (
    r"\b(?:unlink|rename|rmtree|remove_tree|system|exec|qx|truncate)\b|`"
    r"|\bopen\b[^;]*?['\"]\s*\+?[>|]"
)
_RUBY_WRITES = r"`|%x|\b(?:system|exec|spawn)\b"


def _code_risk(language: str, code: str) -> str | None:
    import re

    extra = {"perl": _PERL_WRITES, "ruby": _RUBY_WRITES}.get(language)
    if re.search(_CODE_WRITES, code) or (extra is not None and re.search(extra, code)):
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


def _docker(name: str, args: list[str], ctx: Ctx) -> str | None:
    _, operands = options(args, _set("-H --host --context -c --config -l --log-level"), stop=True)
    if operands[:1] == ["compose"]:
        return _compose(name, operands[1:], ctx)
    return tool(name, args, ctx)


def _compose(name: str, args: list[str], ctx: Ctx) -> str | None:
    """`docker compose run|exec SERVICE CMD`: dev containers mount the work tree."""
    with_value = "-f --file -p --project-name --profile --env-file --project-directory"
    _, operands = options(args, _set(with_value), stop=True)
    if operands[:1] not in (["run"], ["exec"]):
        return None
    with_value = "-e --env -w --workdir -u --user --name --entrypoint -v --volume -p --publish "
    with_value += "-l --label --env-file --index"
    _, rest = options(operands[1:], _set(with_value), stop=True)
    return ctx.argv(rest[1:]) if len(rest) > 1 else None


RULES: dict[str, Rule] = {
    "docker": _docker,
    "podman": _docker,
    "docker-compose": _compose,
    "podman-compose": _compose,
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
