"""A restore that adds, changes or removes a `.gitattributes`, killed at any of its git
or file system calls, then a `git status` (which refreshes the index's stat data), then
`restore --continue` or `undo`: `--continue` leaves the workspace byte for byte as the
uninterrupted restore leaves it (what git's checkout of the checkpoint writes, and git
sees it clean), `undo` as it was before. Whether a file is written already is judged by
its bytes, never by the index's stat data."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ..conftest import Repo, make_repo
from ..fault_injection import Runner, git
from ..fault_injection import checkpoint as checkpoint  # the fixture
from ..helpers import fingerprint
from .test_kill_points import (
    JOURNAL,
    Look,
    copy,
    differences,
    fs_matters,
    fsck_problems,
    look,
    pack,
    read_only,
)

CONVERTED = [*(f"docs/f{n}.txt" for n in range(11)), "same.txt", ".gitignore"]
RULE = "*.txt text eol=crlf\n.git* text eol=crlf\n"  # (itself included)


def _files(repo: Repo) -> None:
    repo.write("README.md", "# project\n")
    for path in CONVERTED:
        repo.write(path, f"{path}\nsecond line\n")
    repo.write(".gitignore", "*.log\nscratch/\n")


def _as_git_writes(repo: Repo) -> None:
    for path in CONVERTED:
        (repo.path / path).unlink()
    repo.git("checkout", "--", *CONVERTED)


def _rule_added(repo: Repo) -> None:
    """cp_001 holds a `.gitattributes` that makes its files CRLF, itself included; the
    workspace has none: the files edited but one, all LF (.gitignore and .gitattributes
    go first, as the rules before them convert them, then again once converted)."""
    repo.write(".gitattributes", RULE)
    _files(repo)
    repo.commit_all("converted")
    _as_git_writes(repo)
    repo.cp("save", "-m", "target")
    repo.git("rm", "-q", ".gitattributes")
    edited = [*CONVERTED[:-2], ".gitignore"]
    for path in edited:
        repo.write(path, f"{path}: the attempt's\n")
    repo.git("add", *edited)
    _as_git_writes(repo)


def _rule_changed(repo: Repo) -> None:
    """As _rule_added, but the workspace has a `.gitattributes` of its own, which rules
    how the restore stages cp_001's (LF): written again once converted by itself."""
    _rule_added(repo)
    repo.write(".gitattributes", "*.txt -text\n")
    repo.git("add", ".gitattributes")


def _rule_removed(repo: Repo) -> None:
    """cp_001 has no `.gitattributes`; the workspace has an untracked one that makes the
    files CRLF, all but one with cp_001's content."""
    _files(repo)
    repo.commit_all("plain")
    repo.cp("save", "-m", "target")
    repo.write(".gitattributes", RULE.replace("\n", "\r\n"))  # as git would write it
    repo.write(CONVERTED[0], "the attempt's\n")
    repo.git("add", CONVERTED[0])
    _as_git_writes(repo)


SCENARIOS = {"added": _rule_added, "changed": _rule_changed, "removed": _rule_removed}


def _oracle(path: Path, where: Path) -> dict[str, tuple[str, bytes, bool]]:
    """What git's checkout of cp_001 writes: a fresh worktree's files."""
    git(path, "worktree", "add", "-q", "--detach", str(where), "refs/checkpoints/main/cp_001")
    try:
        found = fingerprint(where)
    finally:
        git(path, "worktree", "remove", "--force", str(where))
    found.pop(".git", None)
    return found


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_a_killed_rule_changing_restore_continues_as_if_uninterrupted(
    checkpoint: Runner, tmp_path: Path, scenario: str
) -> None:
    repo = make_repo(tmp_path / "start")
    SCENARIOS[scenario](repo)
    pack(repo.path)
    template, before = repo.path, look(repo.path)
    whole_at = copy(template, tmp_path / "whole")
    whole = checkpoint(whole_at, "restore", "cp_001")
    assert whole.code == 0, whole.line()
    after = look(whole_at)
    assert after.status == "", after.status  # git sees nothing changed
    wanted = _oracle(whole_at, tmp_path / "oracle")
    assert {p: after.files.get(p) for p in wanted} == wanted
    wrong: list[str] = []
    seen: set[str] = set()
    for mode, calls in (("before", whole.calls), ("after", whole.calls), ("fs", whole.fs)):
        for n, call in enumerate(calls, 1):
            if (mode == "fs" and not fs_matters(call)) or (mode == "after" and read_only(call)):
                continue
            killed = copy(template, tmp_path / "killed")
            run = checkpoint(killed, "restore", "cp_001", kill_at=n, mode=mode)
            assert run.code == -9, f"not killed at {mode} {n}: {run.line()}"
            git(killed, "status", "--porcelain")  # refreshes the index's stat data
            now: Look = look(killed)
            key = repr(now) + str((killed / JOURNAL).exists())
            if key in seen or not (killed / JOURNAL).exists():
                shutil.rmtree(killed)
                continue
            seen.add(key)
            undone = copy(killed, tmp_path / "undone")
            for args, where, want in (
                (("restore", "--continue"), killed, after),
                (("undo",), undone, before),
            ):
                again = checkpoint(where, *args, kill_at=None)
                got = look(where)
                if again.code != 0 or got != want:
                    wrong.append(
                        f"kill {mode} {n} ({call[:40]}), {' '.join(args)}: {again.line()}; "
                        f"{differences(got, want)}"
                    )
                problem = fsck_problems(where) + (
                    "journal left" if (where / JOURNAL).exists() else ""
                )
                if problem:
                    wrong.append(f"kill {mode} {n}, {' '.join(args)}: {problem}")
                shutil.rmtree(where)
    assert seen, "no kill point left a restore to continue"
    assert not wrong, "\n".join(wrong)
