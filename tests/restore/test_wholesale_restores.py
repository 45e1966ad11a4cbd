"""A restore that rewrites most of a repository, and what its faster path rests on:
blobs staged in memory and written as new files, W's entries taken from tree diffs,
and the trees of our own checkpoints taken as sound; a forged checkpoint is still
checked, even one reused as our own index commit."""

from __future__ import annotations

import os
import stat
import subprocess

import pytest

from ..conftest import Repo
from ..helpers import blob, forge_checkpoint, state

# Above restore/plan.INDEX_DIFF_FROM (64): the diff-based paths run; 100 written files get
# their stat data refreshed by name, 150 by a refresh of the whole index (past 128);
# 300 are written by two threads (restore/apply.PARALLEL_WRITES).
MANY = 150


def _spread(repo: Repo, many: int = MANY) -> list[str]:
    """`many` tracked files over nested folders, committed."""
    paths = [f"pkg{i % 7}/sub{i % 5}/deep{i % 3}/f{i}.txt" for i in range(many)]
    for n, path in enumerate(paths):
        repo.write(path, f"original {n}\n" * (n % 40 + 1))
    repo.commit_all("many files")
    return paths


@pytest.mark.parametrize("many", [100, 150, 300])
def test_a_wholesale_restore_and_its_undo_are_exact(repo: Repo, many: int) -> None:
    paths = _spread(repo, many)
    # The checkpoint: edits, staged edits that differ from the work tree, a staged-only
    # change, an executable bit, a deletion, new untracked files, an empty file.
    for path in paths[:60]:
        repo.write(path, f"checkpoint edit of {path}\n")
    for path in paths[60:80]:
        repo.write(path, "staged version\n")
        repo.git("add", path)
        repo.write(path, "work tree version\n")
    repo.write(paths[80], "staged only\n")
    repo.git("add", paths[80])
    os.chmod(repo.path / paths[81], 0o755)
    (repo.path / paths[82]).unlink()
    for n in range(20):
        repo.write(f"new/untracked{n}.txt", f"new {n}\n")
    repo.write(paths[83], "")
    repo.cp("save", "-m", "target")
    saved, saved_status = state(repo), repo.git("status", "--porcelain")
    modified = set(paths[:80]) | set(paths[81:84])  # the work tree differs from the index

    # An attempt that touches nearly everything, differently.
    repo.git("reset", "-q", "--hard")
    for path in paths:
        repo.write(path, f"attempt on {path}\n")
    repo.write("attempt-only.txt", "residue\n")
    repo.git("add", paths[90])
    attempt = state(repo)

    repo.cp("restore", "cp_001")
    restored = state(repo)
    # The stat data of every written file whose content the index holds is fresh: only
    # the files that differ from the index look changed to git's stat-only check.
    assert set(repo.git("diff-files", "--name-only").split()) == modified
    assert restored[0] == saved[0]  # the attempt's new file too is gone (undo has it)
    assert restored[1] == saved[1]  # the index, entry for entry
    assert repo.git("status", "--porcelain") == saved_status  # as the stat cache has it
    repo.git("update-index", "--really-refresh", check=False)
    assert repo.git("status", "--porcelain") == saved_status  # and from the files' content

    repo.cp("undo")
    assert state(repo) == attempt
    # The safety checkpoint's 148 new trees went to git as one pack (gitcore/repo.PACK_FROM), which
    # git reads and checks like any other.
    assert list((repo.path / ".git" / "objects" / "pack").glob("pack-*.idx"))
    fsck = subprocess.run(["git", "fsck", "--strict"], cwd=repo.path, capture_output=True)
    assert fsck.returncode == 0, fsck.stderr


def test_blobs_past_the_memory_limit_and_empty_ones_restore(repo: Repo) -> None:
    paths = _spread(repo)
    big = os.urandom(3 << 20)  # past restore/stage.MEMORY_BLOB_MAX: staged in a file, then renamed
    (repo.path / "big.bin").write_bytes(big)
    repo.write("empty.txt", "")
    for path in paths:
        repo.write(path, f"edit {path}\n")
    repo.cp("save", "-m", "target")
    saved = state(repo)
    (repo.path / "big.bin").write_bytes(b"small now")
    (repo.path / "empty.txt").write_text("not empty")
    for path in paths:
        repo.write(path, "attempt\n")
    repo.cp("restore", "cp_001")
    assert state(repo) == saved
    assert (repo.path / "big.bin").read_bytes() == big


def test_a_symlink_in_a_written_path_is_replaced_never_followed(repo: Repo) -> None:
    paths = _spread(repo)
    outside = repo.path.parent / "outside.txt"
    outside.write_text("not the repository's\n")
    repo.cp("save", "-m", "target")
    saved = state(repo)
    for path in paths:
        repo.write(path, "attempt\n")
    victim = repo.path / paths[5]
    victim.unlink()
    victim.symlink_to(outside)
    repo.cp("restore", "cp_001")
    assert state(repo) == saved
    assert not stat.S_ISLNK(os.lstat(victim).st_mode)
    assert outside.read_text() == "not the repository's\n"


def test_a_forged_checkpoint_is_still_checked_after_our_own_saves(repo: Repo) -> None:
    paths = _spread(repo)
    for path in paths:
        repo.write(path, "ours\n")
    repo.cp("save", "-m", "ours")  # the trees file now lists our commits
    one, two = blob(repo, b"one\n"), blob(repo, b"two\n")
    rows = b"".join(
        f"100644 {name}".encode() + b"\0" + bytes.fromhex(oid)
        for name, oid in [("z.txt", one), ("a.txt", two)]  # out of order
    )
    bad = repo.git("hash-object", "-t", "tree", "-w", "--literally", "--stdin", input=rows).strip()
    forge_checkpoint(repo, repo.git("rev-parse", "HEAD^{tree}").strip(), bad)
    before = state(repo)
    proc = repo.cp("restore", "cp_099", expect=3)
    assert "out of order" in proc.stderr
    assert state(repo) == before


def _out_of_order_tree(repo: Repo) -> str:
    one, two = blob(repo, b"one\n"), blob(repo, b"two\n")
    rows = b"".join(
        f"100644 {name}".encode() + b"\0" + bytes.fromhex(oid)
        for name, oid in [("z.txt", one), ("a.txt", two)]  # out of order
    )
    return repo.git("hash-object", "-t", "tree", "-w", "--literally", "--stdin", input=rows).strip()


def _message(cp_id: str, head: str) -> str:
    return (
        f"checkpoint {cp_id} on main: forged\n\nbase_commit: {head}\ntask: main\n"
        f"checkpoint_id: {cp_id}\nauto: false\n"
    )


def test_a_forged_checkpoint_reused_as_our_index_commit_is_still_checked(
    repo: Repo,
) -> None:
    """The trees file names every I commit a save used, and a save reuses the previous
    checkpoint's I commit when its tree equals ours (storage/commits). Only that I
    commit's *tree* is ours: its parents are whoever wrote it. A forged checkpoint Y whose
    commit is also the I commit of a forged latest checkpoint X must not become "ours for
    sure" after one ordinary save: its hostile index tree is still checked."""
    head = repo.git("rev-parse", "HEAD").strip()
    head_tree = repo.git("rev-parse", "HEAD^{tree}").strip()
    bad = _out_of_order_tree(repo)
    yi = repo.git("commit-tree", bad, "-p", head, "-m", "index").strip()
    # Y: checkpoint-shaped, its tree the clean index's tree (HEAD's: easy to predict).
    y = repo.git("commit-tree", head_tree, "-p", head, "-p", yi, "-m", _message("cp_050", head))
    y = y.strip()
    # X: the task's latest checkpoint, its I commit being Y.
    x = repo.git("commit-tree", head_tree, "-p", head, "-p", y, "-m", _message("cp_060", head))
    repo.git("update-ref", "refs/checkpoints/main/cp_050", y)
    repo.git("update-ref", "refs/checkpoints/main/cp_060", x.strip())

    before = state(repo)
    proc = repo.cp("restore", "cp_050", expect=3)  # refused, as it should be
    assert "out of order" in proc.stderr
    assert state(repo) == before

    # One ordinary save, index clean: it reuses X's I commit, Y, and names it in `trees`.
    repo.write("src/app.py", "print('edited')\n")
    repo.cp("save", "-m", "mine")
    kept = (repo.path / ".git" / "checkpoint" / "trees").read_text()
    assert y in kept  # (so Y looks like one of ours)

    before = state(repo)
    proc = repo.cp("restore", "cp_050", expect=None)
    assert proc.returncode == 3 and "out of order" in proc.stderr, (proc.returncode, proc.stderr)
    assert state(repo) == before
