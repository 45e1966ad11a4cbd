"""The risk classifier's knowledge: which programs, subcommands and flags change files.

Mostly tables; a function only where a table cannot say it (git's discarding forms, sed
and perl in-place flags, overwrite checks of cp/mv/tee). Each rule gets the program's
name, its arguments and the `Ctx` (folder, recursion) and returns a reason or None.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from .shellwords import UNKNOWN

if TYPE_CHECKING:
    from .risk import Ctx

Rule = Callable[[str, list[str], "Ctx"], "str | None"]


def program_name(word: str) -> str:
    """`/usr/bin/python3.12` → `python`, `pip3` → `pip`: the name the rules know."""
    name = os.path.basename(word)
    return re.sub(r"^(python|pip|pypy|ruby|perl|php|node)[0-9.]*$", r"\1", name)


def show(word: str) -> str:
    return word.replace(UNKNOWN, "$…")


def options(
    args: list[str],
    with_value: frozenset[str] = frozenset(),
    *,
    stop: bool = False,
    last: frozenset[str] = frozenset(),
) -> tuple[dict[str, str], list[str]]:
    """getopt-style: `{option: value or ""}` and the operands. `-abc` is -a -b -c unless
    one of them takes a value (the rest of the word, or the next word). `--` ends the
    options; with `stop`, so does the first operand (for wrappers: `sudo -u x cmd -f`),
    and so does any option in `last` (`python -m black --check`: --check is black's)."""
    found: dict[str, str] = {}
    operands: list[str] = []
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            operands += args[i:]
            break
        name = arg
        if arg.startswith("--"):
            name, eq, value = arg.partition("=")
            if not eq and name in with_value and i < len(args):
                value, i = args[i], i + 1
            found[name] = value
        elif arg.startswith("-") and len(arg) > 1:
            for j, letter in enumerate(arg[1:], 1):
                name = f"-{letter}"
                found[name] = ""
                if name in with_value:
                    found[name] = arg[j + 1 :]
                    if not found[name] and i < len(args):
                        found[name], i = args[i], i + 1
                    break
        else:
            operands.append(arg)
            if stop:
                operands += args[i:]
                break
        if name in last:
            operands += args[i:]
            break
    return found, operands


def _set(words: str) -> frozenset[str]:
    return frozenset("" if w == "''" else w for w in words.split())


# -- always harmless / always risky ------------------------------------------------------

HARMLESS = _set(
    """: true false test [ [[ ]] echo printf pwd ls ll la dir vdir cat bat tac head tail less
    more most grep egrep fgrep rg ag ack ugrep wc cut tr nl fold paste join rev expand
    unexpand column seq yes sleep basename dirname realpath readlink stat file du df free
    tree diff colordiff cmp comm uniq md5sum sha1sum sha256sum sha512sum shasum cksum b2sum
    base64 xxd od hexdump strings which whereis type hash whoami id groups date cal uptime
    uname hostname printenv locale nproc lscpu tty ps pgrep pstree top htop lsof jobs history
    alias unalias export set unset shopt setopt unsetopt read mapfile readarray cd pushd popd
    dirs exit return shift wait kill pkill killall ulimit umask local declare typeset readonly
    let getopts clear tput stty man info help apropos whatis ping dig nslookup host ssh nc
    netstat ss ip ifconfig jq xq tomlq mkdir touch mktemp chmod chown chgrp rmdir split
    csplit zcat zless zgrep bzcat xzcat lz4cat zstdcat mypy pyright pylint flake8 pyflakes
    pycodestyle pydocstyle bandit vulture radon pyre pytype tox nox tsc vue-tsc shellcheck
    hadolint yamllint markdownlint actionlint tokei cloc scc kubectl helm aws gcloud az
    gsutil gh-dash open xdg-open pbcopy pbpaste xclip xsel notify-send tmux screen watchman
    git-checkpoint cmake ctest ninja meson javac gcc g++ cc clang clang++ rustc
    mocha ava tap cypress playwright rspec phpunit jasmine karma vite webpack rollup esbuild
    parcel next nuxt turbo node-gyp http-server serve live-server uvicorn gunicorn
    hypercorn coverage nvm pyenv rbenv asdf mise psql mysql redis-cli mongosh"""
)

_REMOVES = "removes files"
ALWAYS: dict[str, str] = {
    "rm": f"rm {_REMOVES}",
    "unlink": f"unlink {_REMOVES}",
    "shred": f"shred {_REMOVES}",
    "srm": f"srm {_REMOVES}",
    "trash": f"trash {_REMOVES}",
    "trash-put": f"trash-put {_REMOVES}",
    "truncate": "truncate cuts files short",
    "rename": "rename renames files",
    "prename": "prename renames files",
    "mmv": "mmv moves files",
    "protoc": "protoc generates code over existing files",
    "graphql-codegen": "graphql-codegen generates code",
    "gql-gen": "gql-gen generates code",
    "oapi-codegen": "oapi-codegen generates code",
    "mockgen": "mockgen generates code",
    "stringer": "stringer generates code",
    "wire": "wire generates code",
    "flatc": "flatc generates code",
    "thrift": "thrift generates code",
    "datamodel-codegen": "datamodel-codegen generates code",
    "hygen": "hygen generates code",
    "plop": "plop generates code",
    "yo": "yo generates code",
    "cookiecutter": "cookiecutter generates a project",
    "copier": "copier generates a project",
    "create-react-app": "create-react-app generates a project",
    "create-next-app": "create-next-app generates a project",
    "create-vite": "create-vite generates a project",
    "degit": "degit copies a project over files",
    "vim": "an editor writes files",
    "vi": "an editor writes files",
    "nvim": "an editor writes files",
    "nano": "an editor writes files",
    "emacs": "an editor writes files",
}

KEYWORDS = _set("if then else elif do while until ! { } fi done esac noglob nocorrect")
DATA_KEYWORDS = _set("for case select function in")  # what follows is data, not a command


# -- subcommand tools: package managers, migrations, generators ------------------------

# name: (risky subcommands, harmless subcommands, subcommands that run a command,
#        what any other subcommand is: "risky" | "harmless" | "script", reason)
# "" stands for no subcommand at all; "script" means the word names a package script.
_Tool = tuple[frozenset[str], frozenset[str], frozenset[str], str, str]


def _tool_entry(risky: str, harmless: str, runs: str, other: str, reason: str) -> _Tool:
    return (_set(risky), _set(harmless), _set(runs), other, reason)


_DEPS = "{} {} changes the installed dependencies"
_DB = "{} {} changes the database or migration files"
_GEN = "{} {} generates code over files"
_PKG_SYSTEM = _tool_entry(
    "install remove purge uninstall reinstall upgrade dist-upgrade full-upgrade autoremove "
    "add del erase",
    "",
    "",
    "harmless",
    _DEPS,
)
TOOLS: dict[str, _Tool] = {
    "pip": _tool_entry("install uninstall", "", "", "harmless", _DEPS),
    "uv": _tool_entry(
        "add remove sync lock venv init export",
        "tree version help build publish cache",
        "run",
        "risky",
        _DEPS,
    ),
    "poetry": _tool_entry(
        "add remove install update lock sync init new version self env",
        "show check build publish config about search list help shell debug cache",
        "run",
        "risky",
        _DEPS,
    ),
    "pipenv": _tool_entry(
        "install uninstall update upgrade lock sync clean",
        "graph check requirements scripts shell --venv --where --py",
        "run",
        "risky",
        _DEPS,
    ),
    "pdm": _tool_entry(
        "add remove install update lock sync init", "list show info", "run", "risky", _DEPS
    ),
    "rye": _tool_entry("add remove sync lock init", "show list", "run", "risky", _DEPS),
    "conda": _tool_entry(
        "install remove uninstall update upgrade create env", "", "run", "harmless", _DEPS
    ),
    "mamba": _tool_entry(
        "install remove uninstall update upgrade create env", "", "run", "harmless", _DEPS
    ),
    "pipx": _tool_entry(
        "install uninstall upgrade upgrade-all reinstall reinstall-all inject",
        "",
        "run",
        "harmless",
        _DEPS,
    ),
    "npm": _tool_entry(
        "install i in ins inst insta instal isnt isntall add ci clean-install uninstall remove "
        "rm r un unlink update up upgrade udpate dedupe ddp prune link ln init create innit "
        "version pkg shrinkwrap",
        "test t tst start stop restart ls list ll la view info show v outdated help config get "
        "whoami search pack publish doctor explain why root prefix bin docs repo bugs cache "
        "ping query sbom audit fund login logout owner dist-tag deprecate unpublish rebuild "
        "-v --version",
        "exec x",
        "script",
        _DEPS,
    ),
    "yarn": _tool_entry(
        "add remove install upgrade up upgrade-interactive dedupe import link unlink init "
        "create set patch-commit autoclean ''",
        "why info list outdated audit config cache help bin licenses pack publish npm "
        "workspaces constraints explain login logout -v --version",
        "exec dlx",
        "script",
        _DEPS,
    ),
    "pnpm": _tool_entry(
        "add install i remove rm uninstall un update up upgrade import dedupe prune link ln "
        "unlink init create patch-commit ''",
        "list ls ll outdated why audit licenses root bin store config help -v --version",
        "exec dlx",
        "script",
        _DEPS,
    ),
    "bun": _tool_entry(
        "add a install i remove rm update link unlink init create upgrade pm ''",
        "--version -v",
        "x",
        "script",
        _DEPS,
    ),
    "cargo": _tool_entry(
        "add remove rm update install uninstall generate-lockfile clean fix new init vendor run r",
        "build b check c test t bench doc d tree metadata search version --version -V help "
        "fetch verify-project locate-project pkgid publish package login owner yank audit "
        "deny nextest expand miri clippy fmt",
        "",
        "risky",
        "cargo {1} changes files or dependencies",
    ),
    "go": _tool_entry(
        "get generate fmt fix clean run",
        "build test vet list version env doc help tool bug install mod work",
        "",
        "risky",
        "go {1} changes files or dependencies",
    ),
    "bundle": _tool_entry(
        "install update add remove lock clean init binstubs ''",
        "list show info check outdated config version platform doctor help",
        "exec",
        "risky",
        _DEPS,
    ),
    "gem": _tool_entry("install uninstall update cleanup", "", "", "harmless", _DEPS),
    "composer": _tool_entry(
        "install update require remove dump-autoload create-project ''",
        "",
        "exec",
        "harmless",
        _DEPS,
    ),
    "dotnet": _tool_entry(
        "add remove new clean restore format tool ef sln run",
        "build test --version --info list pack publish help",
        "",
        "risky",
        "dotnet {1} changes files or dependencies",
    ),
    "mix": _tool_entry(
        "deps.get deps.update deps.unlock deps.clean new clean format",
        "test compile credo dialyzer deps deps.tree help",
        "",
        "risky",
        "mix {1} changes files, dependencies or the database",
    ),
    "gradle": _tool_entry(
        "clean",
        "test build compile check assemble lint dependencies tasks help --version",
        "",
        "risky",
        "{} {} changes files",
    ),
    "mvn": _tool_entry(
        "clean",
        "test compile verify package install validate dependency:tree help --version",
        "",
        "risky",
        "{} {} changes files",
    ),
    "alembic": _tool_entry(
        "", "current history heads branches show check help -h --help", "", "risky", _DB
    ),
    "manage.py": _tool_entry(
        "",
        "test check runserver showmigrations sqlmigrate help --help diffsettings version "
        "inspectdb findstatic",
        "",
        "risky",
        _DB,
    ),
    "rails": _tool_entry(
        "generate g destroy d new",
        "server s console c routes test t about stats notes credentials:show --version -v help",
        "",
        "risky",
        "{} {} changes the database or generates code",
    ),
    "rake": _tool_entry("", "test spec routes -T --tasks stats notes about", "", "risky", _DB),
    "artisan": _tool_entry(
        "", "route:list list about test serve tinker --version help", "", "risky", _DB
    ),
    "prisma": _tool_entry(
        "generate format db", "validate studio version -v --version debug help", "", "risky", _DB
    ),
    "knex": _tool_entry(
        "", "migrate:status migrate:list migrate:currentVersion --version help", "", "risky", _DB
    ),
    "sequelize": _tool_entry("", "db:migrate:status --version help", "", "risky", _DB),
    "typeorm": _tool_entry("", "migration:show schema:log version query", "", "risky", _DB),
    "drizzle-kit": _tool_entry("", "studio check", "", "risky", _DB),
    "flyway": _tool_entry("", "info validate version", "", "risky", _DB),
    "liquibase": _tool_entry("", "status history validate --version", "", "risky", _DB),
    "goose": _tool_entry("", "status version", "", "risky", _DB),
    "dbmate": _tool_entry("", "status --help", "", "risky", _DB),
    "diesel": _tool_entry("", "print-schema", "", "risky", _DB),
    "sqlx": _tool_entry("", "--version", "", "risky", _DB),
    "ng": _tool_entry("generate g new update add", "", "", "harmless", _GEN),
    "nest": _tool_entry("generate g new add", "", "", "harmless", _GEN),
    "nx": _tool_entry("generate g migrate", "", "", "harmless", _GEN),
    "buf": _tool_entry("generate format", "", "", "harmless", _GEN),
    "sqlc": _tool_entry("generate", "", "", "harmless", _GEN),
    "swag": _tool_entry("init fmt", "", "", "harmless", _GEN),
    "openapi-generator": _tool_entry("generate", "", "", "harmless", _GEN),
    "openapi-generator-cli": _tool_entry("generate", "", "", "harmless", _GEN),
    "swagger-codegen": _tool_entry("generate", "", "", "harmless", _GEN),
    "terraform": _tool_entry(
        "",
        "plan validate show output version providers graph console workspace state fmt",
        "",
        "risky",
        "terraform {1} changes files or state",
    ),
    "deno": _tool_entry(
        "run install add remove eval task compile",
        "test lint check info doc bench types --version",
        "",
        "risky",
        "deno {1} may change files",
    ),
    "flask": _tool_entry("db", "run routes shell --version --help", "", "risky", _DB),
    "gh": _tool_entry("", "", "", "harmless", "gh {1} changes the work tree"),
    "docker": _tool_entry("cp", "", "", "harmless", "docker {1} may change files"),
    "podman": _tool_entry("cp", "", "", "harmless", "podman {1} may change files"),
    "pre-commit": _tool_entry(
        "run autoupdate ''",
        "install uninstall clean gc sample-config validate-config validate-manifest help --version",
        "",
        "risky",
        "pre-commit hooks may rewrite files",
    ),
}
for _alias, _same in {
    "pip3": "pip", "micromamba": "mamba", "bundler": "bundle", "gradlew": "gradle",
    "mvnw": "mvn", "django-admin": "manage.py", "sequelize-cli": "sequelize", "tofu": "terraform",
    "apt": "apt-get",
}.items():  # fmt: skip
    TOOLS[_alias] = TOOLS.get(_same, _PKG_SYSTEM)
for _system in _set("apt-get aptitude dnf yum zypper apk brew port snap choco winget"):
    TOOLS[_system] = _PKG_SYSTEM

# (tool, subcommand): ("if" | "unless", words): risky if any word is among the arguments,
# or unless one is. For subcommands whose verdict hangs on a flag or a second word.
SUB_FLAGS: dict[tuple[str, str], tuple[str, frozenset[str]]] = {
    ("cargo", "fmt"): ("unless", _set("--check")),
    ("cargo", "clippy"): ("if", _set("--fix")),
    ("go", "mod"): ("if", _set("tidy edit vendor init")),
    ("go", "work"): ("if", _set("init use edit sync vendor")),
    ("npm", "audit"): ("if", _set("fix")),
    ("yarn", "npm"): ("if", _set("audit-fix")),
    ("prisma", "migrate"): ("unless", _set("status")),
    ("terraform", "fmt"): ("unless", _set("-check --check")),
    ("terraform", "state"): ("if", _set("rm mv push replace-provider")),
    ("terraform", "workspace"): ("if", _set("delete")),
    ("gh", "pr"): ("if", _set("checkout")),
    ("docker", "run"): ("if", _set("-v --volume --mount")),
    ("podman", "run"): ("if", _set("-v --volume --mount")),
    ("uv", "pip"): ("if", _set("install uninstall sync compile")),
    ("uv", "tool"): ("if", _set("install uninstall upgrade")),
    ("uv", "python"): ("if", _set("install uninstall")),
    ("dotnet", "format"): ("unless", _set("--verify-no-changes")),
    ("mix", "format"): ("unless", _set("--check-formatted")),
    ("deno", "fmt"): ("unless", _set("--check")),
}

_TOOL_OPTIONS = _set(
    "--prefix -C --directory --project --cwd --manifest-path --config --filter -F --workspace "
    "-w --python --chdir -Z --color --env-file"
)
_RUNNER_OPTIONS = _set(
    "-n --name -p --prefix --cwd --with -w --python --project --directory --package --extra "
    "--group --env-file --index --index-url --from --spec -e --env --environment --filter -F "
    "--workspace"
)


def tool(name: str, args: list[str], ctx: Ctx) -> str | None:
    risky, harmless, runs, other, reason = TOOLS[name]
    found, operands = options(args, _TOOL_OPTIONS, stop=True)
    sub = operands[0] if operands else ""
    if not sub and found.keys() & _set("-v --version -V -h --help"):
        return None
    rest = operands[1:]
    said = reason.format(name, sub or "with no subcommand").strip()
    if (name, sub) == ("uv", "tool") and rest[:1] == ["run"]:  # uv tool run = uvx
        return run_wrapped(name, rest[1:], ctx)
    flag_rule = SUB_FLAGS.get((name, sub))
    if flag_rule is not None:
        return flags(f"{name} {sub}", rest, (*flag_rule, said))
    if sub in risky:
        return said
    if sub in harmless:
        return None
    if sub in runs:
        return run_wrapped(name, rest, ctx)

    if other == "harmless":
        return None
    if other == "script":  # npm run build, yarn lint: judged by the script's name
        script = sub
        if sub in ("run", "run-script"):
            script = next((a for a in rest if not a.startswith("-")), "")
        if {"--fix", "--write"} & set(rest):  # yarn lint --fix
            return f"{name} {script} {' '.join(rest)} rewrites files"
        return target_risk(name, script) if script else None
    return f"{name} {sub}: not a subcommand known to be harmless" if sub else said


def run_wrapped(name: str, args: list[str], ctx: Ctx) -> str | None:
    """`npx tool`, `uv run cmd`, `bundle exec cmd`: judge the command they run."""
    found, rest = options(args, _RUNNER_OPTIONS | _set("-c --call"), stop=True)
    call = found.get("-c") or found.get("--call")
    if call:
        return ctx.line(call)
    if not rest:
        return None
    # npx create-next-app@latest, uvx ruff==0.5 check, npx @scope/cli: the program's name
    program = re.split(r"(?<=.)@|==|\[", rest[0])[0].rsplit("/", 1)[-1]
    return ctx.argv([program, *rest[1:]])


# Words of a make target or package script that say what it does to files.
_RISKY_STEMS = _set(
    "clean clobber mrproper purge reset fmt format gen codegen proto migrat db install "
    "uninstall deps update upgrade vendor bootstrap seed tidy sync setup init snapshot"
)
_CHECKING = _set("check verify dry dryrun status list lint test tests")
_HARMLESS_TARGETS = _set(
    "all build test tests check lint vet typecheck types tsc docs doc html bench benchmark "
    "coverage cov ci help default compile run dev serve start watch dist package e2e "
    "storybook preview"
)


def target_risk(runner: str, target: str) -> str | None:
    """A make target, just recipe or package script, judged by the words of its name."""
    parts = [p for p in re.split(r"[^a-z0-9]+", target.lower()) if p]
    if any(p.startswith("fix") for p in parts):
        return f"{runner} {target} rewrites files"
    if _CHECKING & set(parts):
        return None
    if any(p.startswith(stem) for p in parts for stem in _RISKY_STEMS):
        return f"{runner} {target} may delete or rewrite files"
    if parts and parts[0] in _HARMLESS_TARGETS:
        return None
    return f"{runner} {target}: not a target known to be harmless"


# -- flag rules: formatters and tools risky only with (or without) a flag --------------

# name: ("if" | "unless", flags, reason): risky if one of the flags is given, or unless one is.
_Flags = tuple[str, frozenset[str], str]
FLAGS: dict[str, _Flags] = {
    "black": ("unless", _set("--check --diff"), "black rewrites files"),
    "isort": ("unless", _set("--check --check-only -c --diff"), "isort rewrites files"),
    "autopep8": ("if", _set("-i --in-place"), "autopep8 -i rewrites files"),
    "autoflake": ("if", _set("-i --in-place"), "autoflake -i rewrites files"),
    "yapf": ("if", _set("-i --in-place"), "yapf -i rewrites files"),
    "prettier": ("if", _set("--write -w"), "prettier --write rewrites files"),
    "eslint": ("if", _set("--fix"), "eslint --fix rewrites files"),
    "stylelint": ("if", _set("--fix"), "stylelint --fix rewrites files"),
    "rubocop": (
        "if",
        _set("-a -A --auto-correct --autocorrect --auto-correct-all --autocorrect-all -x"),
        "rubocop -a rewrites files",
    ),
    "standardrb": ("if", _set("--fix"), "standardrb --fix rewrites files"),
    "gofmt": ("if", _set("-w"), "gofmt -w rewrites files"),
    "goimports": ("if", _set("-w"), "goimports -w rewrites files"),
    "gofumpt": ("if", _set("-w"), "gofumpt -w rewrites files"),
    "rustfmt": ("unless", _set("--check"), "rustfmt rewrites files"),
    "clang-format": ("if", _set("-i"), "clang-format -i rewrites files"),
    "shfmt": ("if", _set("-w --write"), "shfmt -w rewrites files"),
    "biome": ("if", _set("--write --apply --apply-unsafe --fix"), "biome --write rewrites files"),
    "dprint": ("if", _set("fmt"), "dprint fmt rewrites files"),
    "php-cs-fixer": ("unless", _set("--dry-run"), "php-cs-fixer rewrites files"),
    "codespell": ("if", _set("-w --write-changes"), "codespell -w rewrites files"),
    "sqlfluff": ("if", _set("fix format"), "sqlfluff fix rewrites files"),
    "jest": ("if", _set("-u --updateSnapshot"), "jest -u rewrites snapshots"),
    "vitest": ("if", _set("-u --update"), "vitest -u rewrites snapshots"),
    "pytest": ("if", _set("--snapshot-update --inline-snapshot"), "pytest rewrites snapshots"),
    "py.test": ("if", _set("--snapshot-update"), "pytest rewrites snapshots"),
    "yq": ("if", _set("-i --inplace"), "yq -i rewrites files"),
    "sort": ("if", _set("-o --output"), "sort -o overwrites a file"),
    "patch": ("unless", _set("--dry-run"), "patch changes files"),
    "unzip": ("unless", _set("-l -t -v -Z -p -n"), "unzip overwrites files"),
    "ln": ("if", _set("-f --force"), "ln -f replaces files"),
    "install": ("unless", _set("-d --directory"), "install copies over files"),
    "tar": ("if", _set("-x --extract --get --delete"), "tar -x extracts over files"),
    "rsync": ("unless", _set("-n --dry-run --list-only"), "rsync overwrites files"),
}
for _zip in _set("gzip gunzip bzip2 bunzip2 xz unxz zstd unzstd lz4 brotli"):
    FLAGS[_zip] = (
        "unless",
        _set("-c --stdout -l --list -t --test -k --keep -h --help -V --version -d"),
        f"{_zip} replaces files",
    )
FLAGS["gunzip"] = (FLAGS["gunzip"][0], FLAGS["gunzip"][1] - {"-d"}, "gunzip replaces files")


def flags(name: str, args: list[str], rule: _Flags) -> str | None:
    mode, flags, reason = rule
    given = set(args)
    found, _ = options(args)
    given |= found.keys()
    if name == "tar" and args and not args[0].startswith("-"):  # tar xzf: old-style letters
        given |= {f"-{c}" for c in args[0]}
    hit = bool(given & flags)
    return reason if hit == (mode == "if") else None
