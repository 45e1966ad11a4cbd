"""The sweep of residue a restore's ignore rules uncover: swept and undoable, an edit
made during it left (not deleted), never a path through a folder swapped for a symlink,
never a file the target also held or the configuration in force excludes."""

from __future__ import annotations

from pathlib import Path

from ..conftest import Repo
from ..helpers import state
from .conftest import direct, trapped


def _rules_change(repo: Repo) -> None:
    """cp_001 has no .gitignore; the workspace ignores scratch/ (residue to sweep)."""
    (repo.path / ".gitignore").unlink()
    repo.git("rm", "-q", "--cached", ".gitignore")
    repo.git("commit", "-q", "-m", "no ignore rules")
    repo.cp("save", "-m", "one")
    repo.write(".gitignore", "scratch/\n")
    repo.write("scratch/s.txt", "s\n")


def test_an_edit_made_during_the_sweep_is_left_not_deleted(repo: Repo, tmp_path: Path) -> None:
    """An edit that lands while the sweep runs its git calls is seen (the bytes are
    checked after them): the restore stops with exit 3 and the edit stays."""
    _rules_change(repo)
    repo.write("work.txt", "draft\n")
    env = trapped(repo, tmp_path, " keeps ", "echo 'IMPORTANT EDIT' >> work.txt")
    proc = direct(repo, "restore", "cp_001", env=env)
    assert proc.returncode == 3 and "work.txt" in proc.stderr
    assert (repo.path / "work.txt").read_text() == "draft\nIMPORTANT EDIT\n"


def test_no_unlink_through_a_folder_swapped_for_a_symlink(repo: Repo, tmp_path: Path) -> None:
    """A folder swapped for a symlink to outside while the sweep runs: nothing is unlinked
    through it, the file outside stays."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "x.txt").write_text("precious\n")
    _rules_change(repo)
    repo.write("n/x.txt", "mine\n")
    env = trapped(repo, tmp_path, " keeps ", f"mv n n.moved && ln -s {outside} n")
    proc = direct(repo, "restore", "cp_001", env=env)
    assert proc.returncode == 3
    assert (outside / "x.txt").read_text() == "precious\n"


def test_restore_then_undo_keeps_an_ignored_file_the_target_also_held(repo: Repo) -> None:
    """A file the target held as work, ignored now: the restore and its undo leave it as
    it was before the restore, not removed by the undo."""
    repo.write("gen/x.txt", "g\n")
    repo.cp("save", "-m", "gen captured as work")
    repo.write(".gitignore", "gen/\n")  # now ignored, outside the managed set
    before = state(repo)
    repo.cp("restore", "cp_001")
    repo.cp("undo")
    assert state(repo) == before


def test_untracked_exclude_is_never_swept_by_older_rules(repo: Repo) -> None:
    """Files the configuration in force excludes are neither stored nor deleted by a
    restore to a checkpoint saved before they were excluded."""
    repo.cp("save", "-m", "before data/ was excluded")
    repo.write(".checkpoint.yaml", "untracked:\n  exclude: [data/]\n")
    for i in range(20):
        repo.write(f"data/f{i}", f"{i}\n")
    repo.cp("save", "-m", "data excluded")
    repo.cp("restore", "cp_001")
    assert len(list((repo.path / "data").iterdir())) == 20


def test_residue_uncovered_by_restored_ignore_rules_is_swept_and_undoable(repo: Repo) -> None:
    repo.cp("save", "-m", "A")
    good = state(repo)
    repo.write(".gitignore", "*.log\nnode_modules/\n*.tmp\n")  # the attempt ignores its junk
    repo.write("junk.tmp", "residue\n")
    repo.write("keep.log", "ignored before and after\n")
    messy = state(repo)
    out = repo.cp("restore").stdout
    assert "removed: junk.tmp" in out and "workspace matches" in out
    after = state(repo)
    assert {k: v for k, v in after[0].items() if k != "keep.log"} == good[0]
    assert after[1] == good[1]
    repo.cp("status", "--exit-code")  # no drift left behind
    repo.cp("undo")
    assert state(repo) == messy
