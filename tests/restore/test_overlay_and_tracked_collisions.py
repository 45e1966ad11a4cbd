"""A checkpoint whose overlay (its untracked files) and tracked files collide, which no
save writes: an overlay path below a tracked file, symlink or submodule, or one the
tracked tree holds itself. Restore and verify refuse it as an unsafe checkpoint, in one
line that says they collide, with nothing written."""

from __future__ import annotations

import pytest

from ..conftest import Repo
from ..helpers import blob, configure, forge_checkpoint, mktree, one_line_of, state, verifier


def _collision(repo: Repo, kind: str) -> str:
    """A forged checkpoint of HEAD's tree plus `a.txt` as `kind`, whose overlay holds
    `a.txt/x` (or `a.txt` itself, for "same path" and "folder"); the colliding path."""
    head = repo.git("rev-parse", "HEAD").strip()
    rows = repo.git("ls-tree", "HEAD").splitlines()
    x, tracked = blob(repo, b"x\n"), blob(repo, b"tracked\n")
    inside = mktree(repo, [("100644", "blob", x, "x")])
    overlay = mktree(repo, [("040000", "tree", inside, "a.txt")])
    entry = {
        "file": f"100644 blob {tracked}\ta.txt",
        "symlink": f"120000 blob {blob(repo, b'README.md')}\ta.txt",
        "submodule": f"160000 commit {head}\ta.txt",
        "same path": f"100644 blob {tracked}\ta.txt",
        "folder": f"040000 tree {inside}\ta.txt",
    }[kind]
    if kind in ("same path", "folder"):
        overlay = mktree(repo, [("100644", "blob", x, "a.txt")])
    tree = repo.git("mktree", input="".join(f"{r}\n" for r in [*rows, entry]).encode()).strip()
    forge_checkpoint(repo, tree, overlay)
    return "a.txt" if kind in ("same path", "folder") else "a.txt/x"


@pytest.mark.parametrize("kind", ["file", "symlink", "submodule", "same path", "folder"])
def test_an_overlay_colliding_with_tracked_files_is_refused(repo: Repo, kind: str) -> None:
    held = _collision(repo, kind)
    repo.write("README.md", "edited\n")
    before = state(repo)
    refs = repo.git("for-each-ref", "refs/checkpoints")
    line = one_line_of(repo.cp("restore", "cp_099", expect=3))
    assert "unsafe checkpoint" in line and "overlay and its tracked files collide" in line
    assert repr(held) in line and "not managed" not in line, line
    assert state(repo) == before
    assert repo.git("for-each-ref", "refs/checkpoints") == refs  # no safety checkpoint


def test_verify_refuses_an_overlay_below_a_tracked_file(repo: Repo) -> None:
    configure(repo, verifier("ok", "true"))
    _collision(repo, "file")
    line = one_line_of(repo.cp("verify", "cp_099", expect=3))
    assert "overlay and its tracked files collide" in line, line
