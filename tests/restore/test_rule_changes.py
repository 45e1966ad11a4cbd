"""A restore that changes, adds or removes `.gitattributes`: the rule files are written
first and the files below them are staged raw (blob bytes only, no filter) and
converted once, under the rules that stay. Every file comes out as git's own checkout
writes it (`git read-tree -u --reset <tree>` in a copy of the repository taken just
before the restore is the oracle), for large files, executables and symlinks alike;
filters run once per file and only where git's checkout runs them.

What must still hold when something goes wrong: a missing blob below a changed rule
stops the restore before anything changes; a smudge filter that fails leaves the
workspace as it was (a --continue goes back to its own safety checkpoint and leaves the
interrupted restore), with `undo` and `restore --continue` behaving; an edit made during
the restore, below a changed rule, is left alone; killed at any git call, the restore
continues or undoes."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from ..conftest import Repo
from ..helpers import blob, fingerprint, forge_checkpoint, mktree, state
from ..restore_oracle import (
    as_git_writes,
    cp_tree,
    edit_at,
    killed_run,
    read_tree_oracle,
    run_cp,
    same_as,
)
from .conftest import fresh_checkout

MISSING = "1234567890123456789012345678901234567890"


BIG = 3 << 20  # over MEMORY_BLOB_MAX (1 MiB): _stream_raw spills it to a staged file


def _one_line(proc: subprocess.CompletedProcess[str], codes: tuple[int, ...]) -> None:
    assert proc.returncode in codes, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = [x for x in proc.stderr.strip().splitlines() if not x.startswith("warning: ")]
    assert len(lines) == 1, proc.stderr


def _tree(repo: Repo, rows: list[tuple[str, str, str]]) -> str:
    """A tree from (mode, name, id) rows; ids may be missing (mktree --missing)."""
    text = "".join(
        f"{mode} {'tree' if mode == '040000' else 'blob'} {oid}\t{name}\n"
        for mode, name, oid in rows
    )
    return repo.git("mktree", "--missing", input=text.encode()).strip()


def _big_text(seed: str) -> bytes:
    line = f"{seed} line of a big text file\n".encode()
    return line * (BIG // len(line) + 1)


# --- a missing blob below a changed rule ----------------------------------------------


@pytest.mark.parametrize("rule", ["changed", "added", "removed"])
@pytest.mark.parametrize("mode", ["100644", "100755", "120000"])
def test_a_missing_blob_below_a_changed_rule_stops_before_anything(
    repo: Repo, rule: str, mode: str
) -> None:
    """The forged target's sub/a.txt names a blob this repository lacks; sub/big.txt
    (spilled, read before it) and a file outside the rules are fine. Nothing changes."""
    if rule != "added":
        repo.write("sub/.gitattributes", "*.txt -text\n")
    repo.write("sub/a.txt", "one\n")
    repo.write("sub/big.txt", _big_text("old"))
    repo.write("top.txt", "top\n")
    repo.commit_all("base")
    sub = [
        (mode, "a.txt", MISSING),
        ("100644", "big.txt", blob(repo, _big_text("new"))),
        ("100644", "c.txt", blob(repo, b"new below\n")),
    ]
    if rule != "removed":
        sub.append(("100644", ".gitattributes", blob(repo, b"*.txt eol=crlf\n")))
    root = [
        ("040000", "sub", _tree(repo, sub)),
        ("100644", "top.txt", blob(repo, b"top changed\n")),
    ]
    forge_checkpoint(repo, _tree(repo, root))
    repo.write("sub/a.txt", "two\n")
    repo.write("top.txt", "edited\n")
    before = state(repo)
    proc = repo.cp("restore", "cp_099", expect=None)
    _one_line(proc, (3, 4))
    assert state(repo) == before
    again = repo.cp("restore", "--continue", expect=None)
    assert again.returncode == 2, again.stderr  # nothing interrupted
    assert state(repo) == before


# --- a smudge filter that fails below a changed rule ----------------------------------


def _filter(repo: Repo, tmp_path: Path, required: bool = True) -> Path:
    """filter.x upper-cases; its smudge fails while `fail` exists."""
    fail = tmp_path / "fail"
    repo.git("config", "filter.x.smudge", f"sh -c '[ -e {fail} ] && exit 1; tr a-z A-Z'")
    repo.git("config", "filter.x.clean", "tr A-Z a-z")
    repo.git("config", "filter.x.required", "true" if required else "false")
    return fail


def _filter_target(repo: Repo) -> None:
    """Target: sub/.gitattributes names filter x; other rules and files change too."""
    repo.write("sub/.gitattributes", "*.txt filter=x\n")
    repo.write("sub/a.txt", "one\n")
    repo.write("sub/big.txt", _big_text("target"))
    repo.write("sub/run.sh", "#!/bin/sh\necho target\n", mode=0o755)
    repo.write("other/.gitattributes", "*.txt eol=crlf\n")
    repo.write("other/o.txt", "o\n")
    repo.write("top.txt", "top\n")
    repo.commit_all("filter")
    repo.cp("save", "-m", "target")


def _filter_attempt(repo: Repo) -> None:
    (repo.path / "sub/.gitattributes").unlink()
    repo.write("sub/a.txt", "two\n")
    repo.write("sub/big.txt", _big_text("attempt"))
    repo.write("sub/run.sh", "#!/bin/sh\necho attempt\n", mode=0o644)
    (repo.path / "other/.gitattributes").unlink()
    repo.write("other/o.txt", "changed\n")
    repo.write("top.txt", "top changed\n")
    repo.write("sub/new.txt", "added below\n")
    repo.git("add", "-A")
    as_git_writes(repo)


def test_a_failing_smudge_below_a_changed_rule_puts_everything_back(
    repo: Repo, tmp_path: Path
) -> None:
    fail = _filter(repo, tmp_path)
    _filter_target(repo)
    _filter_attempt(repo)
    before = state(repo)
    fail.touch()
    proc = repo.cp("restore", "cp_001", expect=None)
    _one_line(proc, (3, 4))
    assert state(repo) == before, proc.stderr
    cont = repo.cp("restore", "--continue", expect=None)
    assert cont.returncode == 2, cont.stderr  # the failed restore went back by itself
    assert state(repo) == before
    fail.unlink()
    wanted = read_tree_oracle(repo, cp_tree(repo, "cp_001"), tmp_path / "oracle")
    assert wanted["sub/a.txt"][1] == b"ONE\n"
    repo.cp("restore", "cp_001")
    paths = [
        "sub/.gitattributes", "sub/a.txt", "sub/big.txt", "sub/run.sh", "sub/new.txt",
        "other/.gitattributes", "other/o.txt", "top.txt",
    ]  # fmt: skip
    same_as(repo, wanted, paths)
    assert repo.git("status", "--porcelain", "--untracked-files=no") == ""
    repo.cp("undo")
    assert state(repo) == before


def test_a_failing_optional_smudge_below_a_changed_rule_gives_gits_bytes(
    repo: Repo, tmp_path: Path
) -> None:
    """Not required: git writes the blob as it is and goes on; so must the restore."""
    fail = _filter(repo, tmp_path, required=False)
    _filter_target(repo)
    _filter_attempt(repo)
    before = state(repo)
    fail.touch()
    wanted = read_tree_oracle(repo, cp_tree(repo, "cp_001"), tmp_path / "oracle")
    assert wanted["sub/a.txt"][1] == b"one\n"
    repo.cp("restore", "cp_001")
    same_as(repo, wanted, ["sub/.gitattributes", "sub/a.txt", "sub/big.txt", "sub/run.sh"])
    repo.cp("undo")
    assert state(repo) == before


def test_a_failing_smudge_during_continue_puts_back_what_it_found(
    repo: Repo, tmp_path: Path
) -> None:
    """The rule file is edited during the restore (left, nothing written below it); the
    --continue then writes it and its filter fails. The --continue fails cleanly and
    leaves the workspace as it found it; once the filter works, --continue finishes."""
    fail = _filter(repo, tmp_path)
    _filter_target(repo)
    _filter_attempt(repo)
    repo.write("sub/.gitattributes", "*.md text\n")  # changed, not removed: edited below
    repo.git("add", "-A")
    env = edit_at(tmp_path, "update-ref", "echo '*.md -text' > sub/.gitattributes")
    first = run_cp(repo, env, "restore", "cp_001")
    assert first.returncode == 3, first.stderr
    assert "sub/.gitattributes (changed during the restore)" in first.stderr
    interrupted = state(repo)
    fail.touch()
    cont = repo.cp("restore", "--continue", expect=None)
    _one_line(cont, (3, 4))
    assert (repo.path / "sub/.gitattributes").read_text() == "*.md -text\n", cont.stderr
    assert state(repo) == interrupted, cont.stderr
    fail.unlink()
    wanted = read_tree_oracle(repo, cp_tree(repo, "cp_001"), tmp_path / "oracle")
    repo.cp("restore", "--continue")
    same_as(repo, wanted, ["sub/.gitattributes", "sub/a.txt", "sub/big.txt", "sub/run.sh"])
    assert repo.git("status", "--porcelain", "--untracked-files=no") == ""


# --- large files, executables and symlinks below a changed rule -----------------------


@pytest.mark.parametrize("rule", ["changed", "added", "removed", "filter"])
def test_large_files_below_a_changed_rule_give_gits_bytes(
    repo: Repo, tmp_path: Path, rule: str
) -> None:
    if rule == "filter":
        _filter(repo, tmp_path)
    rules = {
        "changed": "*.txt eol=crlf\n*.sh eol=crlf\n",
        "added": "*.txt eol=crlf\n*.sh eol=crlf\n",
        "removed": None,
        "filter": "*.txt filter=x\n*.sh filter=x\n",
    }[rule]
    if rules is not None:
        repo.write("sub/.gitattributes", rules)
    repo.write("sub/big.txt", _big_text("target"))
    repo.write("sub/big.sh", b"#!/bin/sh\n" + _big_text("exec"), mode=0o755)
    repo.write("sub/deep/big2.txt", _big_text("deep"))
    repo.write("sub/small.txt", "small\n")
    repo.write("sub/bin.dat", bytes(range(256)) * (BIG // 256))
    repo.commit_all("target")
    repo.cp("save", "-m", "target")
    if rule == "changed":
        repo.write("sub/.gitattributes", "*.txt -text\n")
    elif rule == "added":
        (repo.path / "sub/.gitattributes").unlink()
    else:  # the target has none (removed) or the filter's rule: the attempt another
        repo.write("sub/.gitattributes", "*.txt eol=crlf\n*.sh ident\n")
    repo.write("sub/big.txt", _big_text("attempt"))
    repo.write("sub/big.sh", b"#!/bin/sh\n" + _big_text("attempt exec"), mode=0o644)
    (repo.path / "sub/deep/big2.txt").unlink()
    repo.write("sub/small.txt", "SMALL\n")
    repo.write("sub/bin.dat", b"\0" * BIG)
    repo.write("sub/new_big.txt", _big_text("new"))  # removed by the restore
    repo.git("add", "-A")
    as_git_writes(repo)
    before = state(repo)
    tree = cp_tree(repo, "cp_001")
    wanted = read_tree_oracle(repo, tree, tmp_path / "oracle")
    repo.cp("restore", "cp_001")
    paths = [
        "sub/.gitattributes", "sub/big.txt", "sub/big.sh", "sub/deep/big2.txt",
        "sub/small.txt", "sub/bin.dat", "sub/new_big.txt",
    ]  # fmt: skip
    same_as(repo, wanted, paths)
    assert repo.git("status", "--porcelain", "--untracked-files=no") == ""
    assert not list((repo.path / ".git/checkpoint/staging").iterdir())
    repo.cp("undo")
    assert state(repo) == before


@pytest.mark.parametrize("symlinks", [True, False])
def test_symlinks_and_executables_below_a_changed_rule_give_gits_bytes(
    repo: Repo, tmp_path: Path, symlinks: bool
) -> None:
    """A rule for every name but the rule file's own; the links are added or removed by
    the restore."""
    rule = "*.txt text eol=crlf\n*.sh text eol=crlf\nlink* text eol=crlf\n"
    repo.write("sub/.gitattributes", rule)
    repo.write("sub/t.txt", "t\nline\n")
    repo.write("sub/run.sh", "#!/bin/sh\necho hi\n", mode=0o755)
    repo.write("sub/plain.sh", "#!/bin/sh\necho plain\n")
    os.symlink("t.txt", repo.path / "sub/link")
    repo.commit_all("target")
    repo.cp("save", "-m", "target")
    if not symlinks:
        repo.git("config", "core.symlinks", "false")
        as_git_writes(repo)  # the links are files holding their targets now
    repo.write("sub/.gitattributes", "* -text\n")
    repo.write("sub/run.sh", "#!/bin/sh\necho changed\n", mode=0o644)
    repo.write("sub/plain.sh", "#!/bin/sh\necho plain\n", mode=0o755)
    repo.write("sub/t.txt", "t\nchanged\n")
    (repo.path / "sub/link").unlink()  # brought back by the restore
    if symlinks:
        os.symlink("run.sh", repo.path / "sub/link_new")  # removed by the restore
    else:
        repo.write("sub/link_new", "run.sh")
    repo.git("add", "-A")
    as_git_writes(repo)
    before = state(repo)
    wanted = read_tree_oracle(repo, cp_tree(repo, "cp_001"), tmp_path / "oracle")
    repo.cp("restore", "cp_001")
    paths = [
        "sub/.gitattributes", "sub/t.txt", "sub/run.sh", "sub/plain.sh", "sub/link",
        "sub/link_new",
    ]  # fmt: skip
    same_as(repo, wanted, paths)
    assert repo.git("status", "--porcelain", "--untracked-files=no") == ""
    repo.cp("undo")
    assert state(repo) == before


@pytest.mark.parametrize("how", ["changed", "undo"])
def test_a_link_file_under_core_symlinks_false_is_replaced(
    repo: Repo, tmp_path: Path, how: str
) -> None:
    repo.write("t.txt", "t\n")
    repo.write("run.sh", "r\n")
    os.symlink("t.txt", repo.path / "link")
    repo.commit_all("target")
    repo.cp("save", "-m", "target")
    repo.git("config", "core.symlinks", "false")
    as_git_writes(repo)
    if how == "changed":
        repo.write("link", "run.sh")  # (the index says symlink: git hashes it as one)
    else:
        repo.git("rm", "-q", "link")  # the restore brings it back, the undo removes it
    repo.git("add", "-A")
    before = state(repo)
    wanted = read_tree_oracle(repo, cp_tree(repo, "cp_001"), tmp_path / "oracle")
    first = repo.cp("restore", "cp_001", expect=None)
    assert first.returncode == 0, first.stderr
    same_as(repo, wanted, ["link"])
    undo = repo.cp("undo", expect=None)
    assert undo.returncode == 0, undo.stderr
    assert state(repo) == before


@pytest.mark.parametrize("where", ["own", "parent"])
def test_a_rule_file_converted_by_the_new_rules_gets_gits_bytes(
    repo: Repo, tmp_path: Path, where: str
) -> None:
    """A .gitattributes is staged under the rules on disk before they change (git's
    checkout reads the new ones): written once, then again once converted under the
    rules in place."""
    rule = ".gitattributes" if where == "own" else "sub/.gitattributes"
    repo.write(".gitattributes", "* text eol=crlf\n")
    repo.write("sub/.gitattributes", "*.txt ident\n")
    repo.write("sub/a.txt", "a\n")
    repo.commit_all("target")
    repo.cp("save", "-m", "target")
    repo.write(".gitattributes", "* -text\n")
    repo.write("sub/.gitattributes", "*.txt -ident\n")
    repo.write("sub/a.txt", "b\n")
    repo.git("add", "-A")
    as_git_writes(repo)
    wanted = read_tree_oracle(repo, cp_tree(repo, "cp_001"), tmp_path / "oracle")
    assert wanted[rule][1].endswith(b"\r\n")
    repo.cp("restore", "cp_001")
    same_as(repo, wanted, [rule, "sub/a.txt"])


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
    changes a.txt. Returns the filter runs of git's checkout of the checkpoint (a fresh
    worktree: the rule converts b.txt and sub/c.txt too, though their content stays) and
    of the restore, and whether the restore wrote git's bytes."""
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
    wanted = fresh_checkout(repo, forge_checkpoint(repo, tree), tmp_path / "oracle")
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
    assert git_ran == ["smudge a.txt", "smudge b.txt", "smudge sub/c.txt"]
    assert set(ours) == set(git_ran)  # nothing runs that git's checkout would not run


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
    disk under eol=crlf makes the check ask git: restore/checks.raw_match cannot say.)"""
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


def test_an_edit_while_files_are_staged_again_is_left_alone(repo: Repo) -> None:
    """Files below a .gitattributes the restore changes are checked before the rules
    change, then staged again under the new rules; one edited meanwhile (here by the
    smudge filter, which runs once the rules have changed) is left as it is."""
    script = repo.path.parent / "smudge.sh"
    count = repo.path.parent / "count"
    script.write_text(
        f"n=$(cat '{count}' 2>/dev/null || echo 0); n=$((n + 1)); echo $n > '{count}'\n"
        '[ "$n" -ge 1 ] && echo concurrent >> sub/b.txt\ncat\n'
    )
    repo.git("config", "filter.x.smudge", f"sh '{script}'")
    repo.git("config", "filter.x.clean", "cat")
    repo.write(".gitattributes", "a.txt filter=x\n")
    repo.write("sub/a.txt", "one\n")
    repo.write("sub/b.txt", "bee\n")
    repo.commit_all("rules")
    repo.cp("save", "-m", "target")
    repo.write("sub/.gitattributes", "*.txt -text\n")
    repo.write("sub/a.txt", "two\n")
    repo.write("sub/b.txt", "attempt\n")
    repo.git("add", "-A")
    count.unlink(missing_ok=True)
    proc = repo.cp("restore", "cp_001", expect=3)
    assert "sub/b.txt (changed during the restore)" in proc.stderr
    assert (repo.path / "sub/b.txt").read_text() == "attempt\nconcurrent\n"
    assert int(count.read_text()) == 1  # once: staged raw first, converted after the rules
