"""Paths are printed as git prints them: `core.quotePath` true (git's default) quotes a
name with bytes outside ASCII and writes them in octal; false shows them as they are.
Control characters, `"` and `\\` are escaped, and the name quoted, either way. Two
exceptions with it false, kept octal so a name can send nothing to the terminal: bytes
that are not UTF-8, and the C1 control characters."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from git_checkpoint.core.text import counted, follow_quote_path, quote_path

from ..conftest import Repo

NAMES = [
    "plain.txt",
    "sp ace.txt",
    "\u00fc.txt",
    "\u65e5\u672c.txt",
    "caf\u00e9/men\u00fc.txt",
    "tab\there.txt",
    'q"uote.txt',
    "back\\slash.txt",
    "new\nline.txt",
    "del\x7f.txt",
    "esc\x1b[31m.txt",
    "bell\x07.txt",
]
KEPT_OCTAL = [os.fsdecode(b"lat\xe9.txt"), "c1\u009b.txt"]


@pytest.fixture
def setting() -> Iterator[None]:
    yield
    follow_quote_path(True)


def git_listing(repo: Repo, quote: bool) -> list[str]:
    out = repo.git("-c", f"core.quotePath={str(quote).lower()}", "ls-files")
    return out.splitlines()


@pytest.mark.parametrize("quote", [True, False], ids=["quotePath=true", "quotePath=false"])
def test_each_name_is_printed_as_git_prints_it(
    empty_repo: Repo, setting: None, quote: bool
) -> None:
    for name in NAMES:
        empty_repo.write(name, "x\n")
    empty_repo.git("add", "-A")
    follow_quote_path(quote)
    ours = sorted(quote_path(name) for name in NAMES)
    assert ours == sorted(git_listing(empty_repo, quote))


def test_quote_path_false_keeps_what_could_reach_the_terminal_octal(
    empty_repo: Repo, setting: None
) -> None:
    """git prints these raw with core.quotePath=false; we keep the octal of =true."""
    for name in KEPT_OCTAL:
        empty_repo.write(name, "x\n")
    empty_repo.git("add", "-A")
    follow_quote_path(False)
    assert sorted(quote_path(n) for n in KEPT_OCTAL) == sorted(git_listing(empty_repo, True))
    assert quote_path("\u00fc" + KEPT_OCTAL[0]) == '"\u00fclat\\351.txt"'


def test_a_count_agrees_with_its_noun() -> None:
    assert counted(0, "file") == "0 files"
    assert counted(1, "file") == "1 file"
    assert counted(2, "file") == "2 files"
    assert counted(1, "entry", "entries") == "1 entry"
    assert counted(3, "entry", "entries") == "3 entries"
    assert counted(12_345, "line") == "12,345 lines"
