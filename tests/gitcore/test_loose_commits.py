"""Commits written in-process (gitcore/loose.commit_body) are the bytes `git commit-tree`
writes from the same environment and config, or are left to git."""

from __future__ import annotations

import re
import subprocess

import pytest

from git_checkpoint.gitcore import loose
from git_checkpoint.gitcore.repo import Repo as GitRepo

from ..conftest import Repo

IDENT_ENV = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL")


DATE_ENV = ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE")


def by_git(repo: Repo, tree: str, parents: list[str], message: str) -> bytes:
    argv = ["git", "commit-tree", tree]
    for parent in parents:
        argv += ["-p", parent]
    run = subprocess.run(argv, cwd=repo.path, input=message.encode(), capture_output=True)
    assert run.returncode == 0, run.stderr
    oid = run.stdout.decode().strip()
    return subprocess.run(
        ["git", "cat-file", "commit", oid], cwd=repo.path, capture_output=True, check=True
    ).stdout


def by_git_oid(repo: Repo, tree: str, parents: list[str]) -> str:
    argv = ["git", "commit-tree", tree, "-m", "parent"]
    for parent in parents:
        argv += ["-p", parent]
    return (
        subprocess.run(argv, cwd=repo.path, capture_output=True, check=True).stdout.decode().strip()
    )


def ours(repo: Repo, tree: str, parents: list[str], message: str) -> bytes | None:
    config = GitRepo.discover(repo.path).config_pairs()
    return loose.commit_body(config, tree, parents, message)


def setting(
    repo: Repo,
    monkeypatch: pytest.MonkeyPatch,
    env: dict[str, str | None],
    config: dict[str, str],
) -> None:
    """Set (None: unset) environment variables and git config."""
    for name, value in env.items():
        if value is None:
            monkeypatch.delenv(name, raising=False)
        else:
            monkeypatch.setenv(name, value)
    for key, value in config.items():
        repo.git("config", key, value)


SAME: dict[str, tuple[dict[str, str | None], dict[str, str]]] = {
    "env idents, ISO dates": ({}, {}),
    "zones east and west": (
        {
            "GIT_AUTHOR_DATE": "2026-03-04T05:06:07+0130",
            "GIT_COMMITTER_DATE": "2025-12-31T23:59:59-0000",
        },
        {},
    ),
    "a zone west": ({"GIT_COMMITTER_DATE": "2024-02-29T12:00:00-0800"}, {}),
    "git's raw dates": (
        {"GIT_AUTHOR_DATE": "@1767225600 +0200", "GIT_COMMITTER_DATE": "@0 -0000"},
        {},
    ),
    "user.* from config": (
        {n: None for n in IDENT_ENV},
        {"user.name": "Config User", "user.email": "user@example.com"},
    ),
    "author.* and committer.* over user.*": (
        {n: None for n in IDENT_ENV},
        {
            "user.name": "Config User",
            "user.email": "user@example.com",
            "author.name": "The Author",
            "committer.email": "committer@example.org",
        },
    ),
    "$EMAIL without user.email": (
        {"GIT_AUTHOR_EMAIL": None, "GIT_COMMITTER_EMAIL": None, "EMAIL": "env@example.net"},
        {},
    ),
    "non-ASCII names": ({"GIT_AUTHOR_NAME": "Zoë Ångström", "GIT_COMMITTER_NAME": "山田"}, {}),
}


@pytest.mark.parametrize("case", list(SAME))
def test_the_same_bytes_as_commit_tree(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    setting(repo, monkeypatch, *SAME[case])
    tree = repo.git("rev-parse", "HEAD^{tree}").strip()
    first = repo.git("rev-parse", "HEAD").strip()
    parents = [first, by_git_oid(repo, tree, [first]), by_git_oid(repo, tree, [])]
    message = "checkpoint cp_001 on main: ünïcode\n\nrun_id: x\n"
    assert ours(repo, tree, parents, message) == by_git(repo, tree, parents, message)


def test_now_is_git_s_now(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a date in the environment: this second, in the local zone, as git has it."""
    for name in DATE_ENV:
        monkeypatch.delenv(name)
    tree = repo.git("rev-parse", "HEAD^{tree}").strip()
    mine, git = ours(repo, tree, [], "m\n"), by_git(repo, tree, [], "m\n")
    assert mine is not None
    stamp = re.compile(rb"> (\d+) ([+-]\d{4})\n")
    for (a_time, a_zone), (b_time, b_zone) in zip(
        stamp.findall(mine), stamp.findall(git), strict=True
    ):
        assert a_zone == b_zone and abs(int(a_time) - int(b_time)) <= 2
    assert stamp.sub(b"> T\n", mine) == stamp.sub(b"> T\n", git)


LEFT_TO_GIT: dict[str, tuple[dict[str, str | None], dict[str, str]]] = {
    "a date in another form": ({"GIT_AUTHOR_DATE": "yesterday"}, {}),
    "an ISO date with a space": ({"GIT_COMMITTER_DATE": "2026-01-01 00:00:00 +0000"}, {}),
    "an ISO date with no zone": ({"GIT_COMMITTER_DATE": "2026-01-01T00:00:00"}, {}),
    "a day that is not in the month": ({"GIT_AUTHOR_DATE": "2026-02-30T00:00:00Z"}, {}),
    "a zone of 99 minutes": ({"GIT_AUTHOR_DATE": "@1 +0099"}, {}),
    "a name git cleans": ({"GIT_AUTHOR_NAME": " Bob."}, {}),
    "an email with brackets": ({"GIT_COMMITTER_EMAIL": "<a@b>"}, {}),
    "an empty name": ({"GIT_AUTHOR_NAME": ""}, {}),
    "a guessed identity": ({n: None for n in IDENT_ENV}, {}),
    "signing": ({}, {"commit.gpgSign": "false"}),
    "an encoding header": ({}, {"i18n.commitEncoding": "ISO-8859-1"}),
    "a shared repository": ({}, {"core.sharedRepository": "group"}),
}


@pytest.mark.parametrize("case", list(LEFT_TO_GIT))
def test_left_to_git(repo: Repo, monkeypatch: pytest.MonkeyPatch, case: str) -> None:
    monkeypatch.delenv("EMAIL", raising=False)
    setting(repo, monkeypatch, *LEFT_TO_GIT[case])
    assert ours(repo, repo.git("rev-parse", "HEAD^{tree}").strip(), [], "m\n") is None


def test_config_that_is_not_utf8_is_left_to_git(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git config's bytes are read with errors="replace": such a name goes to git."""
    with open(repo.path / ".git/config", "ab") as fh:
        fh.write(b'[author]\n\tname = "Caf\xe9"\n')
    monkeypatch.delenv("GIT_AUTHOR_NAME")
    tree = repo.git("rev-parse", "HEAD^{tree}").strip()
    assert ours(repo, tree, [], "m\n") is None


def test_an_identity_that_is_not_utf8_is_left_to_git(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Environment bytes that are not UTF-8 (Latin-1 \\xe9): git re-encodes them, so such an
    identity is left to git, never written raw into a commit here."""
    import os

    monkeypatch.setenv("GIT_AUTHOR_NAME", os.fsdecode(b"Caf\xe9 L1"))
    assert ours(repo, repo.git("rev-parse", "HEAD^{tree}").strip(), [], "m\n") is None
    repo.write("src/app.py", "print('two')\n")
    repo.cp("save", "-m", "two")
    raw = subprocess.run(
        ["git", "cat-file", "commit", "refs/checkpoints/main/cp_001"],
        cwd=repo.path,
        capture_output=True,
        check=True,
    ).stdout
    assert b"author Caf\xc3\xa9 L1 <" in raw  # as git writes it


def test_a_parent_named_twice_is_left_to_git(repo: Repo) -> None:
    head = repo.git("rev-parse", "HEAD").strip()
    assert ours(repo, repo.git("rev-parse", "HEAD^{tree}").strip(), [head, head], "m\n") is None


def test_a_save_writes_what_git_would_and_fsck_agrees(repo: Repo) -> None:
    """The checkpoint's commits, in-process, with the hermetic identity and dates."""
    repo.write("src/app.py", "print('two')\n")
    repo.write("notes.txt", "untracked\n")
    repo.cp("save", "-m", "two")
    for rev in ("refs/checkpoints/main/cp_001", "refs/checkpoints/main/cp_001^2"):
        raw = repo.git("cat-file", "commit", rev)
        assert "author Test Author <author@example.com> 1767225600 +0000" in raw
        assert "committer Test Committer <committer@example.com> 1767225600 +0000" in raw
    repo.git("fsck", "--strict", "--no-dangling")
