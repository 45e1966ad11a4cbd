"""git's answer to the configuration read every command makes first (Repo's
`git config --get-regexp`) is kept for the next command while all git reads for it is
the same (gitcore/configcache.py): any change to a file it reads, by any means and in the
same second, and any `-c` or GIT_CONFIG_* variable, gives git's new answer; a file that
includes another is never kept."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from git_checkpoint.gitcore import configcache
from git_checkpoint.gitcore.formats import CONFIG_ARGV, parse_config
from git_checkpoint.gitcore.repo import Repo as GitRepo

from ..conftest import Repo


def read(repo: Repo) -> list[tuple[str, str]]:
    """What a command reads, in a Repo of its own (as each command has)."""
    return GitRepo.discover(str(repo.path)).config_pairs()


def gits_answer(repo: Repo) -> list[tuple[str, str]]:
    return parse_config(repo.git(*CONFIG_ARGV, check=False).encode())


def kept(repo: Repo) -> object:
    path = repo.path / ".git" / "checkpoint" / configcache.FILE
    return json.loads(path.read_text())["pairs"] if path.exists() else None


@pytest.fixture
def answered(repo: Repo) -> Repo:
    repo.cp("save", "-m", "first")  # makes the state folder; the answer is kept
    repo.git("config", "checkpoint.lockTimeout", "7")
    assert read(repo) == gits_answer(repo)
    assert kept(repo) == [list(p) for p in gits_answer(repo)]
    return repo


def test_the_kept_answer_is_read_without_git(
    answered: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    trace = tmp_path / "trace.json"
    monkeypatch.setenv("GIT_TRACE2_EVENT", str(trace))
    pairs = read(answered)
    assert not trace.exists()  # no git started
    assert pairs == gits_answer(answered)


def test_a_change_of_the_same_size_in_the_same_second_is_seen(answered: Repo) -> None:
    config = answered.path / ".git" / "config"
    st = config.stat()
    config.write_text(config.read_text().replace("lockTimeout = 7", "lockTimeout = 8"))
    os.utime(config, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert config.stat().st_size == st.st_size
    assert ("checkpoint.locktimeout", "8") in read(answered)
    assert read(answered) == gits_answer(answered)


def test_global_and_xdg_changes_are_seen(answered: Repo) -> None:
    home = Path(os.environ["HOME"])
    with (home / ".gitconfig").open("a") as fh:
        fh.write("[checkpoint]\n\tlockTimeout = 11\n")
    assert read(answered)[-1] == ("checkpoint.locktimeout", "7")  # the repository's wins
    xdg = Path(os.environ["XDG_CONFIG_HOME"]) / "git" / "config"
    xdg.parent.mkdir(parents=True, exist_ok=True)
    xdg.write_text("[user]\n\tname = From XDG\n")
    assert ("user.name", "From XDG") in read(answered)
    assert read(answered) == gits_answer(answered)


def test_command_line_and_environment_config_are_seen(
    answered: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'checkpoint.locktimeout'='9'")
    assert read(answered)[-1] == ("checkpoint.locktimeout", "9")
    monkeypatch.delenv("GIT_CONFIG_PARAMETERS")
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "checkpoint.lockTimeout")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "10")
    assert read(answered)[-1] == ("checkpoint.locktimeout", "10")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "12")
    assert read(answered)[-1] == ("checkpoint.locktimeout", "12")
    monkeypatch.delenv("GIT_CONFIG_COUNT")
    assert read(answered)[-1] == ("checkpoint.locktimeout", "7")


def test_a_config_that_includes_another_is_never_kept(answered: Repo, tmp_path: Path) -> None:
    included = tmp_path / "more.config"
    included.write_text("[checkpoint]\n\tlockTimeout = 13\n")
    answered.git("config", "include.path", str(included))
    assert read(answered)[-1] == ("checkpoint.locktimeout", "13")
    included.write_text("[checkpoint]\n\tlockTimeout = 14\n")
    assert read(answered)[-1] == ("checkpoint.locktimeout", "14")
    found = GitRepo.discover(str(answered.path))
    assert configcache.key(found.git_dir, found.common_dir) is None


def test_a_kept_answer_in_a_bad_state_is_asked_of_git_again(answered: Repo) -> None:
    path = answered.path / ".git" / "checkpoint" / configcache.FILE
    for text in ("{", "[]", '{"key": 1}', '{"key": "x", "pairs": 3}', ""):
        path.write_text(text)
        assert read(answered) == gits_answer(answered)
    found = GitRepo.discover(str(answered.path))
    digest = configcache.key(found.git_dir, found.common_dir)
    path.write_text(json.dumps({"key": digest, "pairs": [[1]]}))
    assert read(answered) == gits_answer(answered)


def test_a_linked_worktrees_own_config_is_seen(answered: Repo, tmp_path: Path) -> None:
    answered.git("config", "extensions.worktreeConfig", "true")
    linked = tmp_path / "linked"
    answered.git("worktree", "add", "-q", str(linked))
    other = Repo(linked)
    assert read(other) == gits_answer(other)
    other.git("config", "--worktree", "checkpoint.lockTimeout", "15")
    assert read(other)[-1] == ("checkpoint.locktimeout", "15")
    assert read(answered)[-1] == ("checkpoint.locktimeout", "7")
