"""helper-19's attacks on the wholesale-restore change (9351379: in-memory staging, raw
tree diffs, ours_for_sure, write_pack); both fixed in the commit after it."""

from __future__ import annotations

from .conftest import Repo
from .helpers import blob, state


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


def test_a_forged_checkpoint_reused_as_our_index_commit_skips_the_tree_checks(
    repo: Repo,
) -> None:
    """The trees file names every I commit a save used, and a save reuses the previous
    checkpoint's I commit when its tree equals ours (write_checkpoint). Only that I
    commit's *tree* is ours: its parents are whoever wrote it. A forged checkpoint Y whose
    commit is also the I commit of a forged latest checkpoint X becomes "ours for sure"
    after one ordinary save, and its hostile index tree is then never checked."""
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
    assert y in kept  # (the precondition of the attack)

    before = state(repo)
    proc = repo.cp("restore", "cp_050", expect=None)
    assert proc.returncode == 3 and "out of order" in proc.stderr, (proc.returncode, proc.stderr)
    assert state(repo) == before


def _objects(repo: Repo) -> tuple[int, int]:
    """(loose objects, packs) in the repository's object store."""
    root = repo.path / ".git" / "objects"
    loose = sum(1 for d in root.iterdir() if len(d.name) == 2 for _ in d.iterdir())
    return loose, len(list((root / "pack").glob("pack-*.pack")))


def test_an_unchanged_save_writes_no_pack_of_trees_it_already_has(repo: Repo) -> None:
    """write_objects leaves a loose tree that is there already (it only renews its
    date); write_pack writes every tree it is given, present or not. So each capture of
    a change spread over 128+ folders adds one more pack of the same trees: a save that
    finds nothing changed adds ~400 duplicate trees as a new pack, every time (git's
    gc.autoPackLimit is 50: `git gc --auto` then repacks everything)."""
    paths = [f"p{i}/q{i % 3}/f{i}" for i in range(200)]
    for n, path in enumerate(paths):
        repo.write(path, f"{n}\n")
    repo.commit_all("wide")
    for n, path in enumerate(paths):
        repo.write(path, f"{n} edited\n")
    repo.cp("save", "-m", "wide edit")
    before = _objects(repo)
    for _ in range(3):
        assert "unchanged since cp_001" in repo.cp("save", "-m", "again").stdout
    assert _objects(repo) == before  # nothing new to store; 3 more packs here
