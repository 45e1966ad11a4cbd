"""`save`, `restore` and `undo` without click (entry/fastcli): their command lines read as
click reads them (each line it takes, of every short combination of their options),
everything else left to click, and the same output, exit code and files either way."""

from __future__ import annotations

import io
import itertools
import json
import os
import subprocess
import sys
from contextlib import redirect_stderr
from pathlib import Path

import click
import pytest

from git_checkpoint.entry import console, fastcli
from git_checkpoint.entry.cli import cli
from git_checkpoint.entry.cmdline import CommandLine

from ..conftest import Repo
from ..fast.conftest import copy_of
from ..launcher import launch_via_shell, scratch


def clicks(argv: list[str]) -> dict[str, object] | None:
    """The parameters click hands the command for `argv`; None when click refuses it."""
    command = cli.commands[argv[0]]
    try:
        ctx = command.make_context(argv[0], list(argv[1:]))
    except click.exceptions.Exit:  # --help
        return None
    except click.ClickException:
        return None
    params = dict(ctx.params)
    params.pop("resume", None)  # restore's --continue: never read directly
    return params


READ = [
    ["save"],
    ["save", "-m", "a message"],
    ["save", "-mjoined"],
    ["save", "-m=x"],  # click: the value is "=x"
    ["save", "--message", ""],
    ["save", "--message=with = signs"],
    ["save", "--message="],
    ["save", "-m", "one", "-m", "two"],  # the last one counts
    ["save", "--task", "t", "--hypothesis", "h", "--next", "n", "--auto", "--json"],
    ["save", "--include", "a", "--include=b", "--include", "c d"],
    ["save", "--json", "--json"],
    ["save", "-m", "ünïcödé \u2603"],
    ["save", "-m", "surrogate \udcff"],
    ["restore"],
    ["restore", "cp_001"],
    ["restore", "--json", "cp_002", "--dry-run"],
    ["restore", "other/cp_003", "--move-head"],
    ["restore", "--keep-head", "master/cp_004"],
    ["restore", ""],
    ["undo"],
    ["undo", "--task", "t", "--keep-head", "--json"],
    ["undo", "--move-head"],
]


LEFT_TO_CLICK = [
    [],
    ["list"],
    ["save", "-h"],
    ["save", "--help"],
    ["save", "-m"],  # a value missing
    ["save", "-m", "--json"],  # click takes "--json" as the message: not guessed here
    ["save", "-m", "-"],
    ["save", "--message=-x"],
    ["save", "--auto=yes"],
    ["save", "--bogus"],
    ["save", "-q"],
    ["save", "extra"],
    ["save", "--", "-m"],
    ["save", "--mess", "x"],  # no abbreviations in click either
    ["restore", "--continue"],
    ["restore", "a", "b"],
    ["restore", "-"],
    ["restore", "--", "cp_001"],
    ["restore", "-1"],
    ["undo", "cp_001"],
    ["undo", "--task"],
    ["verify"],
]


@pytest.mark.parametrize("argv", READ, ids=repr)
def test_read_as_click_reads_it(argv: list[str]) -> None:
    call = fastcli.parse(CommandLine(argv))
    assert call is not None
    assert call.command == argv[0]
    assert call.params == clicks(argv)


@pytest.mark.parametrize("argv", LEFT_TO_CLICK, ids=repr)
def test_the_rest_is_left_to_click(argv: list[str]) -> None:
    assert fastcli.parse(CommandLine(argv)) is None


def test_every_option_of_the_three_is_known() -> None:
    """A new click option on save, restore or undo must be taught to entry/fastcli too (or
    the fast reader would send it to click: correct, but slow without a word)."""
    for name, spec in fastcli._SPECS.items():
        names = {
            o
            for p in cli.commands[name].params
            if isinstance(p, click.Option) and p.name not in ("resume",)
            for o in p.opts
        }
        assert names - {"--help"} == set(spec), name
        assert set(fastcli._DEFAULTS[name]) == {
            p.name for p in cli.commands[name].params if p.name != "resume"
        }


def test_the_launcher_loads_neither_click_nor_typing(repo: Repo) -> None:
    """The point of it: a save, a restore and an undo through the installed command never
    import click (nor does a save with options), nor typing, which only the type checker
    needs."""
    repo.write("a.txt", "one\n")
    repo.cp("save", "-m", "first")
    repo.write("a.txt", "two\n")
    code = (
        "import sys; sys.argv[0] = 'git-checkpoint'; from git_checkpoint.entry import launch\n"
        "import atexit, os\n"
        "real = os._exit\n"
        "def check(code):\n"
        "    heavy = [m for m in ('click', 'typing') if m in sys.modules]\n"
        "    sys.stderr.write(f'loaded: {heavy}\\n')\n"
        "    sys.stderr.flush(); real(code)\n"
        "os._exit = check\n"
        "launch.main()\n"
    )
    for args in (["save", "-m", "x", "--json"], ["restore", "cp_001"], ["undo"], ["list"]):
        proc = subprocess.run(
            [sys.executable, "-c", code, *args],
            cwd=repo.path,
            capture_output=True,
            text=True,
            env=os.environ,
            check=False,
        )
        assert proc.returncode == 0, proc.stderr
        wanted = "loaded: ['click', 'typing']" if args == ["list"] else "loaded: []"
        assert proc.stderr.strip().splitlines()[-1] == wanted, (args, proc.stderr)


def test_both_paths_say_the_same(repo: Repo) -> None:
    """The same failure through entry/fastcli and through click: one line, the same exit
    code (a checkpoint that does not exist: 3; a broken configuration on save: 2)."""
    repo.write("a.txt", "one\n")
    repo.cp("save")
    direct_run = repo.cp("restore", "cp_404", expect=None)
    via_click = repo.cp("restore", "cp_404", "--", expect=None)  # `--`: click's reading
    assert direct_run.returncode == via_click.returncode != 0
    assert direct_run.stderr.splitlines()[-1] == via_click.stderr.splitlines()[-1]
    as_json = repo.cp("restore", "cp_404", "--json", expect=None)
    assert as_json.returncode == direct_run.returncode
    assert '"error"' in as_json.stdout and len(as_json.stderr.splitlines()) == 1


def test_colors_go_to_terminals_and_content_goes_through(monkeypatch: pytest.MonkeyPatch) -> None:
    """emit colors status words on a terminal only; escape bytes that are content (a
    diff of a file that holds them) reach a pipe unchanged, where click.echo would strip
    them."""

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    class Lines:
        def lines(self) -> list[str]:
            return ["verifier unit failed", "+\033[31mred\033[0m"]

    piped = "verifier unit failed\n+\033[31mred\033[0m\n"
    colored = "verifier unit \033[31mfailed\033[0m\n+\033[31mred\033[0m\n"
    monkeypatch.delenv("NO_COLOR", raising=False)
    for stream, wanted in ((io.StringIO(), piped), (Terminal(), colored)):
        monkeypatch.setattr("sys.stdout", stream)
        console.emit(Lines(), as_json=False)
        assert stream.getvalue() == wanted


def test_text_that_is_not_utf8_is_refused_in_one_line(repo: Repo) -> None:
    """`-m $'caf\\xe9'` from a Latin-1 shell: refused, exit 2, by save and by task set
    (not an internal error, exit 4); nothing saved."""
    repo.write("a.txt", "one\n")
    for args in (["save", "-m", "caf\udce9"], ["task", "set", "--hypothesis", "caf\udce9"]):
        proc = repo.cp(*args, expect=2)
        assert proc.stderr.count("\n") == 1 and "not UTF-8" in proc.stderr, proc.stderr
    assert repo.git("for-each-ref", "refs/checkpoints") == ""


# --- the reader: as click reads -------------------------------------------------------

TOKENS = ["-m", "--task", "--include", "--json", "--auto", "--dry-run", "--keep-head", "x"]
TOKENS += ["", "-", "--", "-mx", "-m=", "--task=", "--json=", "ü\udcff", "-1", "—json"]


def clicks_or_refusal(argv: list[str]) -> object:
    try:
        with redirect_stderr(io.StringIO()):
            ctx = cli.commands[argv[0]].make_context(argv[0], argv[1:])
    except (click.exceptions.Exit, click.ClickException) as exc:
        return type(exc).__name__
    params = dict(ctx.params)
    return "resume" if params.pop("resume", False) else params


@pytest.mark.parametrize("command", ["save", "restore", "undo"])
def test_every_line_the_reader_takes_reads_as_click_reads_it(command: str) -> None:
    taken = 0
    for n in range(4):
        for words in itertools.product(TOKENS, repeat=n):
            call = fastcli.parse(CommandLine([command, *words]))
            if call is not None:
                taken += 1
                assert clicks_or_refusal([command, *words]) == call.params, words
    assert taken > 50


# --- both paths say the same ----------------------------------------------------------


@pytest.mark.parametrize(
    ("setup", "args"),
    [
        ("bad: [\n", ("save", "--json")),  # a warning, then the save with the defaults
        ("bad: [\n", ("restore", "cp_009")),  # a warning, then the unknown checkpoint
        ("bad: [\n", ("undo", "--json")),
        ("", ("restore", "--dry-run", "cp_001")),
    ],
)
def test_the_direct_and_the_click_path_print_the_same(
    repo: Repo, tmp_path: Path, setup: str, args: tuple[str, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    # One clock for both runs: a save a second later is another commit.
    monkeypatch.setenv("GIT_CHECKPOINT_NOW", "2026-02-01T12:00:00Z")
    repo.write("new.txt", "new\n")
    repo.cp("save", "-m", "one")
    repo.write("new.txt", "changed\n")
    if setup:
        repo.write(".checkpoint.yaml", setup)
    twin = copy_of(repo, tmp_path / "twin")  # (a save changes what the next one sees)
    fast = launch_via_shell(repo, *args)
    slow = launch_via_shell(twin, *args, "--")  # `--`: left to click, with the same parameters
    assert fastcli.parse(CommandLine(list(args))) is not None
    assert fastcli.parse(CommandLine([*args, "--"])) is None
    same = [out.replace(str(twin.path), str(repo.path)) for out in (slow.stdout, slow.stderr)]
    assert (fast.returncode, fast.stdout, fast.stderr) == (slow.returncode, *same)
    assert fast.returncode == 2 or args[0] == "save" or "--dry-run" in args
    assert scratch(repo) == []


def test_python_m_runs_the_direct_path(repo: Repo) -> None:
    repo.write("new.txt", "new\n")
    proc = subprocess.run(
        [sys.executable, "-m", "git_checkpoint", "save", "-mviam", "--json"],
        cwd=repo.path, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["checkpoint_id"] == "cp_001"
    assert "viam" in repo.git("log", "-1", "--format=%B", "refs/checkpoints/main/cp_001")
