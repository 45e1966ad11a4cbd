"""Regression tests for what an adversarial run against the rewritten restore found,
one test per finding, named after what broke (`/tmp/attack-findings` numbering in the
test names' docstrings).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from .conftest import Repo
from .helpers import blob, forge_checkpoint, mktree, state
from .test_issue7_restore import direct, trapped


def _rules_change(repo: Repo) -> None:
    """cp_001 has no .gitignore; the workspace ignores scratch/ (residue to sweep)."""
    (repo.path / ".gitignore").unlink()
    repo.git("rm", "-q", "--cached", ".gitignore")
    repo.git("commit", "-q", "-m", "no ignore rules")
    repo.cp("save", "-m", "one")
    repo.write(".gitignore", "scratch/\n")
    repo.write("scratch/s.txt", "s\n")


def test_an_edit_made_during_the_sweep_is_left_not_deleted(repo: Repo, tmp_path: Path) -> None:
    """02: the bytes check ran before the sweep's git calls."""
    _rules_change(repo)
    repo.write("work.txt", "draft\n")
    env = trapped(repo, tmp_path, " keeps ", "echo 'IMPORTANT EDIT' >> work.txt")
    proc = direct(repo, "restore", "cp_001", env=env)
    assert proc.returncode == 3 and "work.txt" in proc.stderr
    assert (repo.path / "work.txt").read_text() == "draft\nIMPORTANT EDIT\n"


def test_no_unlink_through_a_folder_swapped_for_a_symlink(repo: Repo, tmp_path: Path) -> None:
    """07: a file outside the work tree was unlinked."""
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
    """01: undo removed an ignored file that was there before the restore."""
    repo.write("gen/x.txt", "g\n")
    repo.cp("save", "-m", "gen captured as work")
    repo.write(".gitignore", "gen/\n")  # now ignored, outside the managed set
    before = state(repo)
    repo.cp("restore", "cp_001")
    repo.cp("undo")
    assert state(repo) == before


def test_untracked_exclude_is_never_swept_by_older_rules(repo: Repo) -> None:
    """10: files the configuration in force excludes were stored and deleted."""
    repo.cp("save", "-m", "before data/ was excluded")
    repo.write(".checkpoint.yaml", "untracked:\n  exclude: [data/]\n")
    for i in range(20):
        repo.write(f"data/f{i}", f"{i}\n")
    repo.cp("save", "-m", "data excluded")
    repo.cp("restore", "cp_001")
    assert len(list((repo.path / "data").iterdir())) == 20


def test_a_tree_nested_too_deep_is_a_one_line_refusal(repo: Repo) -> None:
    """06: RecursionError, exit 4."""
    tree = mktree(repo, [("100644", "blob", blob(repo, b"deep\n"), "f")])
    for _ in range(1100):
        tree = mktree(repo, [("040000", "tree", tree, "d")])
    forge_checkpoint(repo, repo.git("rev-parse", "HEAD^{tree}").strip(), tree)
    before = state(repo)
    proc = repo.cp("restore", "cp_099", expect=3)
    assert "too deep" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1
    assert state(repo) == before


def test_a_tree_entry_naming_a_blob_is_a_one_line_refusal(repo: Repo) -> None:
    """13: ValueError, exit 4."""
    data = b"40000 evil\0" + bytes.fromhex(blob(repo, b"hi\n"))
    tree = subprocess.run(
        ["git", "hash-object", "-t", "tree", "-w", "--literally", "--stdin"],
        cwd=repo.path, input=data, capture_output=True, check=True,
    ).stdout.decode().strip()  # fmt: skip
    forge_checkpoint(repo, repo.git("rev-parse", "HEAD^{tree}").strip(), tree)
    repo.write("n.txt", "mine\n")
    before = state(repo)
    proc = repo.cp("restore", "cp_099", expect=3)
    assert "malformed tree" in proc.stderr
    assert state(repo) == before
