"""Attacks on f9210b5: in a restore, the files below a `.gitattributes` the restore
changes or removes are staged raw first (blob bytes only, no filter), then converted
once by materialize.restage after the rule files are written or removed.

What must still hold: a missing blob below a changed rule stops the restore before
anything changes; a smudge filter that fails (now after the rules changed) leaves the
workspace as it was, with `undo` and `restore --continue` behaving; large files (spilled
to staged files, not memory), executables and symlinks (core.symlinks either way) below
a changed rule get git's bytes. The oracle is `git read-tree -u --reset <tree>` in a copy
of the repository taken just before the restore. Findings, strict xfails until fixed: a
--continue whose filter failed went back past the state it ran on (recovery._failed now
goes back to the --continue's own safety checkpoint and leaves the interrupted restore);
a link checked out as a file (core.symlinks=false) was never replaced or removed
(restore.raw_match). Still a strict xfail: a rule file converted by its own new rule is
written under the old one.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from .conftest import Repo
from .helpers import blob, forge_checkpoint, state
from .restore_oracle import as_git_writes, cp_tree, edit_at, read_tree_oracle, run_cp, same_as

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


# --- 1. a missing blob below a changed rule -----------------------------------------


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


# --- 2. a smudge filter that fails below a changed rule ------------------------------


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


# --- 3. large files, executables and symlinks below a changed rule ---------------------


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


@pytest.mark.xfail(
    strict=True,
    reason="a .gitattributes that its own new rule converts ('* text eol=crlf') is staged"
    " by checkout-index, which reads rules work tree first (git's check-in direction): the"
    " old rule file on disk rules it and it is written with LF; git's checkout reads the"
    " new index first and writes CRLF (not from f9210b5: the rule files were staged so"
    " before; only the files below them are converted after the rules change)",
)
@pytest.mark.parametrize("where", ["own", "parent"])
def test_a_rule_file_converted_by_the_new_rules_gets_gits_bytes(
    repo: Repo, tmp_path: Path, where: str
) -> None:
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
