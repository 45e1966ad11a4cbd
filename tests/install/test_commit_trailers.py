"""`hooks install --git --trailers` adds a prepare-commit-msg hook: a commit whose tree a
verified checkpoint holds gets `Checkpoint:` and `Verified-by:` trailers, once (an amend
does not repeat them), none on a merge's or a squash's message, nor on a message still to
be written in the editor, so that an empty one still aborts. The hook never stops a
commit, chains with the hook that was there, and goes as it came."""

from __future__ import annotations

import os
import subprocess
import sys

from git_checkpoint.install.git_hooks import templates_dir

from ..conftest import Repo
from ..helpers import configure, verifier


def git_run(
    repo: Repo, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", *args],
        cwd=repo.path,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, **(env or {})},
        timeout=120,
    )


def message(repo: Repo, rev: str = "HEAD") -> str:
    """The commit's message, byte for byte."""
    return repo.git("cat-file", "commit", rev).split("\n\n", 1)[1]


def trailers(repo: Repo, rev: str = "HEAD") -> list[str]:
    text = repo.git("interpret-trailers", "--parse", input=message(repo, rev).encode())
    return text.splitlines()


def verified(repo: Repo) -> None:
    """The workspace saved and verified as main/cp_001 (unit passes), hooks installed."""
    configure(repo, verifier("unit", "true"))
    repo.cp("hooks", "install", "--git", "--trailers")
    repo.write("src/app.py", "print('verified')\n")
    repo.write("src/new_module.py", "VALUE = 1\n")
    repo.cp("verify")


def test_a_commit_of_a_verified_tree_gets_both_trailers_once(repo: Repo) -> None:
    verified(repo)
    repo.git("add", "-A")
    proc = git_run(repo, "commit", "-q", "-m", "the verified work")
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    found = trailers(repo)
    assert found[0] == "Checkpoint: main/cp_001"
    assert len(found) == 2 and found[1].startswith("Verified-by: unit passed 20")
    assert message(repo).startswith("the verified work\n\nCheckpoint: main/cp_001\n")
    assert git_run(repo, "commit", "-q", "--amend", "--no-edit").returncode == 0
    assert trailers(repo) == found
    assert git_run(repo, "commit", "-q", "--amend", "-m", message(repo)).returncode == 0
    assert trailers(repo) == found


def test_an_amend_to_another_tree_takes_the_trailers_out(repo: Repo) -> None:
    verified(repo)
    repo.git("add", "-A")
    assert git_run(repo, "commit", "-q", "-m", "the verified work").returncode == 0
    repo.write("src/app.py", "print('changed after the evidence')\n")
    proc = git_run(repo, "commit", "-q", "-a", "--amend", "--no-edit")
    assert proc.returncode == 0, proc.stderr
    assert trailers(repo) == []
    assert message(repo).strip() == "the verified work"
    assert "trailers taken out: no evidence for this tree" in proc.stderr


def test_a_commit_of_another_tree_gets_none(repo: Repo) -> None:
    verified(repo)
    repo.write("src/app.py", "print('not what was verified')\n")
    repo.git("add", "-A")
    proc = git_run(repo, "commit", "-q", "-m", "unverified")
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    assert message(repo) == "unverified\n"


def test_a_message_still_to_be_written_is_left_alone(repo: Repo) -> None:
    """git's editor opens on it: with a trailer in it, an emptied message would make a
    commit instead of aborting one. One line names the checkpoint instead."""
    verified(repo)
    repo.git("add", "-A")
    seen = repo.path.parent / "seen-in-the-editor"
    proc = git_run(repo, "commit", env={"GIT_EDITOR": f"cp .git/COMMIT_EDITMSG {seen} && true"})
    assert proc.returncode == 1 and "empty commit message" in proc.stderr  # still aborts
    assert "Checkpoint" not in seen.read_text()
    assert "git-checkpoint: this tree is main/cp_001's (git checkpoint evidence)" in proc.stderr
    assert repo.git("log", "-1", "--format=%s").strip() == "configure verifiers"
    proc = git_run(repo, "commit", "-q", env={"GIT_EDITOR": "echo 'written in the editor' >"})
    assert proc.returncode == 0 and message(repo) == "written in the editor\n"


def test_merge_and_squash_messages_get_none(repo: Repo) -> None:
    """The merge's result (and the squash's) is the tree a verified checkpoint holds:
    their messages are git's account of what they merge, and stay as git wrote them."""
    configure(repo, verifier("unit", "true"))
    repo.cp("hooks", "install", "--git", "--trailers")
    repo.git("checkout", "-q", "-b", "feature")
    repo.write("feature.txt", "feature\n")
    repo.commit_all("feature work")
    repo.git("checkout", "-q", "main")
    repo.write("main.txt", "main\n")
    repo.commit_all("main work")
    repo.write("feature.txt", "feature\n")  # the workspace as the merge will make it
    repo.cp("verify")
    repo.git("clean", "-q", "-f", "feature.txt")
    proc = git_run(repo, "merge", "-q", "--no-edit", "--no-ff", "feature")
    assert proc.returncode == 0, proc.stderr
    assert trailers(repo) == []
    assert "main/cp_001 promoted" in repo.cp("evidence").stdout  # the evidence is there
    repo.git("reset", "-q", "--hard", "HEAD~1")
    assert git_run(repo, "merge", "-q", "--squash", "feature").returncode == 0
    proc = git_run(repo, "commit", "-q", env={"GIT_EDITOR": "true"})
    assert proc.returncode == 0, proc.stderr
    assert trailers(repo) == [] and message(repo).startswith("Squashed commit of the following")


def test_a_failing_hook_never_blocks_a_commit(repo: Repo) -> None:
    verified(repo)
    blob = repo.git("hash-object", "-w", "--stdin", input=b"not a notes tree\n").strip()
    repo.git("update-ref", "refs/notes/checkpoints", blob)  # every note read now fails
    repo.git("add", "-A")
    proc = git_run(repo, "commit", "-q", "-m", "the verified work")
    assert proc.returncode == 0, proc.stderr
    (line,) = proc.stderr.splitlines()
    assert line.startswith("git-checkpoint: no trailers added: ")
    assert message(repo) == "the verified work\n"
    bare_path = {"PATH": "/usr/bin:/bin"}  # git-checkpoint-hook is not found there
    proc = git_run(repo, "commit", "-q", "--allow-empty", "-m", "no hook program", env=bare_path)
    assert proc.returncode == 0 and "git-checkpoint-hook is not on PATH" in proc.stderr


def test_without_trailers_the_hook_is_not_installed(repo: Repo) -> None:
    repo.cp("hooks", "install", "--git")
    assert not (repo.path / ".git" / "hooks" / "prepare-commit-msg").exists()
    assert "prepare-commit-msg" not in repo.cp("hooks", "status", "--git").stdout
    refused = repo.cp("hooks", "install", "--trailers", expect=2)
    assert "--trailers goes with --git" in refused.stderr


def test_the_hook_chains_and_uninstall_puts_back_what_was_there(repo: Repo) -> None:
    hooks = repo.path / ".git" / "hooks"
    hooks.mkdir()
    theirs = hooks / "prepare-commit-msg"
    marker = repo.path.parent / "theirs-ran"
    theirs.write_text(f'#!/bin/sh\necho "$2" > "{marker}"\n')
    theirs.chmod(0o755)
    before = (theirs.read_bytes(), theirs.stat().st_mode, theirs.stat().st_ino)
    verified(repo)
    status = repo.cp("hooks", "status", "--git").stdout
    assert "prepare-commit-msg installed (chained)" in status
    repo.git("add", "-A")
    assert git_run(repo, "commit", "-q", "-m", "work").returncode == 0
    assert marker.read_text() == "message\n" and trailers(repo)[0] == "Checkpoint: main/cp_001"
    repo.cp("hooks", "uninstall", "--git", "--trailers")  # the trailers hook alone
    assert (theirs.read_bytes(), theirs.stat().st_mode, theirs.stat().st_ino) == before
    assert (hooks / "pre-rebase").exists()
    repo.cp("hooks", "install", "--git", "--trailers")
    repo.cp("hooks", "uninstall", "--git")
    assert (theirs.read_bytes(), theirs.stat().st_mode, theirs.stat().st_ino) == before
    assert sorted(p.name for p in hooks.iterdir()) == ["prepare-commit-msg"]


def test_the_template_is_posix_shell() -> None:
    template = templates_dir() / "git" / "prepare-commit-msg"
    assert subprocess.run(["sh", "-n", str(template)], check=False).returncode == 0
    assert os.access(template, os.X_OK)


QUICK_LOOK = """
import sys
from git_checkpoint.fast.commitmsg import plan
found = plan(sys.argv[1], [".git/COMMIT_EDITMSG", "message"])
tool = sorted(m for m in sys.modules if m.split(".")[:2] in (
    ["git_checkpoint", "storage"], ["git_checkpoint", "verify"], ["git_checkpoint", "app"]))
print(found is not None, tool)
"""


def quick_look(repo: Repo) -> str:
    """Whether the hook's quick look sends a commit of the index to the full lookup, and
    what of the tool it loaded to decide (nothing, on every commit)."""
    proc = subprocess.run(
        [sys.executable, "-c", QUICK_LOOK, str(repo.path)],
        cwd=repo.path, capture_output=True, text=True, check=True,
    )  # fmt: skip
    return proc.stdout.strip()


def test_the_quick_look_loads_nothing_and_sends_on_only_what_may_match(repo: Repo) -> None:
    verified(repo)
    repo.git("add", "-A")
    assert quick_look(repo) == "True []"  # the verified tree
    repo.write("src/app.py", "print('unverified')\n")
    repo.git("add", "-A")
    assert quick_look(repo) == "True []"  # main/cp_001's managed tree is not known yet
    assert git_run(repo, "commit", "-q", "-m", "unverified").returncode == 0  # now it is
    repo.write("src/app.py", "print('unverified, again')\n")
    repo.git("add", "-A")
    assert quick_look(repo) == "False []"
    repo.cp("save", "-m", "a new checkpoint, not known yet")
    assert quick_look(repo) == "True []"
