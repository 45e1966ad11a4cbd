"""A checkpoint whose index or overlay equals the previous one's reuses that I or U
commit (store.write_checkpoint): fewer objects, same stash shape, same restores."""

from __future__ import annotations

from .conftest import Repo


def parents(repo: Repo, name: str) -> list[str]:
    return repo.git("rev-parse", f"refs/checkpoints/main/{name}^@").split()


def test_unchanged_index_and_overlay_are_the_same_commits(repo: Repo) -> None:
    repo.write("notes.txt", "untracked\n")
    repo.write("src/app.py", "print('one')\n")
    repo.cp("save", "-m", "one")
    repo.write("src/app.py", "print('two')\n")  # W changes; I and U do not
    repo.cp("save", "-m", "two")
    first, second = parents(repo, "cp_001"), parents(repo, "cp_002")
    assert len(first) == len(second) == 3
    assert first[0] == second[0]  # the same base
    assert first[1:] == second[1:]  # the same I and U commits
    repo.cp("restore", "cp_001")
    assert (repo.path / "src/app.py").read_text() == "print('one')\n"
    assert (repo.path / "notes.txt").read_text() == "untracked\n"


def test_a_staged_change_or_a_new_untracked_file_makes_new_ones(repo: Repo) -> None:
    repo.write("notes.txt", "untracked\n")
    repo.cp("save", "-m", "one")
    repo.write("src/app.py", "print('staged')\n")
    repo.git("add", "src/app.py")
    repo.cp("save", "-m", "staged")
    repo.write("more.txt", "another\n")
    repo.cp("save", "-m", "more")
    one, staged, more = (parents(repo, f"cp_00{n}") for n in (1, 2, 3))
    assert one[1] != staged[1] and staged[2] == one[2]  # a new I, the same U
    assert more[1] == staged[1] and more[2] != staged[2]  # the same I, a new U
    repo.cp("restore", "cp_002")
    assert repo.git("diff", "--cached", "--name-only").split() == ["src/app.py"]
    assert not (repo.path / "more.txt").exists()


def test_a_new_base_makes_a_new_index_commit(repo: Repo) -> None:
    repo.cp("save", "-m", "one")
    repo.write("src/app.py", "print('committed')\n")
    repo.commit_all("next")
    repo.write("src/app.py", "print('edited')\n")
    repo.cp("save", "-m", "two")
    one, two = parents(repo, "cp_001"), parents(repo, "cp_002")
    assert one[0] != two[0] and one[1] != two[1]
    assert repo.git("rev-parse", f"{two[1]}^").strip() == two[0]  # I sits on its base


def test_manifests_are_parsed_once_and_a_broken_cache_is_no_cache(repo: Repo) -> None:
    """Listing checkpoints keeps each parsed manifest by commit id (manifest_cache.py)."""
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


def test_the_last_saves_trees_come_from_its_kept_state(repo: Repo) -> None:
    """The I and U trees of the checkpoint a save compares with come from what the last
    save kept for the quick auto-save (quickstate), not from git, when that state holds."""
    import time

    repo.write(".checkpoint.yaml", "secrets: {on_save: ignore}\n")  # its scan asks git
    repo.write("notes.txt", "untracked\n")
    repo.write("src/app.py", "print('one')\n")
    time.sleep(1.1)  # older than a second: the kept state vouches for these files
    repo.cp("save", "-m", "one")
    assert (repo.path / ".git/checkpoint/quick/state.json").exists()
    repo.write("src/app.py", "print('two')\n")
    trace = repo.path.parent / "trace2.txt"
    repo.cp("save", "-m", "two", env={"GIT_TRACE2": str(trace)})
    assert "^{tree}" not in trace.read_text()
    first, second = parents(repo, "cp_001"), parents(repo, "cp_002")
    assert first[1:] == second[1:]  # still the same I and U commits
