"""A restore that removes a `.gitattributes` stages the files it writes against only the
rules that stay, as git's checkout does (a fresh worktree of the checkpoint commit is the
oracle): nested rules, a rule file that is a symlink or a folder, filters, ident,
encodings, autocrlf and rules from outside the tree, an ignored rule file left on disk;
and killed at any git call, it continues or undoes."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from ..conftest import Repo
from ..helpers import state
from ..restore_oracle import as_git_writes, killed_run, read_tree_oracle, same_as
from .conftest import cp_commit, fresh_checkout


def test_nested_rules_one_removed_one_kept_one_changed(repo: Repo, tmp_path: Path) -> None:
    repo.write(".gitattributes", "*.txt eol=crlf\n")
    repo.write("keep/.gitattributes", "*.txt ident\n")
    repo.write("chg/.gitattributes", "*.txt -text\n")
    for path in ("a.txt", "keep/b.txt", "chg/c.txt", "gone/d.txt"):
        repo.write(path, "x\n$Id$\n")
    repo.commit_all("rules")
    repo.cp("save", "-m", "target")
    repo.write("gone/.gitattributes", "*.txt -text\n")  # removed by the restore
    repo.write("chg/.gitattributes", "*.txt eol=lf\n")  # changed back by the restore
    for path in ("a.txt", "keep/b.txt", "chg/c.txt", "gone/d.txt"):
        repo.write(path, "y\n")
    repo.git("add", "-A")
    as_git_writes(repo)
    before = state(repo)
    repo.cp("restore", "cp_001")
    wanted = fresh_checkout(repo, cp_commit(repo, "cp_001"), tmp_path / "oracle")
    same_as(repo, wanted, list(wanted))
    assert not (repo.path / "gone/.gitattributes").exists()
    repo.cp("undo")
    assert state(repo) == before


def test_a_changed_rule_without_a_removal_applies_as_git_checkout(
    repo: Repo, tmp_path: Path
) -> None:
    """No rule file removed (attributes=None): the changed .gitattributes is staged."""
    repo.write(".gitattributes", "*.txt eol=crlf\n")
    repo.write("t.txt", "one\n")
    repo.commit_all("crlf")
    repo.cp("save", "-m", "target")
    repo.write(".gitattributes", "*.txt -text\n")
    repo.write("t.txt", "two\n")
    repo.git("add", "-A")
    repo.cp("restore", "cp_001")
    wanted = fresh_checkout(repo, cp_commit(repo, "cp_001"), tmp_path / "oracle")
    same_as(repo, wanted, ["t.txt", ".gitattributes"])


@pytest.mark.parametrize("kind", ["symlink", "folder"])
def test_a_target_rule_file_that_is_a_symlink_or_folder(
    repo: Repo, tmp_path: Path, kind: str
) -> None:
    repo.write("rules.txt", "*.txt eol=crlf\n")
    if kind == "symlink":
        os.symlink("rules.txt", repo.path / ".gitattributes")
    else:
        repo.write(".gitattributes/x", "*.txt eol=crlf\n")
    repo.write("sub/a.txt", "one\n")
    repo.commit_all("odd root rule")
    repo.cp("save", "-m", "target")
    repo.write("sub/.gitattributes", "*.txt eol=crlf\n")
    repo.write("sub/a.txt", "two\n")
    repo.git("add", "-A")
    repo.cp("restore", "cp_001")
    wanted = fresh_checkout(repo, cp_commit(repo, "cp_001"), tmp_path / "oracle")
    same_as(repo, wanted, list(wanted))


@pytest.mark.parametrize("how", ["filter", "ident", "encoding", "autocrlf", "info", "global"])
def test_removed_rule_with_other_conversions_still_applied(
    repo: Repo, tmp_path: Path, how: str
) -> None:
    git_dir = repo.path / ".git"
    if how == "filter":
        repo.git("config", "filter.up.smudge", "tr a-z A-Z")
        repo.git("config", "filter.up.clean", "tr A-Z a-z")
        repo.write(".gitattributes", "*.txt filter=up\n")
    elif how == "ident":
        repo.write(".gitattributes", "*.txt ident\n")
    elif how == "encoding":
        repo.write(".gitattributes", "*.txt working-tree-encoding=UTF-16LE eol=lf\n")
    elif how == "autocrlf":
        repo.git("config", "core.autocrlf", "true")
    elif how == "info":
        (git_dir / "info").mkdir(exist_ok=True)
        (git_dir / "info" / "attributes").write_text("*.txt eol=crlf\n")
    elif how == "global":
        rules = repo.path.parent / "global-attributes"
        rules.write_text("*.txt eol=crlf ident\n")
        repo.git("config", "core.attributesFile", str(rules))
    text = "héllo\n$Id$\n"
    data = text.encode("utf-16-le") if how == "encoding" else text.encode()
    repo.write("sub/a.txt", data)
    repo.write("b.txt", data)
    repo.commit_all("base")
    repo.cp("save", "-m", "target")
    repo.write("sub/.gitattributes", "*.txt -text -ident\n")
    repo.write("sub/a.txt", "two\n")
    repo.write("b.txt", "two\n")
    repo.git("add", "-A")
    repo.cp("restore", "cp_001")
    assert not (repo.path / "sub/.gitattributes").exists()
    wanted = fresh_checkout(repo, cp_commit(repo, "cp_001"), tmp_path / "oracle")
    same_as(repo, wanted, ["sub/a.txt", "b.txt"])


def test_a_smudge_filter_run_from_the_work_tree(repo: Repo, tmp_path: Path) -> None:
    """git runs a filter command in the work tree's top folder: a repository-local
    script (`sh tools/up.sh`) is found there."""
    repo.write("tools/up.sh", "tr a-z A-Z\n")
    repo.git("config", "filter.up.smudge", "sh tools/up.sh")
    repo.git("config", "filter.up.clean", "tr A-Z a-z")
    repo.write(".gitattributes", "*.txt filter=up\n")
    repo.write("a.txt", "hello\n")
    repo.commit_all("filter")
    repo.cp("save", "-m", "target")
    repo.write("sub/.gitattributes", "*.txt -text\n")
    repo.write("a.txt", "two\n")
    repo.git("add", "-A")
    wanted = read_tree_oracle(repo, cp_commit(repo, "cp_001") + "^{tree}", tmp_path / "oracle")
    assert wanted["a.txt"][1] == b"HELLO\n"  # (a fresh worktree has no tools/up.sh yet)
    proc = repo.cp("restore", "cp_001")
    assert (repo.path / "a.txt").read_bytes() == b"HELLO\n", proc.stdout + proc.stderr


def test_an_ignored_rule_file_left_on_disk(repo: Repo, tmp_path: Path) -> None:
    """An ignored .gitattributes is not captured and stays on disk; git's checkout reads
    it (no tracked rule file in its folder)."""
    repo.write(".gitignore", "*.log\nlocal/.gitattributes\n")
    repo.write("local/a.txt", "one\n")
    repo.commit_all("ignored rules")
    repo.cp("save", "-m", "target")
    repo.write("local/.gitattributes", "*.txt eol=crlf\n")  # ignored
    repo.write("sub/.gitattributes", "*.txt -text\n")
    repo.write("local/a.txt", "two\n")
    repo.git("add", "-A")
    tree = repo.git("rev-parse", f"{cp_commit(repo, 'cp_001')}^{{tree}}").strip()
    wanted = read_tree_oracle(repo, tree, tmp_path / "copy")
    repo.cp("restore", "cp_001")
    same_as(repo, wanted, ["local/a.txt", "local/.gitattributes"])


# --- a restore that removes a rule file, killed at each git call, then --continue ----


def test_a_killed_rule_removing_restore_continues_or_undoes(repo: Repo, tmp_path: Path) -> None:
    repo.write(".gitattributes", "*.txt eol=crlf\n")
    repo.write("sub/a.txt", "one\n")
    repo.write("b.txt", "bee\n")
    repo.commit_all("rules")
    repo.cp("save", "-m", "target")
    repo.write("sub/.gitattributes", "*.txt -text\n")
    repo.write("sub/a.txt", "two\n")
    repo.write("b.txt", "two\n")
    repo.git("add", "-A")
    as_git_writes(repo)
    before = state(repo)
    template = tmp_path / "template"
    shutil.copytree(repo.path, template, symlinks=True)
    whole = tmp_path / "whole"
    shutil.copytree(template, whole, symlinks=True)
    code, calls = killed_run(whole, tmp_path, 0, "restore", "cp_001")
    assert code == 0
    after = state(Repo(whole))
    assert after[0]["sub/a.txt"][1] == b"one\r\n"
    bad = []
    for n in range(1, len(calls) + 1):
        for how in ("continue", "undo"):
            copy = tmp_path / f"k{n}{how}"
            shutil.copytree(template, copy, symlinks=True)
            code, _ = killed_run(copy, tmp_path, n, "restore", "cp_001")
            if code != -9:
                continue
            if how == "continue":
                done = Repo(copy).cp("restore", "--continue", expect=None)
                got = state(Repo(copy))
                if not (got == after or (done.returncode == 2 and got == before)):
                    bad.append((n, how, calls[n - 1], done.returncode, done.stderr))
            else:
                done = Repo(copy).cp("undo", expect=None)
                if state(Repo(copy)) != before and done.returncode != 2:
                    bad.append((n, how, calls[n - 1], done.returncode, done.stderr))
            shutil.rmtree(copy)
    assert bad == []


def test_the_kept_rule_files_are_read_in_a_few_processes(repo: Repo, tmp_path: Path) -> None:
    for n in range(60):
        repo.write(f"d{n}/.gitattributes", "*.txt ident\n")
    repo.write("t.txt", "one\n")
    repo.commit_all("many rule files")
    repo.cp("save", "-m", "target")
    repo.write(".gitattributes", "*.txt -text\n")
    repo.write("t.txt", "two\n")
    repo.git("add", "-A")
    trace = tmp_path / "trace"
    repo.cp("restore", "cp_001", env={"GIT_TRACE": str(trace)})
    runs = [
        line for line in trace.read_text().splitlines() if "built-in: git cat-file blob" in line
    ]
    assert len(runs) <= 5
