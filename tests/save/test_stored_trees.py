"""The trees a save stores: a save that finds nothing new writes no pack of trees it
already has, and a wide change is packed once with every tree below it in the store."""

from __future__ import annotations

from ..conftest import Repo


def _objects(repo: Repo) -> tuple[int, int]:
    """(loose objects, packs) in the repository's object store."""
    root = repo.path / ".git" / "objects"
    loose = sum(1 for d in root.iterdir() if len(d.name) == 2 for _ in d.iterdir())
    return loose, len(list((root / "pack").glob("pack-*.pack")))


def test_an_unchanged_save_writes_no_pack_of_trees_it_already_has(repo: Repo) -> None:
    """The trees of a change spread over 128+ folders go to git as one pack: a save that
    finds nothing changed must not write those ~400 trees again, as a new pack each time
    (git's gc.autoPackLimit is 50: `git gc --auto` would then repack everything). A
    loose tree already there only has its date renewed."""
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
    assert _objects(repo) == before  # nothing new to store: no pack, no loose object


def _packs(repo: Repo) -> list[str]:
    return sorted(p.name for p in (repo.path / ".git/objects/pack").glob("*.pack"))


def test_a_wide_save_packs_its_trees_once_and_git_has_them_all(repo: Repo) -> None:
    """Repo.store_trees (gitcore/repo) asks only whether the root is stored: saving the
    same wide change again adds no pack, and every tree below every checkpoint is there."""
    for i in range(160):
        repo.write(f"w/d{i:03}/f.txt", f"base {i}\n")
    repo.commit_all("wide")
    for i in range(160):
        repo.write(f"w/d{i:03}/f.txt", f"changed {i}\n")
    repo.cp("save", "-m", "one")
    packs = _packs(repo)
    repo.cp("save", "-m", "two")  # the same change again
    assert _packs(repo) == packs
    for i in range(0, 160, 2):
        repo.write(f"w/d{i:03}/f.txt", f"half {i}\n")
    repo.cp("save", "-m", "three")
    repo.git("fsck", "--strict", "--no-dangling")
    repo.cp("restore", "cp_001")
    assert (repo.path / "w/d000/f.txt").read_text() == "changed 0\n"
    assert (
        repo.git("status", "--porcelain")
        == " M " + "\n M ".join(f"w/d{i:03}/f.txt" for i in range(160)) + "\n"
    )
    repo.cp("undo")
    assert (repo.path / "w/d000/f.txt").read_text() == "half 0\n"
    repo.git("fsck", "--strict", "--no-dangling")
