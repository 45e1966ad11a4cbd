"""`untracked.exclude` paths are never captured and never touched by a restore. A
restore with a broken `.checkpoint.yaml` (a typo in one key) stands in the defaults
so that it can still run: it must not stand them in for the user's excludes too."""

from __future__ import annotations

from ..conftest import Repo


def test_a_typo_in_the_config_does_not_let_restore_remove_excluded_files(repo: Repo) -> None:
    repo.write(".checkpoint.yaml", "untracked:\n  exclude: [localdata/]\n")
    repo.commit_all("exclude localdata")
    repo.cp("save", "-m", "before the data")  # cp_001
    repo.write("localdata/big.csv", "precious\n")
    repo.write("README.md", "# changed\n")
    repo.cp("save", "-m", "after")  # cp_002: localdata/ left out
    repo.write(".checkpoint.yaml", "untracked:\n  exclude: [localdata/]\n  typo: 1\n")
    proc = repo.cp("restore", "cp_001", expect=None)
    assert (repo.path / "localdata/big.csv").read_text() == "precious\n", proc.stdout
    assert "localdata" not in proc.stdout
    assert "left in place, as the configuration" in proc.stderr, proc.stderr
    assert "localdata/big.csv" in proc.stderr, proc.stderr
    assert (repo.path / "README.md").read_text() != "# changed\n"  # the rest came back
