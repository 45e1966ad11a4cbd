"""What a restore writes is what `git checkout` of the same checkpoint writes (a fresh
detached worktree of the checkpoint commit, same repository config): eol and autocrlf
(a bare `autocrlf` is true, as git reads it), filters, ident, working-tree-encoding,
the rule files it brings back or removes, awkward names, exec bits, symlinks either way
of core.symlinks; and the files it writes are clean in the index."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from ..conftest import Repo
from .conftest import same_as_checkout, staging_empty

# --- attributes, eol, filters: restore writes what git checkout writes ----------------

TEXT = "one\ntwo\n$Id$\nMixed Case\n"


def _attr_setup(repo: Repo, how: str) -> None:
    git_dir = repo.path / ".git"
    if how == "root-eol-crlf":
        repo.write(".gitattributes", "*.txt eol=crlf\n")
    elif how == "sub-eol-crlf":
        repo.write("sub/.gitattributes", "*.txt text eol=crlf\n")
    elif how == "info-attributes":
        (git_dir / "info").mkdir(exist_ok=True)
        (git_dir / "info" / "attributes").write_text("*.txt eol=crlf\n")
    elif how == "core-attributesfile":
        rules = repo.path.parent / "global-attributes"
        rules.write_text("*.txt eol=crlf ident\n")
        repo.git("config", "core.attributesFile", str(rules))
    elif how == "ident":
        repo.write("sub/.gitattributes", "*.txt ident\n")
    elif how == "filter":
        repo.git("config", "filter.up.smudge", "tr a-z A-Z")
        repo.git("config", "filter.up.clean", "tr A-Z a-z")
        repo.write(".gitattributes", "*.txt filter=up\n")
    elif how == "text-auto-core-eol":
        repo.git("config", "core.eol", "crlf")
        repo.write(".gitattributes", "* text=auto\n")
    elif how == "macro":
        repo.write(".gitattributes", "[attr]windows text eol=crlf\n*.txt windows\n")
    elif how in ("autocrlf-true", "autocrlf-input"):
        repo.git("config", "core.autocrlf", how.removeprefix("autocrlf-"))


@pytest.mark.parametrize(
    "how",
    [
        "root-eol-crlf",
        "sub-eol-crlf",
        "info-attributes",
        "core-attributesfile",
        "ident",
        "filter",
        "text-auto-core-eol",
        "macro",
        "autocrlf-true",
        "autocrlf-input",
        "none",
    ],
)
def test_a_converting_rule_gives_the_bytes_git_checkout_gives(
    repo: Repo, tmp_path: Path, how: str
) -> None:
    _attr_setup(repo, how)
    for path in ("a.txt", "sub/b.txt", "sub/deep/c.txt", "plain.bin"):
        repo.write(path, TEXT)
    repo.write("run.sh", "#!/bin/sh\necho hi\n", mode=0o755)
    repo.commit_all("files")
    repo.cp("save", "-m", "base")
    written = ["a.txt", "sub/b.txt", "sub/deep/c.txt", "plain.bin", "run.sh"]
    for path in written:
        (repo.path / path).unlink()
    repo.write("a.txt", "changed\n")
    repo.cp("restore", "cp_001")
    same_as_checkout(repo, "cp_001", tmp_path, written)
    staging_empty(repo)


def test_working_tree_encoding_is_applied_on_the_raw_path_check(repo: Repo, tmp_path: Path) -> None:
    repo.write(".gitattributes", "*.u16 working-tree-encoding=UTF-16LE eol=lf\n")
    repo.write("w.u16", "héllo\n".encode("utf-16-le"))
    repo.commit_all("utf16")
    repo.cp("save", "-m", "base")
    (repo.path / "w.u16").unlink()
    repo.cp("restore", "cp_001")
    assert (repo.path / "w.u16").read_bytes() == "héllo\n".encode("utf-16-le")
    same_as_checkout(repo, "cp_001", tmp_path)


def test_a_rule_file_the_restore_brings_back_applies_to_the_files_it_writes(
    repo: Repo, tmp_path: Path
) -> None:
    repo.write(".gitattributes", "*.txt eol=crlf\n")
    repo.write("sub/.gitattributes", "*.txt -text\n")
    repo.write("t.txt", "one\n")
    repo.write("sub/u.txt", "two\n")
    repo.commit_all("rules")
    repo.cp("save", "-m", "with rules")
    for path in (".gitattributes", "sub/.gitattributes", "t.txt", "sub/u.txt"):
        (repo.path / path).unlink()
    repo.cp("restore", "cp_001")
    assert (repo.path / "t.txt").read_bytes() == b"one\r\n"
    same_as_checkout(repo, "cp_001", tmp_path)


def test_a_rule_file_the_restore_removes_no_longer_applies(repo: Repo, tmp_path: Path) -> None:
    repo.write("t.txt", "one\n")
    repo.commit_all("no rules")
    repo.cp("save", "-m", "no rules")
    repo.write(".gitattributes", "*.txt eol=crlf\n")
    repo.write("t.txt", "two\n")
    repo.git("add", ".gitattributes", "t.txt")
    repo.cp("restore", "cp_001")
    assert not (repo.path / ".gitattributes").exists()
    assert (repo.path / "t.txt").read_bytes() == b"one\n"  # git checkout: LF
    staging_empty(repo)


def test_a_removed_rule_file_leaves_the_rules_that_stay(repo: Repo, tmp_path: Path) -> None:
    """The restore removes sub/.gitattributes (it turned conversion off there): the
    root's rule, which the target keeps, converts sub/a.txt again, as git's checkout."""
    repo.write(".gitattributes", "*.txt eol=crlf\n")
    repo.write("sub/a.txt", "one\n")
    repo.commit_all("root rule")
    repo.cp("save", "-m", "root rule only")
    repo.write("sub/.gitattributes", "*.txt -text\n")
    repo.write("sub/a.txt", "two\n")
    repo.git("add", "sub")
    repo.cp("restore", "cp_001")
    assert not (repo.path / "sub/.gitattributes").exists()
    assert (repo.path / "sub/a.txt").read_bytes() == b"one\r\n"
    same_as_checkout(repo, "cp_001", tmp_path)
    assert repo.git("status", "--porcelain") == ""
    repo.cp("undo")
    assert (repo.path / "sub/.gitattributes").read_text() == "*.txt -text\n"
    assert (repo.path / "sub/a.txt").read_bytes() == b"two\n"


def test_an_untracked_rule_file_the_target_holds_still_applies(repo: Repo) -> None:
    """The target's own untracked .gitattributes (its overlay) is among the rules that
    stay, while a tracked one the restore removes is not."""
    repo.write("a.txt", "one\n")
    repo.commit_all("a")
    repo.write("sub/.gitattributes", "*.txt eol=crlf\n")  # untracked, in the overlay
    repo.write("sub/b.txt", "bee\n")  # untracked too
    repo.cp("save", "-m", "with an untracked rule")
    repo.write(".gitattributes", "*.txt -text\n")
    repo.git("add", ".gitattributes")
    repo.write("sub/b.txt", "changed\n")
    repo.cp("restore", "cp_001")
    assert not (repo.path / ".gitattributes").exists()
    assert (repo.path / "sub/b.txt").read_bytes() == b"bee\r\n"


# --- names, modes, symlinks on the raw path --------------------------------------------

NAMES = [
    "with space.txt",
    "new\nline.txt",
    "ünï cødé.txt",
    "-leading-dash.txt",
    "--all",
    ":(glob)*",
    "tab\there",
    "deep/er/-x",
]


def test_awkward_names_modes_and_symlinks_come_back_as_git_writes_them(
    repo: Repo, tmp_path: Path
) -> None:
    for n, name in enumerate(NAMES):
        repo.write(name, f"content {n}\n", mode=0o755 if n % 2 else 0o644)
    os.symlink("README.md", repo.path / "link to readme")
    os.symlink("../nowhere/at all", repo.path / "dangling")
    os.symlink("ünï cødé.txt", repo.path / "-link")
    repo.commit_all("awkward")
    repo.cp("save", "-m", "awkward")
    for name in [*NAMES, "link to readme", "dangling", "-link"]:
        os.unlink(repo.path / name)
    repo.write("with space.txt", "edited\n")
    repo.cp("restore", "cp_001")
    same_as_checkout(repo, "cp_001", tmp_path)
    assert repo.git("status", "--porcelain") == ""
    staging_empty(repo)


def test_exec_bit_flips_both_ways(repo: Repo, tmp_path: Path) -> None:
    repo.write("x.sh", "x\n", mode=0o755)
    repo.write("y.sh", "y\n", mode=0o644)
    repo.commit_all("modes")
    repo.cp("save", "-m", "modes")
    os.chmod(repo.path / "x.sh", 0o644)
    os.chmod(repo.path / "y.sh", 0o755)
    repo.cp("restore", "cp_001")
    assert os.stat(repo.path / "x.sh").st_mode & 0o111
    assert not os.stat(repo.path / "y.sh").st_mode & 0o111
    same_as_checkout(repo, "cp_001", tmp_path)


def test_core_symlinks_false_writes_links_as_files(repo: Repo, tmp_path: Path) -> None:
    os.symlink("README.md", repo.path / "l")
    repo.commit_all("link")
    repo.cp("save", "-m", "link")
    repo.git("config", "core.symlinks", "false")
    os.unlink(repo.path / "l")
    repo.cp("restore", "cp_001")
    assert not (repo.path / "l").is_symlink()
    same_as_checkout(repo, "cp_001", tmp_path)


# --- diff-tree for the changed paths ----------------------------------------------------


def test_a_submodule_marked_ignore_all_is_still_restored_in_the_index(
    repo: Repo, tmp_path: Path
) -> None:
    sub = tmp_path / "subrepo"
    subprocess.run(["git", "init", "-q", str(sub)], check=True)
    for n in (1, 2):
        subprocess.run(["git", "-C", str(sub), "commit", "-q", "--allow-empty", "-m", f"s{n}"])
    repo.git("submodule", "add", "-q", str(sub), "sub")
    repo.git("config", "-f", ".gitmodules", "submodule.sub.ignore", "all")
    repo.commit_all("submodule")
    first = repo.git("ls-files", "-s", "sub")
    repo.cp("save", "-m", "one")
    subprocess.run(["git", "-C", str(repo.path / "sub"), "checkout", "-q", "HEAD~1"], check=True)
    repo.git("add", "sub")
    assert repo.git("ls-files", "-s", "sub") != first
    repo.cp("restore", "cp_001")
    assert repo.git("ls-files", "-s", "sub") == first


def test_a_bare_autocrlf_converts_as_gits_checkout_does(repo: Repo) -> None:
    with open(repo.path / ".git" / "config", "a") as fh:
        fh.write("[core]\n\tautocrlf\n")
    assert repo.git("config", "--type=bool", "core.autocrlf").strip() == "true"
    repo.write("notes.txt", "one\ntwo\n")
    repo.commit_all("notes")
    (repo.path / "notes.txt").unlink()
    repo.git("checkout", "--", "notes.txt")  # as git's own checkout writes it
    as_git_writes = (repo.path / "notes.txt").read_bytes()
    assert as_git_writes == b"one\r\ntwo\r\n"
    repo.cp("save", "-m", "clean")
    (repo.path / "notes.txt").write_bytes(b"edited\r\n")
    repo.cp("restore", "cp_001")
    assert (repo.path / "notes.txt").read_bytes() == as_git_writes
    assert repo.git("status", "--porcelain") == ""


def test_autocrlf_leaves_written_files_clean_in_the_index(repo: Repo) -> None:
    repo.git("config", "core.autocrlf", "true")
    repo.write("t.txt", "a\nb\n")
    repo.commit_all("text")
    repo.git("rm", "-q", "--cached", "-r", ".")
    repo.git("reset", "-q", "--hard")
    repo.cp("save", "-m", "clean")
    repo.write("t.txt", "changed\r\n")
    repo.cp("restore", "cp_001")
    assert repo.git("status", "--porcelain") == ""
    repo.git("switch", "-q", "-c", "elsewhere")  # git itself finds nothing in the way
