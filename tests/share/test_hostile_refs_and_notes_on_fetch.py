"""What a hostile remote serves besides checkpoints: a ref under refs/checkpoints/ that is
no checkpoint name, holding what git's object check refuses, is named as refused and
nothing else is fetched for it (no branch of the remote either); a notes ref holding a
note that is no file is refused before any checkpoint is written, and is never an
internal error."""

from __future__ import annotations

from pathlib import Path

from ..conftest import Repo
from ..helpers import blob, mktree
from ..servers import bare_repo, clone, publish


def _forged(evil: Repo, tree: str, ref: str) -> str:
    head = evil.git("rev-parse", "HEAD").strip()
    index = evil.git("commit-tree", tree, "-p", head, "-m", "index").strip()
    message = f"checkpoint cp_001 on t: forged\n\nbase_commit: {head}\nauto: false\n"
    commit = evil.git("commit-tree", tree, "-p", head, "-p", index, "-m", message).strip()
    evil.git("update-ref", ref, commit)
    return commit


def _notes_with_a_submodule_entry(
    repo: Repo, tmp_path: Path, *, promoted: bool
) -> tuple[Repo, Repo]:
    """A victim that pushed cp_001 (promoted, or not), and an evil clone that replaced
    the remote's notes with a tree whose entry for cp_001 is a submodule, no file (its
    commit names no object here)."""
    url = bare_repo(tmp_path / "server.git").as_uri()
    victim = publish(repo, url)
    victim.write("x.txt", "1\n")
    victim.cp("save", "-m", "one")
    if promoted:
        victim.cp("promote", "cp_001", "--force", "--reason", "noted here")
    victim.cp("push", "origin", "cp_001")
    evil = clone(url, tmp_path / "evil")
    commit = victim.git("rev-parse", "refs/checkpoints/main/cp_001").strip()
    notes = mktree(evil, [("160000", "commit", "1" * 40, commit)])
    notes_commit = evil.git("commit-tree", notes, "-m", "notes").strip()
    evil.git("push", "-q", "-f", "origin", f"{notes_commit}:refs/notes/checkpoints")
    return victim, evil


def test_refused_refs_that_are_no_checkpoints_fetch_nothing_else(
    repo: Repo, tmp_path: Path
) -> None:
    url = bare_repo(tmp_path / "server.git").as_uri()
    victim = publish(repo, url)
    tracking = victim.git("for-each-ref", "refs/remotes")
    evil = clone(url, tmp_path / "evil")
    evil.write("ahead.txt", "a branch commit the victim never asked for\n")
    evil.commit_all("ahead")
    evil.git("push", "-q", "origin", "main")
    dot_git = mktree(evil, [("100644", "blob", blob(evil, b"x\n"), ".git")])
    _forged(evil, dot_git, "refs/checkpoints/t/not-an-id")
    evil.git("push", "-q", "origin", "refs/checkpoints/*:refs/checkpoints/*")

    fetched = victim.cp_json("fetch")
    assert fetched["refused"] == ["t/not-an-id"] and fetched["new"] == []
    assert not victim.git("for-each-ref", "refs/checkpoints")
    assert victim.git("for-each-ref", "refs/remotes") == tracking


def test_a_notes_ref_with_a_note_that_is_no_file_is_refused_before_any_checkpoint(
    repo: Repo, tmp_path: Path
) -> None:
    victim, evil = _notes_with_a_submodule_entry(repo, tmp_path, promoted=True)
    evil.write("y.txt", "2\n")
    evil.commit_all("two")
    ok = evil.git("rev-parse", "HEAD^{tree}").strip()
    _forged(evil, ok, "refs/checkpoints/t/cp_001")
    evil.git("push", "-q", "origin", "refs/checkpoints/t/cp_001")

    proc = victim.cp("fetch", expect=3)
    assert "refs/notes/checkpoints" in proc.stderr
    assert not victim.git("for-each-ref", "refs/checkpoints/remotes")


def test_a_notes_entry_that_is_no_file_is_never_an_internal_error(
    repo: Repo, tmp_path: Path
) -> None:
    victim, _ = _notes_with_a_submodule_entry(repo, tmp_path, promoted=False)
    proc = victim.cp("fetch", expect=None)
    assert proc.returncode in (0, 3) and "internal error" not in proc.stderr, proc.stderr
    assert victim.cp_json("list")["checkpoints"][-1]["status"] == "candidate"
