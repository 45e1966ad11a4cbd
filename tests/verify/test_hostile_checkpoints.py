"""`verify` refuses a hostile checkpoint as `restore` does, before any verifier runs."""

from __future__ import annotations

from pathlib import Path

from ..conftest import Repo
from ..helpers import blob, configure, forge_checkpoint, mktree, verifier


def test_verify_refuses_a_hostile_checkpoint_like_restore(repo: Repo, tmp_path: Path) -> None:
    configure(repo, verifier("unit", "true"))
    evil = blob(repo, b"pwned\n")
    base_rows = [
        tuple(line.split(None, 3))
        for line in repo.git("ls-tree", "HEAD").splitlines()  # (mode, type, id, name)
    ]
    link = blob(repo, str(tmp_path).encode())
    tree = mktree(repo, [*base_rows, ("120000", "blob", link, "esc")])  # type: ignore[list-item]
    overlay = mktree(
        repo, [("040000", "tree", mktree(repo, [("100644", "blob", evil, "x")]), "esc")]
    )
    forge_checkpoint(repo, tree, overlay)
    proc = repo.cp("verify", "cp_099", expect=3)
    assert "unsafe" in proc.stderr
    assert "promoted" not in repo.cp("list").stdout
    assert not (tmp_path / "x").exists()
