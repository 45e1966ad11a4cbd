"""gitcore/catfile.py reads `git cat-file --batch` for the graft (folders by
`<tree>:<path>`), a restore's staging (blobs streamed) and its plan (trees, one at a
time through the kept child), and the secret scan (blobs streamed, missing ones
skipped). Here it meets hostile names, answers that look like headers, big and many
objects, missing ones in the middle, submodule entries and links without their blob,
all through the real `git checkpoint`.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

from ..conftest import Repo
from ..helpers import blob, fingerprint, forge_checkpoint, state

ZEROS = "0" * 40

HOSTILE = [
    "a b.txt",
    "x tree 12",
    f"{ZEROS} blob 5",
    " leading space",
    "trailing space ",
    "tab\there",
    "-dash",
    "colon:name",
    "ends.with.colon:",
    'quote"d',
    "back\\slash",
    "uni\u00e9\u65e5",
    "missing",
    "x missing",
    "dir with space/inner file",
    "x tree 13/f blob 3",
    f"{ZEROS} tree 1/leaf",
]


def lock_free(repo: Repo) -> bool:
    path = repo.path / ".git/checkpoint/lock"
    if not path.exists():
        return True
    with open(path, "a") as fh:
        try:
            fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
    return True


def test_hostile_names_save_graft_restore_and_undo(repo: Repo) -> None:
    for n, name in enumerate(HOSTILE):
        repo.write(name, f"tracked {n}\n")
    repo.commit_all("hostile names")
    for n, name in enumerate(HOSTILE):  # changed files in those folders: the graft
        repo.write(name, f"edited {n}\n")
    repo.write("x tree 13/new untracked", "overlay\n")
    repo.write(f"{ZEROS} blob 5.d/u", "overlay 2\n")
    saved = state(repo)
    repo.cp("save", "-m", "hostile")
    tree = repo.git("rev-parse", "refs/checkpoints/main/cp_001^{tree}").strip()
    # W as git itself would write it: `add -A` of a copy of the index
    env = {**os.environ, "GIT_INDEX_FILE": str(repo.path / ".git/probe-index")}
    import subprocess

    subprocess.run(["cp", str(repo.path / ".git/index"), env["GIT_INDEX_FILE"]], check=True)
    subprocess.run(["git", "add", "-u"], cwd=repo.path, env=env, check=True)
    want = subprocess.run(
        ["git", "write-tree"], cwd=repo.path, env=env, check=True, capture_output=True, text=True
    ).stdout.strip()
    os.unlink(env["GIT_INDEX_FILE"])
    assert tree == want
    for n, name in enumerate(HOSTILE):
        repo.write(name, f"again {n}\n")
    (repo.path / "x tree 13/new untracked").unlink()
    repo.cp("restore", "cp_001")
    assert state(repo) == saved
    repo.cp("undo")
    assert lock_free(repo)


def test_a_name_with_a_newline_is_saved_and_restored(repo: Repo) -> None:
    repo.write("line\nbreak", "tracked\n")
    repo.write("dir\nnl/inner", "tracked 2\n")
    repo.commit_all("newline names")
    repo.write("line\nbreak", "edited\n")
    repo.write("dir\nnl/inner", "edited 2\n")
    repo.write("untracked\nnl", "overlay\n")
    saved = state(repo)
    repo.cp("save", "-m", "newlines")
    repo.write("line\nbreak", "again\n")
    repo.write("dir\nnl/inner", "again 2\n")
    (repo.path / "untracked\nnl").unlink()
    repo.cp("restore", "cp_001")
    assert state(repo) == saved


def test_a_large_blob_and_many_small_ones_round_trip(repo: Repo) -> None:
    big = os.urandom(1 << 20) * 24 + b"tail"  # 24 MiB and a bit: streamed to disk
    repo.write("big.bin", big)
    for n in range(3000):
        repo.write(f"many/{n // 100}/f{n}.txt", f"small {n}\n" * (n % 7))
    repo.commit_all("big and many")
    repo.write("big.bin", b"small now\n")
    for n in range(0, 3000, 2):
        (repo.path / f"many/{n // 100}/f{n}.txt").unlink()
    for n in range(1, 3000, 2):
        repo.write(f"many/{n // 100}/f{n}.txt", "changed\n")
    changed = state(repo)
    repo.cp("save", "-m", "changed")
    repo.cp("restore", "cp_001")  # cp_001: the changed state, the same: nothing to do
    repo.git("checkout", "-q", "--", ".")  # back to the commit by hand
    repo.cp("restore", "cp_001")
    assert state(repo) == changed
    repo.cp("undo")
    assert (repo.path / "big.bin").read_bytes() == big


def _forged_with(repo: Repo, entries: list[tuple[str, str, str, str]]) -> str:
    head_tree = repo.git("rev-parse", "HEAD^{tree}").strip()
    rows = []
    for line in repo.git("ls-tree", head_tree).splitlines():
        meta, name = line.split("\t", 1)
        mode, kind, oid = meta.split()
        rows.append((mode, kind, oid, name))
    text = "".join(f"{m} {k} {o}\t{n}\n" for m, k, o, n in rows + entries)
    return repo.git("mktree", "--missing", input=text.encode()).strip()


def _absent_blob(repo: Repo, data: bytes) -> str:
    return repo.git("hash-object", "--stdin", input=data).strip()  # not written


@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_a_blob_missing_from_the_store_stops_the_restore_before_any_write(
    repo: Repo, where: str
) -> None:
    good = [
        ("100644", "blob", blob(repo, f"good {n}\n".encode()), f"g{n:02}.txt") for n in range(20)
    ]
    bad = ("100644", "blob", _absent_blob(repo, b"never stored\n"), "gone.txt")
    at = {"first": 0, "middle": 10, "last": 20}[where]
    entries = [*good[:at], bad, *good[at:]]
    forge_checkpoint(repo, _forged_with(repo, entries))
    repo.write("src/app.py", "local edit\n")
    before = state(repo)
    proc = repo.cp("restore", "cp_099", expect=None)
    assert proc.returncode in (3, 4), (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert state(repo) == before
    assert not (repo.path / ".git/checkpoint/restore-journal.json").exists()
    assert lock_free(repo)
    again = repo.cp("restore", "--continue", expect=None)
    assert again.returncode == 2, again.stderr  # nothing is pending


def test_a_symlink_whose_blob_is_missing_is_refused(repo: Repo) -> None:
    link = ("120000", "blob", _absent_blob(repo, b"README.md"), "link")
    forge_checkpoint(repo, _forged_with(repo, [link]))
    before = state(repo)
    proc = repo.cp("restore", "cp_099", expect=3)
    assert "missing object" in proc.stderr, proc.stderr
    assert state(repo) == before
    assert lock_free(repo)


def test_a_blob_missing_beside_a_link_and_files(repo: Repo) -> None:
    rows = [
        ("120000", "blob", blob(repo, b"README.md"), "link-ok"),
        ("100644", "blob", blob(repo, b"fine\n"), "fine.txt"),
        ("100755", "blob", _absent_blob(repo, b"#!/bin/sh\n"), "tool.sh"),
    ]
    forge_checkpoint(repo, _forged_with(repo, rows))
    before = state(repo)
    proc = repo.cp("restore", "cp_099", expect=None)
    assert proc.returncode in (3, 4), proc.stderr
    assert "Traceback" not in proc.stderr
    assert state(repo) == before


def test_a_submodule_entry_is_restored_as_its_commit_never_read_as_a_blob(repo: Repo) -> None:
    commit = repo.git("rev-parse", "HEAD").strip()
    rows = [("160000", "commit", commit, "vendor"), ("160000", "commit", "1" * 40, "absent")]
    forge_checkpoint(repo, _forged_with(repo, rows))
    proc = repo.cp("restore", "cp_099", expect=None)
    assert "Traceback" not in proc.stderr
    assert proc.returncode in (0, 3), proc.stderr
    if proc.returncode == 0:
        assert not (repo.path / "vendor" / "README.md").exists()  # never entered


def test_the_secret_scan_reads_many_blobs_beside_the_store(repo: Repo) -> None:
    """secrets.on_save: warn scans what is new on a thread of its own while the
    checkpoint is written: many files, one with a key, and one big one."""
    for n in range(1500):
        repo.write(f"gen/{n // 50}/m{n}.py", f"VALUE_{n} = {n}\n")
    repo.write(
        "gen/key.py",
        'AWS = "AKIAZ3MHPQRS7TUVWXYZ"\nS = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq9ETg5Yk2"\n',
    )
    repo.write("gen/big.txt", b"x" * (3 << 20))
    proc = repo.cp("save", "-m", "many")
    assert "checkpoint saved: cp_001" in proc.stdout
    assert "possible secret saved" in proc.stderr and "gen/key.py" in proc.stderr, proc.stderr


def test_objects_looked_up_after_the_kept_child_is_gone(repo: Repo, tmp_path: Path) -> None:
    """restore reads trees one at a time through the kept child; a restore of a deep
    tree of hostile folder names reads many of them."""
    path = ""
    for depth in range(40):
        path += f"d{depth} tree {depth}/"
        repo.write(f"{path}f", f"{depth}\n")
    repo.commit_all("deep")
    for depth in range(0, 40, 3):
        p = "".join(f"d{d} tree {d}/" for d in range(depth + 1))
        repo.write(f"{p}f", "edited\n")
    saved = fingerprint(repo.path)
    repo.cp("save", "-m", "deep")
    repo.git("checkout", "-q", "--", ".")
    repo.cp("restore")
    assert fingerprint(repo.path) == saved


@pytest.mark.parametrize("folder", [f"{ZEROS} tree 7", "x missing", "y blob 3 missing", "a b"])
def test_an_intent_to_add_file_in_a_folder_the_index_tree_lacks(repo: Repo, folder: str) -> None:
    """The graft asks `<tree>:<folder>` for a folder only `add -N` entries are in: the
    answer is "<spec> missing", however much the folder's name looks like an answer."""
    repo.write(f"{folder}/new.txt", "intent to add\n")
    repo.git("add", "-N", f"{folder}/new.txt")
    repo.write("src/app.py", "print('changed')\n")
    saved = state(repo)
    repo.cp("save", "-m", "ita")
    stored = repo.git("ls-tree", "-r", "--name-only", "refs/checkpoints/main/cp_001")
    assert f"{folder}/new.txt" in stored.splitlines(), stored
    assert repo.git("show", f"refs/checkpoints/main/cp_001:{folder}/new.txt") == "intent to add\n"
    repo.write(f"{folder}/new.txt", "changed again\n")
    repo.write("src/app.py", "print('again')\n")
    repo.cp("restore", "cp_001")
    assert state(repo) == saved
