"""`git checkpoint evidence [COMMIT]` finds the verifier evidence of the checkpoints that
hold a commit's tree: by its tracked files, or by its tracked files and its untracked
ones together, whatever the commit's history. So the evidence survives a rebase onto a
base with the same tree and a squash, and comes with a fetched checkpoint to a clone."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from git_checkpoint.fast import treecache
from git_checkpoint.gitcore.repo import Repo as GitRepo
from git_checkpoint.storage.commits import managed_tree
from git_checkpoint.storage.refs import load_checkpoints
from git_checkpoint.verify.evidence import managed_trees

from ..conftest import Repo, make_repo
from ..helpers import configure, verifier


def verified_work(repo: Repo) -> None:
    """A checkpoint of an edit and a new untracked file, verified: unit passes."""
    configure(repo, verifier("unit", "test -f src/app.py"))
    repo.write("src/app.py", "print('verified')\n")
    repo.write("src/new_module.py", "VALUE = 1\n")
    repo.cp("verify")


def test_a_commit_of_a_verified_checkpoint_shows_its_evidence(repo: Repo) -> None:
    verified_work(repo)
    repo.commit_all("the verified work")
    out = repo.cp("evidence").stdout
    assert "main/cp_001 promoted: the commit has all of its files" in out
    assert "verifier: unit" in out and "passed" in out
    data = repo.cp_json("evidence", "HEAD")
    head = repo.git("rev-parse", "HEAD").strip()
    assert data["commit"] == head and data["exit_code"] == 0
    (found,) = data["checkpoints"]
    assert (found["checkpoint"], found["status"], found["remote"]) == (
        "main/cp_001",
        "promoted",
        None,
    )
    assert [(v["name"], v["status"]) for v in found["verifiers"]] == [("unit", "passed")]


def test_a_commit_of_the_tracked_files_alone_says_so(repo: Repo) -> None:
    verified_work(repo)
    repo.git("commit", "-q", "-am", "tracked files only")  # the new module left out
    out = repo.cp("evidence").stdout
    assert "main/cp_001 promoted: the commit has its tracked files, not its untracked ones" in out


def test_the_evidence_survives_a_rebase_onto_a_base_with_the_same_tree(repo: Repo) -> None:
    verified_work(repo)
    repo.git("checkout", "-q", "-b", "feature")
    repo.commit_all("the verified work")
    base = repo.git("rev-parse", "HEAD~1").strip()
    repo.git("checkout", "-q", "-b", "reworded", base)
    repo.git("commit", "-q", "--amend", "-m", "the base, reworded")  # same tree, new commit
    repo.git("checkout", "-q", "feature")
    before = repo.git("rev-parse", "HEAD").strip()
    repo.git("rebase", "-q", "reworded")
    assert repo.git("rev-parse", "HEAD").strip() != before
    assert repo.git("rev-parse", "HEAD~1").strip() != base
    assert "main/cp_001 promoted" in repo.cp("evidence").stdout


def test_the_evidence_survives_a_squash(repo: Repo) -> None:
    verified_work(repo)
    repo.git("add", "src/new_module.py")
    repo.git("commit", "-q", "-m", "first half")
    repo.git("commit", "-q", "-am", "fixup! first half")
    repo.cp("evidence", "HEAD~1", expect=1)  # the first half alone: no evidence
    proc = subprocess.run(
        ["git", "rebase", "-q", "-i", "--autosquash", "HEAD~2"],
        cwd=repo.path, env={**os.environ, "GIT_SEQUENCE_EDITOR": "true"},
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert repo.git("log", "-1", "--format=%s").strip() == "first half"
    assert "main/cp_001 promoted" in repo.cp("evidence").stdout


def test_a_commit_whose_tree_no_checkpoint_holds_says_so_and_exits_1(repo: Repo) -> None:
    verified_work(repo)
    repo.write("src/app.py", "print('changed after the checkpoint')\n")
    repo.commit_all("unverified")
    proc = repo.cp("evidence", expect=1)
    (line,) = proc.stdout.splitlines()
    assert line.startswith("no evidence for ") and "no checkpoint holds its tree" in line
    assert repo.cp_json("evidence", expect=1)["checkpoints"] == []


def test_a_checkpoint_never_verified_is_no_evidence(repo: Repo) -> None:
    repo.write("src/app.py", "print('saved, not verified')\n")
    repo.cp("save", "-m", "unverified")
    repo.commit_all("from the checkpoint")
    (line,) = repo.cp("evidence", expect=1).stdout.splitlines()
    assert "main/cp_001's, never verified" in line


def test_a_bad_commit_name_exits_2(repo: Repo) -> None:
    proc = repo.cp("evidence", "no-such-commit", expect=2)
    assert "not a commit" in proc.stderr
    tree = repo.git("rev-parse", "HEAD^{tree}").strip()
    repo.cp("evidence", tree, expect=2)  # a tree is no commit


def test_evidence_from_a_fetched_checkpoint(repo: Repo, tmp_path: Path) -> None:
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    repo.git("remote", "add", "origin", f"file://{remote}")
    verified_work(repo)
    repo.git("push", "-q", "origin", "main")
    repo.cp("push")
    clone = make_repo(tmp_path / "clone")
    clone.git("remote", "add", "origin", f"file://{remote}")
    clone.git("fetch", "-q", "origin")
    clone.git("checkout", "-q", "-b", "main", "origin/main")
    clone.cp("fetch")
    clone.write("src/app.py", "print('verified')\n")
    clone.write("src/new_module.py", "VALUE = 1\n")
    clone.commit_all("the same work, made on another machine")
    out = clone.cp("evidence").stdout
    assert "origin/main/cp_001 promoted, fetched from origin" in out
    (found,) = clone.cp_json("evidence")["checkpoints"]
    assert found["remote"] == "origin" and found["verifiers"][0]["status"] == "passed"


def test_managed_trees_are_the_trees_git_writes_and_are_kept(repo: Repo) -> None:
    """Overlays beside tracked folders, inside them and in new nested folders: each
    checkpoint's managed tree, computed without git, is the one git writes; and it is
    kept, so the next lookup computes nothing."""
    layouts = [
        {"untracked.txt": "top\n"},
        {"src/beside_app.py": "x = 1\n"},
        {"new/deep/er/file.txt": "deep\n", "src/pkg/mod.py": "y = 2\n", "src/z.py": "z\n"},
        {"src.txt": "sorts before the folder src/ in a tree\n", "README.md.d/note": "x\n"},
    ]
    for n, files in enumerate(layouts):
        for path, text in files.items():
            repo.write(path, text)
        repo.write("src/app.py", f"print({n})\n")
        repo.cp("save", "-m", f"layout {n}")
    git_repo = GitRepo.discover(repo.path)
    checkpoints = load_checkpoints(git_repo)
    computed = managed_trees(git_repo, checkpoints)
    assert len(checkpoints) == len(layouts)
    for cp in checkpoints:
        assert computed[cp.commit] == managed_tree(git_repo, cp), cp.name
    assert treecache.read(git_repo.common_dir) == {
        cp.commit: computed[cp.commit] for cp in checkpoints
    }
    kept = git_repo.common_dir / "checkpoint" / treecache.FILE
    kept.write_text("".join(f"{cp.commit} {treecache.NO_TREE}\n" for cp in checkpoints))
    assert set(managed_trees(git_repo, checkpoints).values()) == {treecache.NO_TREE}
