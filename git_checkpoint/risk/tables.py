"""The risk classifier's knowledge: which programs, subcommands and flags change files.

Mostly tables; a function only where a table cannot say it (git's discarding forms, sed
and perl in-place flags, overwrite checks of cp/mv/tee). Each rule gets the program's
name, its arguments and the `Ctx` (folder, recursion) and returns a reason or None.
"""

from __future__ import annotations

import os

from .shellwords import UNKNOWN

# Neither typing nor re is imported on the hook path (re loads enum, functools and
# collections: more than the classifier itself); the rare rules that match a pattern
# import re when they run.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    from .context import Ctx

    Rule = Callable[[str, list[str], Ctx], str | None]

# Programs known by their name without a version: python3.12, pip3, node18.
_VERSIONED = ("python", "pip", "pypy", "ruby", "perl", "php", "node")
_LOWER_ALNUM = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")


def program_name(word: str) -> str:
    """`/usr/bin/python3.12` → `python`, `pip3` → `pip`: the name the rules know."""
    name = os.path.basename(word)
    for stem in _VERSIONED:
        if name.startswith(stem) and not name[len(stem) :].strip("0123456789."):
            return stem
    return name


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
    ssh-keygen netstat ss ip ifconfig jq xq tomlq mkdir touch mktemp chmod chown chgrp rmdir split
    csplit zcat zless zgrep bzcat xzcat lz4cat zstdcat mypy pyright pylint flake8 pyflakes
    pycodestyle pydocstyle bandit vulture radon pyre pytype tox nox tsc vue-tsc shellcheck
    hadolint yamllint markdownlint actionlint tokei cloc scc kubectl helm aws gcloud az
    gsutil gh-dash open xdg-open pbcopy pbpaste xclip xsel notify-send tmux screen watchman
    git-checkpoint cmake ctest ninja meson javac gcc g++ cc clang clang++ rustc
    mocha ava tap cypress playwright rspec phpunit jasmine karma vite webpack rollup esbuild
    parcel next nuxt turbo node-gyp http-server serve live-server uvicorn gunicorn
    hypercorn coverage twine nvm pyenv rbenv asdf mise psql mysql redis-cli mongosh"""
)

# program: what it does (each is risky whatever its arguments).
ALWAYS: dict[str, str] = {
    **dict.fromkeys(_set("rm unlink shred srm trash trash-put"), "removes files"),
    **dict.fromkeys(_set("rename prename mmv"), "renames files"),
    "truncate": "cuts files short",
    **dict.fromkeys(
        _set(
            "protoc graphql-codegen gql-gen oapi-codegen mockgen stringer wire flatc thrift "
            "datamodel-codegen hygen plop yo"
        ),
        "generates code over files",
    ),
    **dict.fromkeys(
        _set("cookiecutter copier create-react-app create-next-app create-vite degit"),
        "generates a project over files",
    ),
    **dict.fromkeys(_set("vim vi nvim nano emacs"), "is an editor: it writes files"),
}
KEYWORDS = _set("if then else elif do while until ! { } fi done esac noglob nocorrect")
DATA_KEYWORDS = _set("for case select function in")  # what follows is data, not a command


# -- subcommand tools: package managers, migrations, generators ------------------------

# names | risky subcommands | harmless ones | ones that run a command | any other is:
#   risky, harmless, or script (the word names a package script) | reason
# '' stands for no subcommand; an indented line continues the one above. Reasons: deps,
# db, gen, or a text where {0} is the tool and {1} the subcommand.
_TOOL_TABLE = """
pip pip3 | install uninstall | | | harmless | deps
uv | add export init lock remove sync venv | build cache help publish tree version | run
    | risky | deps
poetry | add env init install lock new remove self sync update version
    | about build cache check config debug help list publish search shell show | run | risky | deps
pipenv | clean install lock sync uninstall update upgrade
    | --py --venv --where check graph requirements scripts shell | run | risky | deps
pdm | add init install lock remove sync update | info list show | run | risky | deps
rye | add init lock remove sync | list show | run | risky | deps
hatch | fmt new version | build clean env shell status test | | script | {0} {1} changes files
conda mamba micromamba | create env install remove uninstall update upgrade | | run | harmless
    | deps
pipx | inject install reinstall reinstall-all uninstall upgrade upgrade-all | | run | harmless
    | deps
npm | add ci clean-install create ddp dedupe i in init innit ins inst insta instal install isnt
    isntall link ln pkg prune r remove rm shrinkwrap udpate un uninstall unlink up update
    upgrade version
    | --version -v audit bin bugs cache config deprecate dist-tag docs doctor explain fund get
    help info la list ll login logout ls outdated owner pack ping prefix publish query rebuild
    repo restart root sbom search show start stop t test tst unpublish v view whoami why
    | exec x | script | deps
yarn | '' add autoclean create dedupe import init install link patch-commit remove set unlink
    up upgrade upgrade-interactive
    | --version -v audit bin cache config constraints explain help info licenses list login
    logout npm outdated pack publish why workspaces | dlx exec | script | deps
pnpm | '' add create dedupe i import init install link ln patch-commit prune remove rm un
    uninstall unlink up update upgrade
    | --version -v audit bin config help licenses list ll ls outdated root store why
    | dlx exec | script | deps
bun | '' a add create i init install link pm remove rm unlink update upgrade | --version -v
    | x | script | deps
cargo | add clean fix generate-lockfile init new r remove rm run uninstall update vendor
    | --version -V audit b bench build c check clippy d deny doc expand fetch fmt help install
    locate-project login metadata miri nextest owner package pkgid publish search t test tree
    verify-project version yank | | risky | {0} {1} changes files or dependencies
go | clean fix fmt generate get run
    | bug build doc env help install list mod test tool version vet work | | risky
    | {0} {1} changes files or dependencies
bundle bundler | '' add binstubs clean init install lock remove update
    | check config doctor help info list outdated platform show version | exec | risky | deps
gem | cleanup install uninstall update | | | harmless | deps
composer | '' create-project dump-autoload install remove require update | | exec | harmless
    | deps
apt apt-get aptitude apk brew choco dnf port snap winget yum zypper
    | add autoremove del dist-upgrade erase full-upgrade install purge reinstall remove
    uninstall upgrade | | | harmless | deps
dotnet | add clean ef format new remove restore run sln tool
    | --info --version build help list pack publish test | | risky | {0} {1} changes files
mix | clean deps.clean deps.get deps.unlock deps.update format new
    | compile credo deps deps.tree dialyzer help test | | risky | {0} {1} changes files
gradle gradlew | clean | --version assemble build check compile dependencies help lint tasks
    test | | risky | {0} {1} changes files
mvn mvnw | clean | --version compile dependency:tree help install package test validate verify
    | | risky | {0} {1} changes files
alembic | | --help -h branches check current heads help history show | | risky | db
manage.py django-admin | | --help check diffsettings findstatic help inspectdb runserver
    showmigrations sqlmigrate test version | | risky | db
rails | d destroy g generate new | --version -v about c console credentials:show help notes
    routes s server stats t test | | risky | {0} {1} changes the database or generates code
rake | | --tasks -T about notes routes spec stats test | | risky | db
artisan | | --version about help list route:list serve test tinker | | risky | db
flask | db | --help --version routes run shell | | risky | db
prisma | db format generate | --version -v debug help studio validate version | | risky | db
knex | | --version help migrate:currentVersion migrate:list migrate:status | | risky | db
sequelize sequelize-cli | | --version db:migrate:status help | | risky | db
typeorm | | migration:show query schema:log version | | risky | db
drizzle-kit | | check studio | | risky | db
flyway | | info validate version | | risky | db
liquibase | | --version history status validate | | risky | db
goose | | status version | | risky | db
dbmate | | --help status | | risky | db
diesel | | print-schema | | risky | db
sqlx | | --version | | risky | db
ng | add g generate new update | | | harmless | gen
nest | add g generate new | | | harmless | gen
nx | g generate migrate | | | harmless | gen
buf | format generate | | | harmless | gen
sqlc openapi-generator openapi-generator-cli swagger-codegen | generate | | | harmless | gen
swag | fmt init | | | harmless | gen
terraform tofu | | console fmt graph output plan providers show state validate version
    workspace | | risky | {0} {1} changes files or state
deno | add compile eval install remove run task | --version bench check doc info lint test types
    | | risky | {0} {1} may change files
gh | | | | harmless | {0} {1} changes the work tree
docker podman | cp | | | harmless | {0} {1} may change files
pre-commit | '' autoupdate run | --version clean gc help install sample-config uninstall
    validate-config validate-manifest | | risky | pre-commit hooks may rewrite files
"""
# tool subcommand | if (risky when one of the words is among its arguments) or unless
# (risky unless one is) | words
_SUB_FLAG_TABLE = """
cargo fmt | unless | --check
cargo clippy | if | --fix
go mod | if | edit init tidy vendor
go work | if | edit init sync use vendor
npm audit | if | fix
yarn npm | if | audit-fix
prisma migrate | unless | status
terraform fmt | unless | --check -check
terraform state | if | mv push replace-provider rm
terraform workspace | if | delete
gh pr | if | checkout
docker run | if | --mount --volume -v
podman run | if | --mount --volume -v
uv pip | if | compile install sync uninstall
uv tool | if | install uninstall upgrade
uv python | if | install uninstall
dotnet format | unless | --verify-no-changes
mix format | unless | --check-formatted
deno fmt | unless | --check
"""
_REASONS = {
    "deps": "{0} {1} changes the installed dependencies",
    "db": "{0} {1} changes the database or migration files",
    "gen": "{0} {1} generates code over files",
}
# risky, harmless, runs, what any other subcommand is, reason
_Tool = tuple[frozenset[str], frozenset[str], frozenset[str], str, str]


def _rows(table: str) -> list[list[str]]:
    rows: list[str] = []
    for line in table.strip().split("\n"):
        text = line.lstrip(" \t")
        if rows and text != line:  # an indented line goes on the row above
            rows[-1] += " " + text
        else:
            rows.append(line)
    return [[cell.strip() for cell in row.split("|")] for row in rows]


TOOLS: dict[str, _Tool] = {}
for _names, _risky, _harmless, _runs, _other, _reason in _rows(_TOOL_TABLE):
    for _name in _names.split():
        TOOLS[_name] = (
            _set(_risky),
            _set(_harmless),
            _set(_runs),
            _other,
            _REASONS.get(_reason, _reason),
        )
SUB_FLAGS: dict[tuple[str, str], tuple[str, frozenset[str]]] = {
    (row[0].split()[0], row[0].split()[1]): (row[1], _set(row[2])) for row in _rows(_SUB_FLAG_TABLE)
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
    if (name, sub) == ("yarn", "workspace") and rest:  # yarn workspace web test
        return tool(name, rest[1:], ctx)
    if other == "script":  # npm run build, yarn lint: judged by the script's name
        script = sub
        if sub in ("run", "run-script"):
            script = next((a for a in rest if not a.startswith("-")), "")
        if {"--fix", "--write"} & set(rest):  # yarn lint --fix
            return f"{name} {script} {' '.join(rest)} rewrites files"
        return target_risk(name, script) if script else None
    return said


def run_wrapped(name: str, args: list[str], ctx: Ctx) -> str | None:
    """`npx tool`, `uv run cmd`, `bundle exec cmd`: judge the command they run."""
    found, rest = options(args, _RUNNER_OPTIONS | _set("-c --call"), stop=True)
    call = found.get("-c") or found.get("--call")
    if call:
        return ctx.line(call)
    if not rest:
        return None
    # npx create-next-app@latest, uvx ruff==0.5 check, npx @scope/cli: the program's name
    word = rest[0]
    at = word.find("@", 1)
    while at > 0 and word[at - 1] == "\n":
        at = word.find("@", at + 1)
    ends = [i for i in (at, word.find("=="), word.find("[")) if i >= 0]
    program = word[: min(ends, default=len(word))].rsplit("/", 1)[-1]
    return ctx.argv([program, *rest[1:]])


# Words of a make target or package script that say what it does to files.
_RISKY_STEMS = _set(
    "clean clobber mrproper purge reset fmt format gen codegen proto migrat db install "
    "uninstall deps update upgrade vendor bootstrap seed tidy sync setup init snapshot"
)
_CHECKING = _set("check verify dry dryrun status list")
_HARMLESS_TARGETS = _set(
    "all build test tests check lint vet typecheck types tsc docs doc html bench benchmark "
    "coverage cov ci help default compile run dev serve start watch dist package e2e "
    "storybook preview"
)


def target_risk(runner: str, target: str) -> str | None:
    """A make target, just recipe or package script, judged by the words of its name."""
    parts = "".join(c if c in _LOWER_ALNUM else " " for c in target.lower()).split()
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

# names | if (risky when one of the flags is given) or unless (risky unless one is) | flags
# | what it does
_FLAG_TABLE = """
black | unless | --check --diff | rewrites files
isort | unless | --check --check-only --diff -c | rewrites files
autopep8 autoflake yapf | if | --in-place -i | rewrites files in place
prettier | if | --write -w | rewrites files
eslint stylelint standardrb | if | --fix | rewrites files
rubocop | if | --auto-correct --auto-correct-all --autocorrect --autocorrect-all -A -a -x
    | rewrites files
gofmt goimports gofumpt | if | -w | rewrites files
rustfmt | unless | --check | rewrites files
clang-format | if | -i | rewrites files
shfmt | if | --write -w | rewrites files
biome | if | --apply --apply-unsafe --fix --write | rewrites files
dprint | if | fmt | rewrites files
php-cs-fixer | unless | --dry-run | rewrites files
codespell | if | --write-changes -w | rewrites files
sqlfluff | if | fix format | rewrites files
jest | if | --updateSnapshot -u | rewrites snapshots
vitest | if | --update -u | rewrites snapshots
pytest py.test | if | --inline-snapshot --snapshot-update --update-snapshots | rewrites snapshots
yq | if | --inplace -i | rewrites files in place
sort | if | --output -o | overwrites a file
patch | unless | --dry-run | changes files
unzip | unless | -Z -l -n -p -t -v | overwrites files
ln | if | --force -f | replaces files
gzip gunzip bzip2 bunzip2 xz unxz zstd unzstd lz4 brotli
    | unless | --help --keep --list --stdout --test --version -V -c -h -k -l -t | replaces files
"""
_Flags = tuple[str, frozenset[str], str]
FLAGS: dict[str, _Flags] = {
    name: (mode, _set(words), f"{name} {does}")
    for names, mode, words, does in _rows(_FLAG_TABLE)
    for name in names.split()
}


def flags(name: str, args: list[str], rule: _Flags) -> str | None:
    mode, flags, reason = rule
    given = set(args)
    found, _ = options(args)
    given |= found.keys()
    if name == "tar" and args and not args[0].startswith("-"):  # tar xzf: old-style letters
        given |= {f"-{c}" for c in args[0]}
    hit = bool(given & flags)
    return reason if hit == (mode == "if") else None
