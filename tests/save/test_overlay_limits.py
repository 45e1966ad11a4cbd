"""The overlay's limits (files and bytes): a save over either leaves out the largest
files or the fullest folders by name, with the exclude line that keeps them out, and
saves the rest; what it leaves out is never hashed or stored, and a huge untracked
tree is left out quickly. With `limits: {on_exceed: refuse}` the save is refused in one
line (exit 3) before anything is hashed. A save at the limit is fine."""

from __future__ import annotations

import json
import os
import time

from ..conftest import Repo
from ..helpers import REF1, blob_stored, checkpoint_refs, one_line_error
from ..launcher import no_traceback, scratch_left
from .conftest import blob, save_json, tree, write_config


def test_overlay_file_limit(repo: Repo) -> None:
    write_config(repo, "limits: {overlay_max_files: 10}\n")
    repo.git("add", ".checkpoint.yaml")
    repo.git("commit", "-q", "-m", "config")
    for n in range(12):
        repo.write(f"generated/out/f{n}.txt", f"{n}\n")
    repo.write("one.txt", "1\n")
    proc = repo.cp("save")
    said = proc.stdout.splitlines()[1]
    assert said.startswith("left out: generated/out/ (12 files")
    assert "untracked.exclude: [generated/out/]" in said
    assert set(tree(repo, f"{REF1}^3")) == {"one.txt"}
    # refused instead, when asked
    write_config(repo, "limits: {overlay_max_files: 10, on_exceed: refuse}\n")
    repo.write("two.txt", "2\n")
    proc = repo.cp("save", expect=3)
    line = one_line_error(proc.stderr)
    assert "generated/" in line
    assert "untracked.exclude" in line
    assert proc.stdout == ""
    assert len(checkpoint_refs(repo)) == 1
    # the suggested exclude makes it fit
    write_config(repo, "limits: {overlay_max_files: 10, on_exceed: refuse}\n"
                 "untracked: {exclude: [generated/]}\n")  # fmt: skip
    repo.cp("save")
    assert set(tree(repo, "refs/checkpoints/main/cp_002^3")) == {"one.txt", "two.txt"}


def test_overlay_byte_limit(repo: Repo) -> None:
    write_config(repo, "limits: {overlay_max_bytes: 1KiB, on_exceed: refuse}\n")
    repo.git("add", ".checkpoint.yaml")
    repo.git("commit", "-q", "-m", "config")
    repo.write("data/big/blob.bin", os.urandom(2048))
    repo.write("small.txt", "s\n")
    proc = repo.cp("save", "--json", expect=3)
    line = one_line_error(proc.stderr)
    assert "data/big/" in line
    assert "untracked.exclude" in line
    if proc.stdout.strip():  # an error under --json may be one JSON object, nothing else
        assert isinstance(json.loads(proc.stdout), dict)
    assert checkpoint_refs(repo) == []
    write_config(repo, "limits: {overlay_max_bytes: 1KiB}\n")
    data = save_json(repo)
    assert data["left_out"] == [
        {"path": "data/big/blob.bin", "why": "over overlay_max_bytes", "files": 1, "bytes": 2048}
    ]
    assert set(tree(repo, f"{REF1}^3")) == {"small.txt"}  # (.checkpoint.yaml is tracked)


def test_overlay_limit_exactly_at_limit_is_fine(repo: Repo) -> None:
    write_config(repo, "limits: {overlay_max_files: 3}\n")
    repo.write("a/1", "1\n")
    repo.write("a/2", "2\n")
    assert save_json(repo)["overlay_files"] == 3


def test_what_the_file_limit_leaves_out_is_never_hashed(repo: Repo) -> None:
    repo.write(".checkpoint.yaml", "limits: {overlay_max_files: 3}\n")
    repo.write("src/app.py", "changed\n")
    contents = [f"untracked number {i}\n".encode() for i in range(5)]
    for i, data in enumerate(contents):
        repo.write(f"gen/f{i}.txt", data)
    proc = repo.cp("save", "-m", "x")
    assert "left out: gen/ (5 files" in proc.stdout
    no_traceback(proc)
    assert blob(repo, REF1, "src/app.py") == b"changed\n"
    assert not any(blob_stored(repo, data) for data in contents)
    assert scratch_left(repo.path / ".git") == []
    assert not list((repo.path / ".git/checkpoint").glob("quick/pending-*"))


def test_an_overlay_over_its_file_limit_is_refused_before_hashing(repo: Repo) -> None:
    repo.write(".checkpoint.yaml", "limits: {overlay_max_files: 3, on_exceed: refuse}\n")
    repo.write("src/app.py", "changed\n")
    contents = [f"untracked number {i}\n".encode() for i in range(5)]
    for i, data in enumerate(contents):
        repo.write(f"gen/f{i}.txt", data)
    proc = repo.cp("save", "-m", "x", expect=3)
    assert "overlay too large" in proc.stderr
    no_traceback(proc)
    assert repo.git("for-each-ref", "refs/checkpoints") == ""
    assert not any(blob_stored(repo, data) for data in contents)
    assert scratch_left(repo.path / ".git") == []
    assert not list((repo.path / ".git/checkpoint").glob("quick/pending-*"))


def test_what_the_byte_limit_leaves_out_is_never_hashed(repo: Repo) -> None:
    repo.write(".checkpoint.yaml", "limits: {overlay_max_bytes: 4096}\n")
    big = b"B" * 10_000 + b" unique\n"
    repo.write("big.bin", big)
    proc = repo.cp("save", "-m", "x")
    assert "left out: big.bin (9.8 KiB, over overlay_max_bytes" in proc.stdout
    assert not blob_stored(repo, big)


def test_an_overlay_over_its_byte_limit_is_refused_before_hashing(repo: Repo) -> None:
    repo.write(".checkpoint.yaml", "limits: {overlay_max_bytes: 4096, on_exceed: refuse}\n")
    big = b"B" * 10_000 + b" unique\n"
    repo.write("big.bin", big)
    proc = repo.cp("save", "-m", "x", expect=3)
    assert "overlay too large" in proc.stderr
    assert repo.git("for-each-ref", "refs/checkpoints") == ""
    assert not blob_stored(repo, big)


def test_huge_untracked_tree_left_out_quickly(repo: Repo) -> None:
    many = repo.path / "generated"
    many.mkdir()
    for i in range(6000):  # over the default limit of 5,000 files
        (many / f"f{i}.txt").write_bytes(b"x")
    repo.write("src/app.py", "changed\n")
    start = time.monotonic()
    proc = repo.cp("save")
    assert "left out: generated/ (6,000 files" in proc.stdout
    assert blob(repo, REF1, "src/app.py") == b"changed\n"
    assert time.monotonic() - start < 30
