"""Listing checkpoints keeps each parsed manifest by commit id (storage/manifest_cache):
read once, a broken cache is no cache, and a dropped checkpoint is forgotten."""

from __future__ import annotations

from ..conftest import Repo


def test_manifests_are_parsed_once_and_a_broken_cache_is_no_cache(repo: Repo) -> None:
    """Listing checkpoints keeps each parsed manifest by commit id (storage/manifest_cache)."""
    import json

    def listing() -> list[list[str]]:  # without the age column, which moves on
        return [line.split()[:1] + line.split()[2:] for line in repo.cp("list").stdout.splitlines()]

    repo.cp("save", "-m", "one")
    listed = listing()  # the first listing that sees cp_001 keeps it
    cache = repo.path / ".git/checkpoint/manifests.json"
    commit = repo.git("rev-parse", "refs/checkpoints/main/cp_001").strip()
    kept = json.loads(cache.read_text())
    assert kept[commit][0]["checkpoint_id"] == "cp_001" and kept[commit][1] is None
    assert listing() == listed  # from the cache
    for broken in ("{not json", f'{{"{commit}": ["not a manifest", 7]}}', "[]"):
        cache.write_text(broken)
        assert listing() == listed  # read again from the commit
    cache.chmod(0o000)  # unreadable (as root this still reads: either way, same answer)
    try:
        assert listing() == listed
    finally:
        cache.chmod(0o644)


def test_the_cache_forgets_dropped_checkpoints(repo: Repo) -> None:
    import json

    repo.cp("save", "-m", "one")
    repo.write("src/app.py", "print('two')\n")
    repo.cp("save", "-m", "two")
    repo.cp("list")
    cache = repo.path / ".git/checkpoint/manifests.json"
    first = repo.git("rev-parse", "refs/checkpoints/main/cp_001").strip()
    assert first in json.loads(cache.read_text())
    repo.cp("drop", "cp_001")
    repo.cp("status")  # lists the task's checkpoints again
    assert first not in json.loads(cache.read_text())
