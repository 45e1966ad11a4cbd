"""The commands print paths as git prints them in the same repository: with
core.quotePath true (git's default) names outside ASCII come in quotes with octal bytes,
with it false as they are, and a name with a tab, a quote or a backslash is quoted
either way. `diff --name-only` and `status` are held to `git diff --name-only` and
`git status` for the same names; JSON carries the names unquoted."""

from __future__ import annotations

import pytest

from ..conftest import Repo

NAMES = [
    "plain.txt",
    "\u00fcber.txt",
    "\u65e5\u672c/\u8a9e.txt",
    "tab\there.txt",
    'q"uote.txt',
    "back\\slash.txt",
]


@pytest.fixture
def named(repo: Repo) -> Repo:
    for name in NAMES:
        repo.write(name, "one\n")
    repo.commit_all("names")
    repo.cp("save", "-m", "before")
    for name in NAMES:
        repo.write(name, "two\n")
    return repo


@pytest.mark.parametrize("quote", ["true", "false", None], ids=["true", "false", "unset"])
def test_names_are_printed_as_git_prints_them(named: Repo, quote: str | None) -> None:
    if quote is not None:
        named.git("config", "core.quotePath", quote)
    git_names = named.git("diff", "--name-only").splitlines()
    assert len(git_names) == len(NAMES)
    assert named.cp("diff", "--name-only").stdout.splitlines() == git_names
    porcelain = [line[3:] for line in named.git("status", "--porcelain").splitlines()]
    drift = [line[2:] for line in named.cp("status").stdout.splitlines() if line[:2] == "  "]
    assert sorted(drift) == sorted(porcelain)
    if quote == "false":
        assert "\u00fcber.txt" in git_names  # as it is, where git shows it so
    else:
        assert '"\\303\\274ber.txt"' in git_names


def test_json_carries_the_names_as_they_are(named: Repo) -> None:
    named.git("config", "core.quotePath", "true")
    files = named.cp_json("diff", "--name-only")["files"]
    assert sorted(f["path"] for f in files) == sorted(NAMES)
