"""Attacks on 051f64b (a restore writes the `.gitattributes` it changes or removes
first, then stages the files below them again under the rules that stay:
materialize.restage, checked by stat data right before they are written).

The oracle for bytes is git itself: `git read-tree -u --reset <tree>` in a copy of the
repository taken just before the restore. Five findings: a concurrent edit lost (stat
data taken after the check), a removed rule's filter run and stopping the restore, a
rule file left as it is still ruling what was written below it, a folder named
.gitattributes in the way of the rule file, a filter run twice per file; each was a
strict xfail until fixed.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from .conftest import Repo
from .helpers import blob, fingerprint, forge_checkpoint, mktree, state
from .restore_oracle import (
    as_git_writes,
    cp_tree,
    edit_at,
    killed_run,
    read_tree_oracle,
    run_cp,
    same_as,
)

# --- filters of the rules the restore removes ----------------------------------------


def test_a_required_filter_of_a_removed_rule_does_not_stop_the_restore(
    repo: Repo, tmp_path: Path
) -> None:
    """The current .gitattributes names a required filter whose smudge fails; the target
    has no such rule. git's checkout removes the rule first and never runs the filter."""
    repo.write("a.txt", "one\n")
    repo.commit_all("no rules")
    repo.cp("save", "-m", "target")
    log = tmp_path / "smudged"
    repo.git("config", "filter.x.smudge", f"sh -c 'echo run >> {log}; exit 1'")
    repo.git("config", "filter.x.clean", "cat")
    repo.git("config", "filter.x.required", "true")
    repo.write(".gitattributes", "*.txt filter=x\n")
    repo.write("a.txt", "two\n")
    repo.git("add", "-A")
    wanted = read_tree_oracle(repo, cp_tree(repo, "cp_001"), tmp_path / "oracle")
    assert not log.exists()  # git never ran it
    proc = repo.cp("restore", "cp_001", expect=None)
    assert (proc.returncode, log.exists()) == (0, False), proc.stderr
    same_as(repo, wanted, ["a.txt", ".gitattributes"])


# --- a rule file edited during the restore (left as it is) ----------------------------


def test_a_rule_file_edited_during_the_restore_rules_nothing_after_continue(
    repo: Repo, tmp_path: Path
) -> None:
    """sub/.gitattributes is edited during the restore (after the safety checkpoint),
    so it is left as it is; the files below it must not be written under the edited
    rules for good: after --continue the work tree is what git writes for the target."""
    repo.write("sub/b.txt", "x\n")
    repo.commit_all("no rules")
    repo.cp("save", "-m", "target")
    repo.write("sub/.gitattributes", "*.txt eol=crlf\n")
    repo.write("sub/b.txt", "two\n")
    repo.git("add", "-A")
    as_git_writes(repo)
    env = edit_at(
        tmp_path, "update-ref", "printf '*.txt eol=crlf\\n*.md text\\n' > sub/.gitattributes"
    )
    proc = run_cp(repo, env, "restore", "cp_001")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "sub/.gitattributes (changed during the restore)" in proc.stderr
    repo.cp("restore", "--continue")
    assert not (repo.path / "sub/.gitattributes").exists()
    assert repo.git("status", "--porcelain") == ""
    wanted = read_tree_oracle(repo, cp_tree(repo, "cp_001"), tmp_path / "oracle")
    same_as(repo, wanted, ["sub/b.txt"])
    assert (repo.path / "sub/b.txt").read_bytes() == b"x\n"


# --- a smudge filter that fails on the second staging ---------------------------------


def _failing_once(repo: Repo, tmp_path: Path) -> Path:
    """filter.x: required, its smudge fails while `fail` exists (upper-cases otherwise)."""
    fail = tmp_path / "fail"
    repo.git("config", "filter.x.smudge", f"sh -c '[ -e {fail} ] && exit 1; tr a-z A-Z'")
    repo.git("config", "filter.x.clean", "tr A-Z a-z")
    repo.git("config", "filter.x.required", "true")
    return fail


def test_a_smudge_filter_failing_on_the_second_staging_goes_back(
    repo: Repo, tmp_path: Path
) -> None:
    """The target brings sub/.gitattributes naming filter x: the first staging (old
    rules, none) streams raw; the second runs the filter, which fails. Nothing of the
    restore stays; once the filter works, the restore gives git's bytes; undo goes back."""
    fail = _failing_once(repo, tmp_path)
    repo.write("sub/.gitattributes", "*.txt filter=x\n")
    repo.write("sub/a.txt", "one\n")
    repo.write("sub/b.bin", "bee\n")
    repo.commit_all("filter")
    repo.cp("save", "-m", "target")
    (repo.path / "sub/.gitattributes").unlink()
    repo.write("sub/a.txt", "two\n")
    repo.write("sub/b.bin", "two\n")
    repo.git("add", "-A")
    before = state(repo)
    fail.touch()
    proc = repo.cp("restore", "cp_001", expect=None)
    assert proc.returncode != 0
    assert state(repo) == before, proc.stderr
    undo = repo.cp("undo", expect=None)  # nothing to undo, or back to before
    assert state(repo) == before, undo.stderr
    fail.unlink()
    wanted = read_tree_oracle(repo, cp_tree(repo, "cp_001"), tmp_path / "oracle")
    assert wanted["sub/a.txt"][1] == b"ONE\n"
    repo.cp("restore", "cp_001")
    same_as(repo, wanted, ["sub/a.txt", "sub/b.bin", "sub/.gitattributes"])
    repo.cp("undo")
    assert state(repo) == before


# --- many rule changes at once, against git's bytes ------------------------------------

ODD = ["sp ace/f i.txt", "uni/ü-é.txt", "nl/a\nb.txt"]


def _rich_target(repo: Repo) -> None:
    """Target: root rule crlf, nested rules, files with odd names, a symlink below."""
    repo.write(".gitattributes", "*.txt eol=crlf\n")
    repo.write("a/.gitattributes", "*.txt -text\n*.md eol=crlf\n")
    repo.write("a/b/.gitattributes", "*.txt ident eol=crlf\n")
    repo.write(".gitignore", "*.log\n")
    for path in ["t.txt", "a/t.txt", "a/r.md", "a/b/t.txt", "a/b/gone.txt", "c/t.txt", *ODD]:
        repo.write(path, "x\n$Id$\n")
    os.symlink("t.txt", repo.path / "a/link.txt")
    repo.commit_all("target")
    repo.cp("save", "-m", "target")


def _rich_attempt(repo: Repo, how: str) -> None:
    repo.write(".gitattributes", "*.txt -text\n")  # changed
    (repo.path / "a/.gitattributes").unlink()  # removed
    repo.write("a/b/.gitattributes", "*.txt eol=lf\n")  # changed
    repo.write("c/.gitattributes", "*.txt eol=crlf\n")  # added (removed by the restore)
    (repo.path / "a/b/gone.txt").unlink()
    repo.write("a/b/new.txt", "added below a changed rule\n")  # removed by the restore
    for path in ["t.txt", "a/t.txt", "a/r.md", "a/b/t.txt", "c/t.txt", *ODD]:
        repo.write(path, "y\n")
    if how == "ignore":
        repo.write(".gitignore", "*.log\n*.tmp\n")
    elif how == "config":
        repo.write(".checkpoint.yaml", "exclude:\n  - '*.tmp'\n")
    elif how == "folder":
        (repo.path / "a/b/.gitattributes").unlink()
        repo.write("a/b/.gitattributes/x", "*.txt eol=lf\n")
    elif how == "symlink":
        (repo.path / "a/b/.gitattributes").unlink()
        repo.write("rules", "*.txt eol=lf\n")
        os.symlink("../../rules", repo.path / "a/b/.gitattributes")
    repo.git("add", "-A")
    repo.write("a/b/untracked.txt", "overlay\n")  # untracked below a changed rule


@pytest.mark.parametrize(
    "how",
    [
        "plain",
        "ignore",
        "config",
        "folder",
        "symlink",
    ],
)
def test_many_rule_changes_at_once_give_gits_bytes(repo: Repo, tmp_path: Path, how: str) -> None:
    _rich_target(repo)
    _rich_attempt(repo, how)
    as_git_writes(repo)
    before = state(repo)
    tree = cp_tree(repo, "cp_001")
    wanted = read_tree_oracle(repo, tree, tmp_path / "oracle")
    repo.cp("restore", "cp_001")
    listed = repo.git("ls-tree", "-r", "-z", "--name-only", tree).split("\0")
    paths = [p for p in listed if p] + ["a/b/new.txt", "c/.gitattributes", "rules"]
    same_as(repo, wanted, paths)
    assert repo.git("status", "--porcelain", "--untracked-files=no") == ""
    repo.cp("undo")
    assert state(repo) == before


# --- killed at each git call: --continue gives git's bytes, undo the state before -------


def test_a_killed_rule_changing_restore_continues_or_undoes(repo: Repo, tmp_path: Path) -> None:
    _rich_target(repo)
    _rich_attempt(repo, "ignore")
    as_git_writes(repo)
    before = state(repo)
    template = tmp_path / "template"
    shutil.copytree(repo.path, template, symlinks=True)
    whole = tmp_path / "whole"
    shutil.copytree(template, whole, symlinks=True)
    code, calls = killed_run(whole, tmp_path, 0, "restore", "cp_001")
    assert code == 0
    assert len(calls) > 10
    after = state(Repo(whole))
    assert after[0]["t.txt"][1] == b"x\r\n$Id$\r\n"
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


# --- a fetched checkpoint whose .gitattributes names a locally configured filter ----


def _forged_filter_restore(repo: Repo, tmp_path: Path) -> tuple[list[str], list[str], bool]:
    """filter.x is configured here; a fetched checkpoint's .gitattributes names it and
    changes a.txt. Returns the filter runs of git's checkout and of the restore, and
    whether the restore wrote git's bytes."""
    log = tmp_path / "filter.log"
    repo.git("config", "filter.x.smudge", f"sh -c 'echo smudge %f >> {log}; tr a-z A-Z'")
    repo.git("config", "filter.x.clean", f"sh -c 'echo clean %f >> {log}; tr A-Z a-z'")
    repo.write("a.txt", "one\n")
    repo.write("b.txt", "bee\n")
    repo.write("sub/c.txt", "sea\n")
    repo.commit_all("no rules")
    for path in ("a.txt", "b.txt", "sub/c.txt"):  # not racily clean: git trusts the index
        os.utime(repo.path / path, (1_600_000_000, 1_600_000_000))
    repo.git("update-index", "--really-refresh")
    entries = []
    for row in repo.git("ls-tree", "HEAD").splitlines():
        meta, name = row.split("\t", 1)
        mode, kind, oid = meta.split()
        if name != "a.txt":
            entries.append((mode, kind, oid, name))
    entries.append(("100644", "blob", blob(repo, b"changed\n"), "a.txt"))
    entries.append(("100644", "blob", blob(repo, b"*.txt filter=x\n"), ".gitattributes"))
    tree = mktree(repo, entries)
    forge_checkpoint(repo, tree)
    wanted = read_tree_oracle(repo, tree, tmp_path / "oracle")
    git_ran = sorted(" ".join(line.split()[:2]) for line in log.read_text().splitlines())
    log.unlink()
    repo.cp("restore", "cp_099")
    ours = sorted(" ".join(line.split()[:2]) for line in log.read_text().splitlines())
    paths = ["a.txt", "b.txt", "sub/c.txt", ".gitattributes"]
    got = fingerprint(repo.path)
    return git_ran, ours, {p: got.get(p) for p in paths} == {p: wanted.get(p) for p in paths}


def test_a_forged_rule_naming_a_filter_gives_gits_bytes(repo: Repo, tmp_path: Path) -> None:
    git_ran, ours, same = _forged_filter_restore(repo, tmp_path)
    assert same
    assert git_ran == ["smudge a.txt"]
    assert set(ours) == set(git_ran), ours == set(
        git_ran
    )  # nothing runs that git's checkout would not run


def test_a_forged_rule_naming_a_filter_runs_it_once_per_file(repo: Repo, tmp_path: Path) -> None:
    git_ran, ours, _ = _forged_filter_restore(repo, tmp_path)
    assert ours == git_ran


# --- an edit between the content check and the stat data taken after it ---------------


def test_an_edit_right_after_the_check_below_a_changed_rule_is_left_alone(
    repo: Repo, tmp_path: Path
) -> None:
    """sub/b.txt is below a rule the restore changes; it is checked against the safety
    checkpoint (git hashes it under the rules on disk), then its stat data is taken.
    An edit between the two is never seen: the stat data is taken after it. (CRLF on
    disk under eol=crlf makes the check ask git: raw_match cannot say.)"""
    repo.write(".gitattributes", "*.txt -text\n")
    repo.write("sub/b.txt", "bee\n")
    repo.commit_all("raw")
    repo.cp("save", "-m", "target")
    repo.write(".gitattributes", "*.txt eol=crlf\n")
    repo.write("sub/b.txt", "two\n")
    repo.git("add", "-A")
    as_git_writes(repo)
    env = edit_at(tmp_path, "hash-object", "echo concurrent >> sub/b.txt", after=True)
    proc = run_cp(repo, env, "restore", "cp_001")
    assert (tmp_path / "edited_after").exists(), "the check never asked git"
    assert (repo.path / "sub/b.txt").read_bytes() == b"two\r\nconcurrent\n", proc.stderr
    assert proc.returncode == 3
