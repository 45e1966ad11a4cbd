"""The wide save (over SPLIT_HASHING changed tracked files): whatever the attributes,
settings, index formats and odd files, the tree a checkpoint records is the one `git add
-u` makes of a copy of the index, every object is in the store, `git gc` compresses
what was stored, a full disk fails the save in one line with nothing wrong recorded,
and a restore gives the bytes back."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from git_checkpoint.save.graft import SPLIT_HASHING

from ..conftest import Repo
from ..helpers import state

WIDE = SPLIT_HASHING + 60


def _truth(repo: Repo, unmark: tuple[str, ...] = ()) -> str:
    """The work-tree tree `git add -u` makes of a copy of the index (its marks taken off
    `unmark` first, as a save does for the files on disk).

    The copy keeps the index's date (copy2): a plain `cp` dates it now, and an entry
    edited in the second git last wrote the index, at the same size, then looks clean
    to `add -u` (racy git), which keeps the old blob."""
    index = repo.path / ".git" / "truth-index"
    env = {**os.environ, "GIT_INDEX_FILE": str(index)}
    shutil.copy2(repo.path / ".git" / "index", index)
    for option in ("assume-unchanged", "skip-worktree"):
        if unmark:
            subprocess.run(
                ["git", "update-index", f"--no-{option}", "-z", "--stdin"],
                cwd=repo.path,
                env=env,
                check=True,
                input="\0".join(unmark).encode(),
            )
    proc = subprocess.run(["git", "add", "-u"], cwd=repo.path, env=env, capture_output=True)
    assert proc.returncode == 0, proc.stderr.decode()
    tree = subprocess.run(
        ["git", "write-tree"], cwd=repo.path, env=env, check=True, capture_output=True, text=True
    ).stdout.strip()
    index.unlink()
    return tree


def _saved_tree(repo: Repo, cp_id: str = "cp_002") -> str:
    refs = repo.git("for-each-ref", "--format=%(refname)", "refs/checkpoints/").split()
    (ref,) = [r for r in refs if r.endswith(f"/{cp_id}")]
    return repo.git("rev-parse", ref + "^{tree}").strip()


def _packs(repo: Repo) -> list[str]:
    return sorted(os.listdir(repo.path / ".git/objects/pack"))


def _files(repo: Repo, body: Callable[[int], bytes], count: int = WIDE) -> None:
    for i in range(count):
        repo.write(f"d{i % 9}/f{i:04}.txt", body(i))


def _check(
    repo: Repo,
    *,
    roundtrip: bool = False,
    cp_id: str = "cp_002",
    base: str = "cp_001",
    unmark: tuple[str, ...] = (),
) -> None:
    """Save; the saved tree is git's, the store is whole; (roundtrip) restoring away and
    back gives the same work tree and index."""
    expected = _truth(repo, unmark)
    saved = state(repo)
    repo.cp("save", "-m", "wide edit")
    got = _saved_tree(repo, cp_id)
    assert got == expected, repo.git("diff-tree", "-r", expected, got)[:800]
    repo.git("fsck", "--strict", "--no-dangling")
    if roundtrip:
        repo.cp("restore", base)
        repo.cp("restore", cp_id)
        assert state(repo) == saved
        repo.git("fsck", "--strict", "--no-dangling")


def _wide_repo(repo: Repo, setup: Callable[[Repo], None] | None = None) -> None:
    if setup is not None:
        setup(repo)
    _files(repo, lambda i: f"line {i}\n".encode())
    repo.commit_all("wide")
    repo.cp("save", "-m", "before")


MIB = 1 << 20


def _upper_filter(repo: Repo) -> None:
    repo.git("config", "filter.upper.clean", "tr a-z A-Z")
    repo.git("config", "filter.upper.smudge", "cat")


def _mixed_bodies(i: int) -> bytes:
    """Edits of every shape: plain, CRLF, lone CR, NUL, $Id$, empty, 1 MiB edges."""
    kind = i % 8
    if kind == 0:
        return b"crlf %d\r\nline\r\n" % i
    if kind == 1:
        return b"lone cr %d\rend\n" % i
    if kind == 2:
        return b"nul %d\0bin\r\n" % i
    if kind == 3:
        return b"$Id$ %d\n" % i
    if kind == 4:
        return b"$Id: deadbeef $ %d\n" % i
    if kind == 5:
        return b"" if i % 16 == 5 else b"plain %d\n" % i
    return b"edited %d\nmore\n" % i


ATTRIBUTE_SETS = {
    "subfolders": {
        "d0/.gitattributes": "* text\n",
        "d1/.gitattributes": "* -text\n",
        "d2/.gitattributes": "* text=auto\n",
        "d3/.gitattributes": "* eol=crlf\n",
        "d4/.gitattributes": "* eol=lf\n",
        "d5/.gitattributes": "* binary\n",
        "d6/.gitattributes": "* filter=upper\n",
        "d7/.gitattributes": "* ident\n",
        "d8/.gitattributes": "* export-ignore text=auto eol=crlf\n",
    },
    "macro": {".gitattributes": "[attr]mine text eol=crlf\nd[0-4]/* mine\nd5/* -mine\n"},
    "macro-in-subfolder": {"d2/.gitattributes": "[attr]mine text eol=crlf\n* mine\n"},
    "crlf-old-style": {".gitattributes": "d1/* crlf\nd2/* -crlf\nd3/* crlf=input\n"},
    "text-only-some": {".gitattributes": "*.txt text\nf00[0-4]*.txt -text\n"},
    "ident-and-filter-root": {".gitattributes": "* ident\nd6/** filter=upper\n"},
}


@pytest.mark.parametrize("name", sorted(ATTRIBUTE_SETS))
@pytest.mark.parametrize("autocrlf", [None, "true", "input", "false"])
def test_attributes_in_the_tree(repo: Repo, name: str, autocrlf: str | None) -> None:
    def setup(r: Repo) -> None:
        _upper_filter(r)
        if autocrlf is not None:
            r.git("config", "core.autocrlf", autocrlf)
        for path, text in ATTRIBUTE_SETS[name].items():
            r.write(path, text)

    _wide_repo(repo, setup)
    _files(repo, _mixed_bodies)
    _check(repo)


@pytest.mark.parametrize(
    "where", ["info-attributes", "global-attributes-file", "core-eol-crlf", "core-eol-lf"]
)
def test_rules_from_outside_the_tree(repo: Repo, where: str) -> None:
    if where == "info-attributes":
        (repo.path / ".git/info").mkdir(exist_ok=True)
        (repo.path / ".git/info/attributes").write_text("d[0-3]/* text eol=crlf\nd4/* ident\n")
    elif where == "global-attributes-file":
        rules = repo.path.parent / "global-attributes"
        rules.write_text("d[2-5]/* text=auto eol=crlf\nd6/* filter=upper\n")
        repo.git("config", "--global", "core.attributesFile", str(rules))
        repo.git("config", "--global", "filter.upper.clean", "tr a-z A-Z")
    else:
        repo.git("config", "core.eol", where.rpartition("-")[2])
        repo.write(".gitattributes", "d[0-4]/* text\nd5/* text=auto\n")
    _wide_repo(repo)
    _files(repo, _mixed_bodies)
    _check(repo)


def test_working_tree_encoding(repo: Repo) -> None:
    _files(repo, lambda i: f"utf16 {i}\n".encode("utf-16" if i % 9 < 3 else "ascii"))
    repo.write(".gitattributes", "d[0-2]/* working-tree-encoding=UTF-16 text\n")
    repo.commit_all("wide")
    repo.cp("save", "-m", "before")
    for i in range(WIDE):
        if i % 9 < 3:
            repo.write(f"d{i % 9}/f{i:04}.txt", f"utf16 edited {i}\r\n".encode("utf-16"))
        else:
            repo.write(f"d{i % 9}/f{i:04}.txt", b"plain edited %d\n" % i)
    _check(repo)


@pytest.mark.parametrize("how", ["edited", "deleted", "added-untracked", "became-symlink"])
def test_a_rules_file_that_changes_with_the_files(repo: Repo, how: str) -> None:
    def setup(r: Repo) -> None:
        r.write(".gitattributes", "d[0-3]/* text eol=crlf\n")
        r.write("d5/.gitattributes", "* ident\n")

    if how == "added-untracked":
        _wide_repo(repo)
        repo.write("d4/.gitattributes", "* text eol=crlf\n")
    else:
        _wide_repo(repo, setup)
        if how == "edited":
            repo.write(".gitattributes", "d[4-8]/* text eol=crlf\n")
            repo.write("d5/.gitattributes", "* -text\n")
        elif how == "deleted":
            os.remove(repo.path / ".gitattributes")
            os.remove(repo.path / "d5/.gitattributes")
        else:
            os.remove(repo.path / ".gitattributes")
            repo.write("rules", "* text eol=crlf\n")
            os.symlink("rules", repo.path / ".gitattributes")
    _files(repo, _mixed_bodies)
    _check(repo)


def test_sizes_at_the_memory_edge(repo: Repo) -> None:
    sizes = [0, 1, MIB - 1, MIB, MIB + 1, 2 * MIB]
    _wide_repo(repo)
    for n, size in enumerate(sizes):
        repo.write(f"big/b{n}", b"x" * max(size - 8, 0) + (b"%08d" % n)[:size])
    repo.commit_all("big")
    repo.cp("save", "-m", "with big")
    _files(repo, lambda i: b"edited %d\n" % i)
    for n, size in enumerate(sizes):
        repo.write(f"big/b{n}", (b"y" * size)[:size])
    _check(repo, roundtrip=True, cp_id="cp_003", base="cp_002")
    for n, size in enumerate(sizes):
        assert (repo.path / f"big/b{n}").stat().st_size == size


def test_odd_files_in_place_of_tracked_ones(repo: Repo) -> None:
    _wide_repo(repo)
    _files(repo, lambda i: b"edited %d\n" % i)
    os.remove(repo.path / "d0/f0000.txt")
    os.symlink("f0009.txt", repo.path / "d0/f0000.txt")
    os.remove(repo.path / "d2/f0002.txt")
    (repo.path / "d2/f0002.txt").mkdir()
    (repo.path / "d2/f0002.txt/inner").write_text("in a folder now\n")
    os.remove(repo.path / "d3/f0003.txt")
    os.remove(repo.path / "d4/f0004.txt")
    (repo.path / "d4/f0004.txt").mkdir()  # an empty folder
    os.remove(repo.path / "d5/f0005.txt")
    os.symlink("/nonexistent/target", repo.path / "d5/f0005.txt")
    expected = _truth(repo)
    repo.cp("save", "-m", "odd", timeout=60)
    got = _saved_tree(repo)
    assert got == expected, repo.git("diff-tree", "-r", expected, got)[:800]
    repo.git("fsck", "--strict", "--no-dangling")


def test_exec_bits(repo: Repo) -> None:
    def setup(r: Repo) -> None:
        for i in range(0, WIDE, 3):
            r.write(f"d{i % 9}/f{i:04}.txt", f"line {i}\n", mode=0o755)

    _wide_repo(repo, setup)
    for i in range(WIDE):
        path = repo.path / f"d{i % 9}/f{i:04}.txt"
        if i % 2 == 0:
            path.write_bytes(b"content edited %d\n" % i)
        if i % 2 == 1 or i % 5 == 0:
            path.chmod(path.stat().st_mode ^ 0o111)  # flipped, with or without an edit
        elif i % 7 == 0:
            path.chmod(path.stat().st_mode ^ 0o100)  # only the owner's bit
        elif i % 11 == 0:
            path.chmod(path.stat().st_mode ^ 0o011)  # only group/other: git ignores it
    _check(repo, roundtrip=True)


def test_symlinks_off(repo: Repo) -> None:
    def setup(r: Repo) -> None:
        for n in range(5):
            os.symlink(f"d{n}", r.path / f"link{n}")

    _wide_repo(repo, setup)
    repo.git("config", "core.symlinks", "false")
    _files(repo, lambda i: b"edited %d\n" % i)
    for n in range(5):  # as a checkout without symlinks leaves them: a file of the target
        os.remove(repo.path / f"link{n}")
        repo.write(f"link{n}", f"d{(n + 1) % 9}")
    _check(repo)


@pytest.mark.parametrize("marks", ["intent-to-add", "skip-worktree", "assume-unchanged"])
def test_marked_index_entries(repo: Repo, marks: str) -> None:
    _wide_repo(repo)
    paths = [f"d{i % 9}/f{i:04}.txt" for i in range(0, 40, 4)]
    if marks == "intent-to-add":
        for n in range(10):
            repo.write(f"new/n{n}.txt", f"new {n}\n")
        repo.git("add", "-N", "new")
    else:
        repo.git("update-index", f"--{marks}", *paths)
    _files(repo, lambda i: b"edited %d\n" % i)
    if marks == "intent-to-add":
        for n in range(10):
            repo.write(f"new/n{n}.txt", f"new edited {n}\n")
        _check(repo)
    else:  # a marked entry: the save takes the staged path (add -u, the marks taken off)
        _check(repo, unmark=tuple(paths))


def test_submodule_among_many_changes(repo: Repo, tmp_path_factory: pytest.TempPathFactory) -> None:
    sub = tmp_path_factory.mktemp("sub")
    subprocess.run(["git", "init", "-q", str(sub)], check=True)
    (sub / "s.txt").write_text("s\n")
    subprocess.run(["git", "add", "-A"], cwd=sub, check=True)
    subprocess.run(["git", "commit", "-qm", "s"], cwd=sub, check=True)
    repo.git("submodule", "add", "-q", str(sub), "mod")
    _wide_repo(repo)
    (repo.path / "mod/s.txt").write_text("s edited\n")
    subprocess.run(["git", "commit", "-qam", "moved"], cwd=repo.path / "mod", check=True)
    _files(repo, lambda i: b"edited %d\n" % i)
    _check(repo)


def test_sparse_checkout(repo: Repo) -> None:
    _wide_repo(repo)
    repo.git("sparse-checkout", "set", "--no-cone", "/*", "!/d8/")
    assert not (repo.path / "d8").exists()
    _files(repo, lambda i: b"edited %d\n" % i if i % 9 != 8 else b"")
    for i in range(8, WIDE, 9):  # outside the sparse set: left alone
        os.remove(repo.path / f"d8/f{i:04}.txt")
    os.rmdir(repo.path / "d8")
    _check(repo)


@pytest.mark.parametrize("index", ["split", "v4", "v3"])
def test_index_formats(repo: Repo, index: str) -> None:
    _wide_repo(repo)
    if index == "split":
        repo.git("update-index", "--split-index")
    else:
        repo.git("update-index", "--index-version", index[1])
    _files(repo, lambda i: b"edited %d\n" % i)
    _check(repo, roundtrip=True)


def test_odd_names(repo: Repo) -> None:
    names = ["with space.txt", "tab\there.txt", "caf\u00e9.txt", "-dash", "#hash", "a=b c"]
    raw = [b"latin1-\xe9.txt", b"bad-\xff\xfe.txt"]

    def setup(r: Repo) -> None:
        for n in names:
            r.write(f"odd/{n}", f"{n}\n")
        for b in raw:
            (r.path / "odd").mkdir(exist_ok=True)
            with open(os.path.join(os.fsencode(r.path / "odd"), b), "wb") as fh:
                fh.write(b + b"\n")

    _wide_repo(repo, setup)
    _files(repo, lambda i: b"edited %d\n" % i)
    for n in names:
        repo.write(f"odd/{n}", f"{n} edited\n")
    for b in raw:
        with open(os.path.join(os.fsencode(repo.path / "odd"), b), "wb") as fh:
            fh.write(b + b" edited\n")
    _check(repo, roundtrip=True)


def test_a_newline_in_a_name(repo: Repo) -> None:
    def setup(r: Repo) -> None:
        r.write("odd/new\nline.txt", "x\n")
        r.write('odd/"quoted".txt', "x\n")

    _wide_repo(repo, setup)
    _files(repo, lambda i: b"edited %d\n" % i)
    repo.write("odd/new\nline.txt", "y\n")
    repo.write('odd/"quoted".txt', "y\n")
    _check(repo, roundtrip=True)


@pytest.mark.parametrize("key", ["core.compression", "core.looseCompression"])
def test_a_chosen_compression_leaves_the_hashing_to_git(repo: Repo, key: str) -> None:
    _wide_repo(repo)
    repo.git("config", key, "9")
    _files(repo, lambda i: b"edited %d\n" % i)
    _check(repo)


def test_an_object_directory_from_the_environment(repo: Repo) -> None:
    _wide_repo(repo)
    _files(repo, lambda i: b"edited %d\n" % i)
    objects = str(repo.path / ".git/objects")
    elsewhere = repo.path.parent / "elsewhere"
    elsewhere.mkdir()
    env = {"GIT_OBJECT_DIRECTORY": str(elsewhere), "GIT_ALTERNATE_OBJECT_DIRECTORIES": objects}
    expected = _truth(repo)
    repo.cp("save", "-m", "elsewhere", env=env)
    assert not list((repo.path / ".git/objects/pack").glob("*.pack"))
    got = subprocess.run(
        ["git", "rev-parse", "refs/checkpoints/main/cp_002^{tree}"],
        cwd=repo.path,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert got == expected


def test_alternates(repo: Repo, tmp_path_factory: pytest.TempPathFactory) -> None:
    _wide_repo(repo)
    clone = tmp_path_factory.mktemp("alt") / "clone"
    subprocess.run(["git", "clone", "-q", "--shared", str(repo.path), str(clone)], check=True)
    other = Repo(clone)
    other.cp("save", "-m", "before")
    _files(other, lambda i: b"edited %d\n" % i)
    _check(other, roundtrip=True)


def test_a_fifo_where_a_tracked_file_was(repo: Repo) -> None:
    """Refused as git's `add -u` refuses it: one line naming it (exit 3), nothing saved
    or left."""
    _wide_repo(repo)
    _files(repo, lambda i: b"edited %d\n" % i)
    os.remove(repo.path / "d1/f0001.txt")
    os.mkfifo(repo.path / "d1/f0001.txt")
    packs = _packs(repo)
    proc = repo.cp("save", "-m", "fifo", expect=3, timeout=60)
    assert proc.stderr.count("\n") == 1 and "'d1/f0001.txt'" in proc.stderr
    assert "FIFO" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert _packs(repo) == packs
    assert "cp_002" not in repo.git("for-each-ref", "refs/checkpoints/")
    repo.git("fsck", "--strict", "--no-dangling")


# -- files that change while the save runs --------------------------------------------

_WRITER = r"""
import os, sys, time
root, stop = sys.argv[1], sys.argv[2]
n = 0
while not os.path.exists(stop):
    n += 1
    for i in range(0, 260, 5):
        path = f"{root}/d{i % 9}/f{i:04}.txt"
        body = (b"writer %d round %d|" % (i, n)) * (1 + (n % 3) * 300)
        if i % 25 == 0:  # gone for a moment, then back
            try:
                os.remove(path)
            except FileNotFoundError:
                pass
        tmp = path + ".w"
        with open(tmp, "wb") as fh:
            fh.write(body)
        os.replace(tmp, path)  # each state a whole version
"""


def test_files_rewritten_while_the_save_runs(repo: Repo) -> None:
    """Whatever instant each file is read at, the blob saved is one whole version the
    writer wrote (or the edit), every object is stored, and it restores as saved."""
    _wide_repo(repo)
    repo.write(".gitignore", "*.log\n*.w\n")
    repo.commit_all("ignore the writer's temporary files")
    repo.cp("save", "-m", "base")
    _files(repo, lambda i: b"edited %d\n" % i)
    stop = repo.path.parent / "stop"
    writer = subprocess.Popen(
        ["python3", "-c", _WRITER, str(repo.path), str(stop)], stdout=subprocess.DEVNULL
    )
    try:
        for n in range(3):
            repo.cp("save", "-m", f"racing {n}")
    finally:
        stop.touch()
        writer.wait(timeout=30)
    repo.git("fsck", "--strict", "--no-dangling")
    for n in range(3):
        tree = _saved_tree(repo, f"cp_00{n + 3}")
        for line in repo.git("ls-tree", "-r", tree, "d0", "d1", "d2", "d3", "d4").splitlines():
            meta, path = line.split("\t")
            data = repo.git("cat-file", "blob", meta.split()[2]).encode()
            i = int(path[4:8])
            if data == b"edited %d\n" % i:
                continue
            unit = data.split(b"|")[0] + b"|"
            assert unit.startswith(b"writer %d round " % i), (path, data[:60])
            assert data == unit * (len(data) // len(unit)), (path, "a torn version")
    repo.cp("restore", "cp_005")
    restored = repo.git("ls-tree", "-r", _saved_tree(repo, "cp_005"))
    for line in restored.splitlines():
        meta, path = line.split("\t")
        if meta.split()[1] == "blob":
            here = repo.git("hash-object", "--no-filters", "--", path).strip()
            assert here == meta.split()[2], path


# -- repeated wide saves, packs and gc ---------------------------------------------------


def _round(r: int) -> Callable[[int], bytes]:
    return lambda i: b"round %d edit %d\n" % (r, i)


def test_repeated_wide_saves_then_gc(repo: Repo) -> None:
    _wide_repo(repo)
    counts = []
    for n in range(6):
        _files(repo, _round(n % 3))
        repo.cp("save", "-m", f"round {n}", expect=None)
        counts.append(len([p for p in _packs(repo) if p.endswith(".pack")]))
        repo.git("fsck", "--strict", "--no-dangling")
    # the same change again stores nothing more
    assert counts[3:] == [counts[2]] * 3, counts
    repo.cp("restore", "cp_002")
    repo.git("gc", "-q")
    assert len([p for p in _packs(repo) if p.endswith(".pack")]) <= 1
    repo.git("fsck", "--strict")
    for cp_id, n in (("cp_003", 1), ("cp_004", 2), ("cp_002", 0)):
        repo.cp("restore", cp_id)
        assert (repo.path / "d3/f0003.txt").read_bytes() == b"round %d edit 3\n" % n
    repo.cp("undo")
    assert (repo.path / "d3/f0003.txt").read_bytes() == b"round 2 edit 3\n"


def _source_like(i: int) -> bytes:
    """3,000 bytes of text that compresses as source does (about 3:1), no two alike."""
    lines = b"".join(
        b"def function_%d_%d(a, b):\n    return a * %d + b  # %x\n" % (i, n, n, i * n)
        for n in range(60)
    )
    return lines[:3000]


def _gc_sizes(repo: Repo) -> tuple[int, int]:
    """The pack bytes after `git gc`, and after a repack that recompresses everything."""
    _files(repo, _source_like)
    repo.cp("save", "-m", "wide")
    repo.git("gc", "-q")
    after_gc = _pack_bytes(repo)
    repo.git("repack", "-a", "-d", "-F", "-q")
    return after_gc, _pack_bytes(repo)


def test_gc_compresses_what_git_hashed(repo: Repo) -> None:
    """The control: git hashing (a chosen level; loose objects) leaves gc its work."""
    _wide_repo(repo)
    repo.git("config", "core.looseCompression", "0")
    after_gc, recompressed = _gc_sizes(repo)
    assert after_gc < 1.2 * recompressed, (after_gc, recompressed)


def test_gc_compresses_what_a_wide_save_stored(repo: Repo) -> None:
    _wide_repo(repo)
    after_gc, recompressed = _gc_sizes(repo)
    assert after_gc < 1.2 * recompressed, (after_gc, recompressed)


def _pack_bytes(repo: Repo) -> int:
    return sum(p.stat().st_size for p in (repo.path / ".git/objects/pack").glob("*.pack"))


# -- settings with more than one spelling, and safecrlf -----------------------------------


def test_autocrlf_given_without_a_value(repo: Repo) -> None:
    _wide_repo(repo)
    with open(repo.path / ".git/config", "a") as fh:
        fh.write("[core]\n\tautocrlf\n")  # as `git -c core.autocrlf checkpoint save` gives it
    assert repo.git("config", "--type=bool", "core.autocrlf").strip() == "true"
    _files(repo, lambda i: b"line %d\r\nedited\r\n" % i)
    _check(repo)


def test_autocrlf_given_without_a_value_narrow(repo: Repo) -> None:
    """The control: a narrow save (git hashes) strips the CRs as git add does."""
    _wide_repo(repo)
    with open(repo.path / ".git/config", "a") as fh:
        fh.write("[core]\n\tautocrlf\n")
    _files(repo, lambda i: b"line %d\r\nedited\r\n" % i, count=20)
    _check(repo)


@pytest.mark.parametrize("value", ["", "0k", "00"])
def test_filemode_false_spelled_otherwise(repo: Repo, value: str) -> None:
    _wide_repo(repo)
    repo.git("config", "core.fileMode", value)
    assert repo.git("config", "--type=bool", "core.fileMode").strip() == "false"
    _files(repo, lambda i: b"line %d edited\n" % i)
    for i in range(0, WIDE, 2):
        os.chmod(repo.path / f"d{i % 9}/f{i:04}.txt", 0o755)
    _check(repo)


def test_safecrlf_true_refuses_alike_narrow_and_wide(repo: Repo) -> None:
    def setup(r: Repo) -> None:
        r.git("config", "core.autocrlf", "true")

    _wide_repo(repo, setup)
    repo.git("config", "core.safecrlf", "true")
    _files(repo, lambda i: b"line %d edited\n" % i, count=5)
    narrow = repo.cp("save", "-m", "narrow", expect=4)
    assert "LF would be replaced by CRLF" in narrow.stderr
    _files(repo, lambda i: b"line %d edited\n" % i)
    wide = repo.cp("save", "-m", "wide", expect=None)
    assert wide.returncode == narrow.returncode, wide.stdout


# -- a full disk, a read-only pack folder (root: mount) ---------------------------------

needs_root = pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() != 0, reason="mounts a tmpfs (root)"
)


def _mount(*argv: str) -> bool:
    return subprocess.run(["mount", *argv], capture_output=True).returncode == 0


def _umount(target: os.PathLike[str] | str) -> None:
    subprocess.run(["umount", "-l", str(target)], capture_output=True)


def _prepared(repo: Repo) -> None:
    """260 changed files of 4,000 bytes (a pack of about 1 MB), git's objects packed."""
    _files(repo, lambda i: (b"%d" % i).ljust(4000, b"a"))
    repo.commit_all("wide")
    repo.git("gc", "-q")
    repo.cp("save", "-m", "before")
    _files(repo, lambda i: (b"%d" % i).ljust(4000, b"b"))


def _disk_trial(
    template: Repo, disk: str, free: int
) -> tuple[Repo, subprocess.CompletedProcess[str]]:
    """A copy of `template` on the tmpfs `disk`, the disk filled to leave `free` bytes,
    and a save run there."""
    for name in os.listdir(disk):
        full = os.path.join(disk, name)
        shutil.rmtree(full) if os.path.isdir(full) else os.remove(full)
    subprocess.run(["cp", "-a", str(template.path), f"{disk}/w"], check=True)
    vfs = os.statvfs(disk)
    fill = vfs.f_bavail * vfs.f_frsize - free
    if fill > 0:
        with open(f"{disk}/filler", "wb") as fh:
            fh.write(b"\0" * fill)
    here = Repo(Path(f"{disk}/w"))
    return here, here.cp("save", "-m", "wide", expect=None)


@pytest.fixture
def small_disk(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    disk = tmp_path_factory.mktemp("tmpfs")
    if not _mount("-t", "tmpfs", "-o", "size=8m", "tmpfs", str(disk)):
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield str(disk)
    finally:
        _umount(disk)


def _orphan_packs(repo: Repo) -> list[str]:
    names = _packs(repo)
    return [p for p in names if p.endswith(".pack") and p[:-5] + ".idx" not in names]


@needs_root
def test_a_full_disk_fails_the_save_and_records_nothing_wrong(repo: Repo, small_disk: str) -> None:
    """Free space from a little to about the pack's size: every failing save fails with
    one line and no checkpoint; one that succeeds records git's tree; fsck stays clean."""
    _prepared(repo)
    expected = _truth(repo)
    for free_kb in (32, 256, 768, 1000, 1100, 1400, 4000):
        here, proc = _disk_trial(repo, small_disk, free_kb * 1024)
        with contextlib.suppress(FileNotFoundError):
            os.remove(f"{small_disk}/filler")  # room for git to check the result
        refs = here.git("for-each-ref", "--format=%(refname)", "refs/checkpoints/").split()
        if proc.returncode == 0:
            assert _saved_tree(here) == expected
        else:
            assert proc.returncode == 4 and proc.stderr.count("\n") == 1, proc.stderr
            assert "Traceback" not in proc.stderr
            assert len(refs) == 1, refs
        here.git("fsck", "--strict", "--no-dangling")
    assert proc.returncode == 0  # 4 MB free: saved


@needs_root
def test_a_full_disk_says_so(repo: Repo, small_disk: str) -> None:
    _prepared(repo)
    _, proc = _disk_trial(repo, small_disk, 128 * 1024)
    assert proc.returncode == 4, proc.stderr
    assert "space" in proc.stderr.lower(), proc.stderr


@needs_root
def test_a_full_disk_leaves_no_pack_without_its_index(repo: Repo, small_disk: str) -> None:
    """(A change over 128+ folders: its new trees go to git as one pack.)"""
    for i in range(WIDE):
        repo.write(f"p{i}/f.txt", (b"%d" % i).ljust(4000, b"a"))
    repo.commit_all("spread")
    repo.git("gc", "-q")
    repo.cp("save", "-m", "before")
    for i in range(WIDE):
        repo.write(f"p{i}/f.txt", (b"%d" % i).ljust(4000, b"b"))
    probe = repo.path.parent / "probe"
    subprocess.run(["cp", "-a", str(repo.path), str(probe)], check=True)
    Repo(probe).cp("save", "-m", "wide")
    (pack,) = [
        p for p in (probe / ".git/objects/pack").glob("*.pack") if p.name not in _packs(repo)
    ]
    size_kb = pack.stat().st_size // 1024
    for extra in range(0, 100, 4):  # the .pack fits, then the .idx may not
        here, proc = _disk_trial(repo, small_disk, (size_kb + extra) * 1024)
        assert not _orphan_packs(here), (extra, proc.stderr)
        if proc.returncode == 0:
            break


@needs_root
def test_a_read_only_pack_folder(repo: Repo) -> None:
    """A pack folder git cannot write (a read-only mount): the blobs go loose."""
    _wide_repo(repo)
    folder = str(repo.path / ".git/objects/pack")
    if not _mount("--bind", folder, folder):
        pytest.skip("cannot bind-mount here")
    try:
        if not _mount("-o", "remount,ro,bind", folder):
            pytest.skip("cannot remount read-only here")
        _files(repo, lambda i: b"edited %d\n" % i)
        _check(repo)
        assert not _packs(repo)
    finally:
        _umount(folder)
    repo.git("fsck", "--strict", "--no-dangling")
    repo.cp("restore", "cp_001")
    repo.cp("restore", "cp_002")
    assert (repo.path / "d4/f0004.txt").read_bytes() == b"edited 4\n"
