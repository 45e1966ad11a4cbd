"""The grafted W (save/graft) against git's own answer, `add -u` + `write-tree` on a copy
of the index, in the cases where they could part: names sorting around `/`, odd and
non-UTF-8 names, files and folders swapped, symlinks, modes, line endings, filters and
attributes, submodules, intent-to-add entries. The graft gives git's tree or declines,
and the capture always gives git's tree."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from git_checkpoint.config.model import Config
from git_checkpoint.gitcore.repo import Repo as GitRepo
from git_checkpoint.gitcore.scan import scan
from git_checkpoint.save.capture import capture_workspace
from git_checkpoint.save.graft import graft

from ..conftest import Repo, make_repo
from ..tree_oracle import reference_tree


def grafted(repo: Repo) -> str | None:
    """graft() fed by a scan of a copy of the real index, as capture_workspace feeds it."""
    gr = GitRepo.discover(repo.path)
    index_tree = repo.git("write-tree").strip()
    copy = repo.path / ".git" / "scan-index"
    shutil.copy2(repo.path / ".git" / "index", copy)
    try:
        scanned = scan(gr, copy)
    finally:
        copy.unlink()
    assert not scanned.unmerged
    return graft(gr, index_tree, {p: scanned.modes[p] for p in scanned.changed})


def captured(repo: Repo) -> str:
    return capture_workspace(GitRepo.discover(repo.path), Config()).worktree_tree


def check(repo: Repo) -> str | None:
    """The graft equals git's answer (or declines), and capture_workspace does too."""
    want = reference_tree(repo)
    got = grafted(repo)
    assert got in (want, None), f"graft {got} != add -u {want}"
    assert captured(repo) == want
    return got


def test_names_sorting_around_slash(base: Repo) -> None:
    for name in ("a/b/f.txt", "a.b/f.txt", "a-b/f.txt", "a0/f.txt", "a.txt"):
        base.write(name, f"changed {name}\n")
    base.write("a/b.txt", "new\n")
    base.git("add", "-N", "a/b.txt")  # a file `b.txt` beside the folder `b`
    assert check(base) is not None


@pytest.mark.parametrize(
    "name",
    [
        "dir /x.txt",  # a trailing space in a folder
        " lead/x.txt",  # a leading space
        ":colon/x.txt",  # `<tree>::colon` for cat-file
        "back\\slash/x.txt",
        "-dash/--x.txt",
        "#hash/#x.txt",
        "ü/ñ.txt",
        'q"uote/x.txt',
        "tab\tdir/x.txt",
        "a@{1}/x.txt",  # rev syntax inside the path
        "HEAD/x.txt",
        "x^{tree}/y.txt",
    ],
)
def test_odd_folder_names(base: Repo, name: str) -> None:
    base.write(name, "0\n")
    base.commit_all("odd")
    base.write(name, "1\n")
    assert check(base) is not None


def test_non_utf8_names(base: Repo) -> None:
    raw = os.fsdecode(b"bad\xff/n\xfe.txt")
    base.write(raw, "0\n")
    base.commit_all("bytes")
    base.write(raw, "1\n")
    assert check(base) is not None


def test_leading_quote_file_is_left_to_add_u(base: Repo) -> None:
    base.write('"quoted".txt', "0\n")
    base.commit_all("q")
    base.write('"quoted".txt', "1\n")
    assert check(base) is None


def test_file_to_folder_and_folder_to_file(base: Repo) -> None:
    (base.path / "a.txt").unlink()
    base.write("a.txt/inner.txt", "now a folder\n")
    shutil.rmtree(base.path / "a0")
    base.write("a0", "now a file\n")
    check(base)


def test_folder_replaced_by_symlink_to_a_folder(base: Repo) -> None:
    base.write("elsewhere/f.txt", "a/b\n")  # the same name and content beyond the link
    shutil.rmtree(base.path / "a/b")
    os.symlink("../elsewhere", base.path / "a/b")
    check(base)


def test_tracked_symlink_to_folder_retargeted(base: Repo) -> None:
    os.symlink("a", base.path / "ln")
    base.commit_all("link")
    (base.path / "ln").unlink()
    os.symlink("a.b", base.path / "ln")
    assert check(base) is not None


@pytest.mark.parametrize("filemode", ["true", "false"])
def test_exec_bit_flips(base: Repo, filemode: str) -> None:
    base.git("config", "core.fileMode", filemode)
    (base.path / "run.sh").chmod(0o644)
    (base.path / "a.txt").chmod(0o755)
    base.write("a/f.txt", "edited\n", mode=0o755)
    base.write("new.sh", "#!/bin/sh\n", mode=0o755)
    base.git("add", "-N", "new.sh")
    check(base)


def test_symlinks_false_link_stored_as_file(base: Repo) -> None:
    os.symlink("a.txt", base.path / "ln")
    base.commit_all("link")
    base.git("config", "core.symlinks", "false")
    (base.path / "ln").unlink()
    base.write("ln", "b.txt")  # what a checkout without symlinks writes, retargeted
    check(base)


def test_symlinks_false_real_link_over_a_file(base: Repo) -> None:
    base.git("config", "core.symlinks", "false")
    (base.path / "a.txt").unlink()
    os.symlink("run.sh", base.path / "a.txt")
    check(base)


def test_crlf_autocrlf_input(base: Repo) -> None:
    base.git("config", "core.autocrlf", "input")
    base.write("a/f.txt", "one\r\ntwo\r\n")
    check(base)


def test_autocrlf_keeps_crlf_already_in_the_index(base: Repo) -> None:
    """git add leaves CRLF alone in a file whose indexed version has CRs (the "safer
    autocrlf" rule). That needs the index; `hash-object` runs without one."""
    base.write("dos.txt", "one\r\ntwo\r\n")
    base.commit_all("crlf committed before autocrlf was on")
    base.git("config", "core.autocrlf", "true")
    base.write("dos.txt", "one\r\ntwo\r\nthree\r\n")
    want = reference_tree(base)
    assert base.git("cat-file", "-p", f"{want}:dos.txt") == "one\r\ntwo\r\nthree\r\n"
    assert captured(base) == want


def test_text_auto_keeps_crlf_already_in_the_index(base: Repo) -> None:
    base.write("dos.txt", "one\r\ntwo\r\n")
    base.commit_all("crlf")
    base.write(".gitattributes", "*.txt text=auto\n")
    base.commit_all("attrs")
    base.write("dos.txt", "one\r\ntwo\r\nthree\r\n")
    assert captured(base) == reference_tree(base)


def test_ident_and_working_tree_encoding(base: Repo) -> None:
    base.write(".gitattributes", "*.id ident\n*.u16 working-tree-encoding=UTF-16LE text\n")
    base.write("x.id", "$Id$\n")
    base.write("x.u16", "hello\n".encode("utf-16le"))
    base.commit_all("attrs")
    base.write("x.id", "$Id: 0123456789abcdef0123456789abcdef01234567 $\nmore\n")
    base.write("x.u16", "hello again\n".encode("utf-16le"))
    assert check(base) is not None


def test_clean_filter_using_the_path(base: Repo) -> None:
    base.write(".gitattributes", "*.p filter=named\n")
    base.git("config", "filter.named.clean", "sh -c 'cat; echo \"%f\"'")
    base.write("sub dir/x.p", "body\n")
    base.commit_all("filter")
    base.write("sub dir/x.p", "body changed\n")
    assert check(base) is not None


@pytest.mark.parametrize("where", ["", "sub/"])
def test_gitattributes_deleted_from_disk(base: Repo, where: str) -> None:
    """A .gitattributes gone from the work tree but still in the index, nothing sorting
    before it: git add removes it before it reads attributes, as hash-object sees it."""
    base.write(f"{where}.gitattributes", "*.up filter=upper\n")
    base.git("config", "filter.upper.clean", "tr a-z A-Z")
    base.write(f"{where}x.up", "lower\n")
    base.commit_all("attrs")
    (base.path / f"{where}.gitattributes").unlink()
    base.write(f"{where}x.up", "still lower\n")
    check(base)


def test_gitattributes_deleted_from_disk_read_from_the_index(base: Repo) -> None:
    base.write(".gitattributes", "*.up filter=upper\n")
    base.git("config", "filter.upper.clean", "tr a-z A-Z")
    base.write("#early.up", "early\n")  # sorts before .gitattributes: git add reads it
    base.write("x.up", "lower\n")
    base.commit_all("attrs")
    (base.path / ".gitattributes").unlink()
    base.write("#early.up", "early edit\n")
    base.write("x.up", "still lower\n")
    want = reference_tree(base)
    assert base.git("cat-file", "-p", f"{want}:x.up") == "STILL LOWER\n"
    assert captured(base) == want


def test_submodule_sorts_as_a_file(base: Repo, tmp_path: Path) -> None:
    sub = make_repo(tmp_path / "sub")
    sub.write("s.txt", "1\n")
    sub.commit_all("one")
    base.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub.path), "s")
    for name in ("s.txt", "s-b/f.txt", "s0/f.txt", "s.b/f.txt"):
        base.write(name, "x\n")
    base.commit_all("sub named s")
    inner = Repo(base.path / "s")
    inner.write("s.txt", "2\n")
    inner.commit_all("two")
    base.write("s-b/f.txt", "y\n")
    assert check(base) is not None


def test_intent_to_add_deleted_in_new_and_old_folders(base: Repo) -> None:
    base.write("new/deep/x.txt", "x\n")
    base.write("a/b/y.txt", "y\n")
    base.write("new2/z.txt", "z\n")
    base.git("add", "-N", "new/deep/x.txt", "a/b/y.txt", "new2/z.txt")
    (base.path / "new/deep/x.txt").unlink()
    (base.path / "a/b/y.txt").unlink()
    check(base)


def test_intent_to_add_folder_where_a_tracked_file_was(base: Repo) -> None:
    (base.path / "a.txt").unlink()
    base.write("a.txt/x", "x\n")
    base.git("add", "-N", "a.txt/x")  # git drops `a.txt` from the index
    check(base)


def test_deleted_then_recreated_same_content(base: Repo) -> None:
    (base.path / "a/f.txt").unlink()
    base.write("a/f.txt", "a\n")
    assert check(base) == base.git("write-tree").strip()


@pytest.mark.parametrize("count", [201, 450])
def test_many_changes_mixed(base: Repo, count: int) -> None:
    for n in range(count):
        base.write(f"m/{n % 5}/f{n}.txt", f"{n}\n")
    base.commit_all("many")
    for n in range(count):
        p = base.path / f"m/{n % 5}/f{n}.txt"
        if n % 3 == 0:
            p.unlink()
        elif n % 3 == 1:
            p.write_text(f"{n} changed\n")
        else:
            p.chmod(0o755)
    for n in range(5):
        os.symlink("x", base.path / f"m/{n}/l")
    base.git("add", "-N", *[f"m/{n}/l" for n in range(5)])
    assert check(base) is not None


def test_submodule_moved_and_missing_dot_git(base: Repo, tmp_path: Path) -> None:
    sub = make_repo(tmp_path / "sub")
    sub.write("s.txt", "1\n")
    sub.commit_all("one")
    base.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub.path), "m1")
    base.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub.path), "m2")
    base.commit_all("subs")
    inner = Repo(base.path / "m1")
    inner.write("s.txt", "2\n")
    inner.commit_all("two")
    (base.path / "m2" / ".git").unlink()  # a folder that is no repository any more
    check(base)


def test_submodule_replaced_by_file(base: Repo, tmp_path: Path) -> None:
    sub = make_repo(tmp_path / "sub")
    sub.write("s.txt", "1\n")
    sub.commit_all("one")
    base.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub.path), "m1")
    base.commit_all("sub")
    shutil.rmtree(base.path / "m1")
    base.write("m1", "a file now\n")
    check(base)


def test_submodule_ignore_all_config(base: Repo, tmp_path: Path) -> None:
    sub = make_repo(tmp_path / "sub")
    sub.write("s.txt", "1\n")
    sub.commit_all("one")
    base.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub.path), "m1")
    base.commit_all("sub")
    base.git("config", "submodule.m1.ignore", "all")
    inner = Repo(base.path / "m1")
    inner.write("s.txt", "2\n")
    inner.commit_all("two")
    check(base)


def test_nested_repo_in_place_of_a_tracked_file(base: Repo) -> None:
    (base.path / "a.txt").unlink()
    nested = make_repo(base.path / "a.txt")
    nested.write("n.txt", "n\n")
    nested.commit_all("nested")
    check(base)


def fifo_graft_in_child(repo: Repo) -> subprocess.CompletedProcess[str]:
    code = (
        "from tests.save.test_graft_against_add_u import grafted\n"
        "from tests.conftest import Repo\n"
        "from pathlib import Path\n"
        "import sys\n"
        "try:\n"
        "    print(grafted(Repo(Path(sys.argv[1]))))\n"
        "except Exception as exc:\n"
        "    print(type(exc).__name__)\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code, str(repo.path)],
        cwd=Path(__file__).parents[2],
        capture_output=True,
        text=True,
        timeout=20,
        check=False,
    )


def test_fifo_in_place_of_a_tracked_file_does_not_hang(base: Repo) -> None:
    (base.path / "a.txt").unlink()
    os.mkfifo(base.path / "a.txt")
    try:
        fifo_graft_in_child(base)
    except subprocess.TimeoutExpired:
        pytest.fail("graft blocked on a FIFO")
    finally:  # release a hash-object left blocked in open()
        with contextlib.suppress(OSError):
            os.close(os.open(base.path / "a.txt", os.O_WRONLY | os.O_NONBLOCK))


def test_case_only_rename_with_ignorecase(base: Repo) -> None:
    base.git("config", "core.ignorecase", "true")
    os.rename(base.path / "a.txt", base.path / "A.txt")
    check(base)
