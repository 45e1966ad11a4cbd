"""Saving repositories and workspaces out of the ordinary: an unborn or detached HEAD, a
subfolder, a linked worktree, a submodule, line-ending and filter rules, core.fileMode
off, sparse checkouts, a split index, a held index.lock, and the conflicts and special
files a save refuses with the way on."""

from __future__ import annotations

import subprocess
from pathlib import Path

from ..conftest import Repo, make_repo
from ..helpers import REF1, checkpoint_refs, one_line_error, state
from .conftest import blob, git_bytes, parents, save_json, tree


def test_unborn_head(empty_repo: Repo) -> None:
    r = empty_repo
    r.write("staged.txt", "staged\n")
    r.git("add", "staged.txt")
    r.write("staged.txt", "work\n")
    r.write("untracked.txt", "u\n")
    proc = r.cp("save", "-m", "first")
    assert proc.stdout.strip() == "checkpoint saved: cp_001"
    show = r.cp_json("show", "cp_001", "--manifest")
    assert show["manifest"]["base_commit"] is None
    assert show["base_commit"] is None
    assert show["manifest"]["branch"] == "main"
    ps = parents(r, REF1)
    assert len(ps) == 2, "W has parents I and U only"
    index_commit, overlay = ps
    assert parents(r, index_commit) == []
    assert parents(r, overlay) == []
    assert blob(r, index_commit, "staged.txt") == b"staged\n"
    assert blob(r, REF1, "staged.txt") == b"work\n"
    assert set(tree(r, overlay)) == {"untracked.txt"}
    # the other commands cope with the missing base
    assert r.cp("save").stdout.strip() == "unchanged since cp_001"
    listed = r.cp_json("list")
    assert [c["id"] for c in listed["checkpoints"]] == ["cp_001"]
    r.cp("show", "cp_001")
    r.cp("show", "cp_001", "--patch")
    r.cp("diff")


def test_unborn_head_without_overlay(empty_repo: Repo) -> None:
    r = empty_repo
    r.write("a.txt", "a\n")
    r.git("add", "a.txt")
    r.cp("save")
    ps = parents(r, REF1)
    assert len(ps) == 1
    assert set(tree(r, ps[0])) == {"a.txt"}
    assert r.cp_json("show", "@")["base_commit"] is None


def test_empty_unborn_repository(empty_repo: Repo) -> None:
    proc = empty_repo.cp("save")
    assert proc.stdout.strip() == "checkpoint saved: cp_001"
    assert tree(empty_repo, REF1) == {}


def test_detached_head_task(repo: Repo) -> None:
    repo.git("checkout", "-q", "--detach", "HEAD")
    repo.write("README.md", "detached\n")
    data = save_json(repo)
    assert data["task"] == "detached"
    assert data["ref"] == "refs/checkpoints/detached/cp_001"
    manifest = repo.cp_json("show", "@", "--manifest")["manifest"]
    assert manifest["branch"] is None


def test_save_from_subdirectory(repo: Repo) -> None:
    repo.write("src/app.py", "from a subdir\n")
    repo.write("top.txt", "untracked at top\n")
    save_json(repo, cwd=repo.path / "src")
    assert blob(repo, REF1, "src/app.py") == b"from a subdir\n"
    assert "top.txt" in tree(repo, f"{REF1}^3")


def test_linked_worktree(repo: Repo, tmp_path: Path) -> None:
    wt = tmp_path / "wt"
    repo.git("worktree", "add", "-q", "-b", "feature/login", str(wt))
    (wt / "src" / "app.py").write_text("in the worktree\n")
    (wt / "wt-new.txt").write_text("new\n")
    repo.write("src/app.py", "in the main work tree\n")
    data = save_json(repo, cwd=wt)
    assert data["task"] == "feature/login"
    assert data["ref"] == "refs/checkpoints/feature/login/cp_001"
    # visible from the main worktree
    assert checkpoint_refs(repo) == ["refs/checkpoints/feature/login/cp_001"]
    ref = data["ref"]
    assert blob(repo, ref, "src/app.py") == b"in the worktree\n"
    assert set(tree(repo, f"{ref}^3")) == {"wt-new.txt"}
    listed = repo.cp_json("list", "--task", "feature/login")
    assert [c["id"] for c in listed["checkpoints"]] == ["cp_001"]
    assert repo.cp_json("list")["checkpoints"] == [], "main's task has none"
    # the main work tree and its index were left alone
    assert (repo.path / "src" / "app.py").read_text() == "in the main work tree\n"
    assert repo.git("diff", "--cached", "--name-only") == ""
    # and the worktree's index too
    assert (
        subprocess.run(["git", "diff", "--cached", "--quiet"], cwd=wt, check=False).returncode == 0
    )


def test_submodule_recorded_as_gitlink(repo: Repo, tmp_path: Path) -> None:
    other = make_repo(tmp_path / "other")
    other.write("lib.txt", "v1\n")
    first = other.commit_all("v1")
    repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(other.path), "sub")
    repo.git("commit", "-q", "-m", "add submodule")
    sub = Repo(repo.path / "sub")
    sub.write("lib.txt", "v2\n")
    second = sub.commit_all("v2")
    sub.write("dirty.txt", "untracked inside the submodule\n")
    repo.cp("save")
    w, i = tree(repo, REF1), tree(repo, f"{REF1}^2")
    assert w["sub"] == ("160000", second)
    assert i["sub"] == ("160000", first)
    assert not any(p.startswith("sub/") for p in w)
    overlay = parents(repo, REF1)[2:]
    if overlay:
        assert not any(p.startswith("sub/") for p in tree(repo, overlay[0]))


def test_autocrlf_stores_lf(repo: Repo) -> None:
    repo.write("text.txt", "one\ntwo\n")
    repo.commit_all("text")
    repo.git("config", "core.autocrlf", "true")
    repo.write("text.txt", b"one\r\ntwo\r\nthree\r\n")
    repo.write("new.txt", b"alpha\r\nbeta\r\n")
    repo.cp("save")
    assert blob(repo, REF1, "text.txt") == b"one\ntwo\nthree\n"
    assert blob(repo, f"{REF1}^3", "new.txt") == b"alpha\nbeta\n"
    # exactly what git add would store
    expected = git_bytes(repo.path, "hash-object", "text.txt").strip().decode()
    assert tree(repo, REF1)["text.txt"][1] == expected


def test_gitattributes_eol_crlf_stores_lf(repo: Repo) -> None:
    repo.write(".gitattributes", "*.txt text eol=crlf\n")
    repo.commit_all("attrs")
    repo.write("w.txt", b"a\r\nb\r\n")
    repo.git("add", "w.txt")
    repo.write("w.txt", b"a\r\nb\r\nc\r\n")
    repo.cp("save")
    assert blob(repo, f"{REF1}^2", "w.txt") == b"a\nb\n"
    assert blob(repo, REF1, "w.txt") == b"a\nb\nc\n"


def test_clean_filter_applies_to_tracked_and_overlay(repo: Repo) -> None:
    repo.git("config", "filter.up.clean", "tr a-z A-Z")
    repo.git("config", "filter.up.smudge", "cat")
    repo.write(".gitattributes", "*.up filter=up\n")
    repo.write("t.up", "tracked\n")
    repo.commit_all("filter")
    repo.write("t.up", "tracked again\n")
    repo.write("u.up", "untracked\n")
    repo.cp("save")
    assert blob(repo, REF1, "t.up") == b"TRACKED AGAIN\n"
    assert blob(repo, f"{REF1}^3", "u.up") == b"UNTRACKED\n"


def test_tracked_files_under_excluded_folders_are_still_captured(repo: Repo) -> None:
    repo.write("node_modules/keep.js", "v1\n")
    repo.git("add", "-f", "node_modules/keep.js")
    repo.git("commit", "-q", "-m", "tracked vendored file")
    repo.write("node_modules/keep.js", "v2\n")
    repo.write("node_modules/new.js", "excluded\n")
    repo.cp("save")
    assert blob(repo, REF1, "node_modules/keep.js") == b"v2\n"
    assert "node_modules/new.js" not in tree(repo, REF1)
    assert len(parents(repo, REF1)) == 2


def test_core_filemode_false_keeps_index_mode(repo: Repo) -> None:
    repo.git("config", "core.fileMode", "false")
    (repo.path / "src" / "app.py").chmod(0o755)
    repo.write("src/app.py", "changed\n", mode=0o755)
    repo.cp("save")
    assert tree(repo, REF1)["src/app.py"][0] == "100644"
    assert blob(repo, REF1, "src/app.py") == b"changed\n"


def test_sparse_checkout_keeps_files_outside_the_cone(repo: Repo) -> None:
    repo.write("docs/guide.md", "guide\n")
    repo.commit_all("docs")
    repo.git("sparse-checkout", "set", "src")
    assert not (repo.path / "docs" / "guide.md").exists()
    repo.write("src/app.py", "edited\n")
    repo.cp("save")
    assert blob(repo, REF1, "docs/guide.md") == b"guide\n", "not-checked-out is not deleted"
    assert blob(repo, REF1, "src/app.py") == b"edited\n"


def test_unmerged_index_refused(repo: Repo) -> None:
    repo.git("checkout", "-q", "-b", "side")
    repo.write("README.md", "side\n")
    repo.commit_all("side")
    repo.git("checkout", "-q", "main")
    repo.write("README.md", "main\n")
    repo.commit_all("main")
    repo.git("merge", "-q", "side", check=False)
    proc = repo.cp("save", expect=3)
    assert "unmerged" in one_line_error(proc.stderr)
    assert checkpoint_refs(repo) == []


def test_save_while_index_lock_is_held(repo: Repo) -> None:
    lock = repo.path / ".git" / "index.lock"
    lock.write_bytes(b"")
    repo.write("README.md", "edited\n")
    repo.cp("save")
    assert lock.exists(), "someone else's index.lock is theirs"
    assert blob(repo, REF1, "README.md") == b"edited\n"


def test_split_index(repo: Repo) -> None:
    repo.git("config", "core.splitIndex", "true")
    repo.git("update-index", "--split-index")
    repo.write("src/app.py", "staged\n")
    repo.git("add", "src/app.py")
    repo.write("src/app.py", "work\n")
    repo.cp("save")
    assert blob(repo, f"{REF1}^2", "src/app.py") == b"staged\n"
    assert blob(repo, REF1, "src/app.py") == b"work\n"
    assert set(tree(repo, f"{REF1}^2")) == {".gitignore", "README.md", "src/app.py"}


def test_a_stash_pop_conflict_is_not_called_a_merge(repo: Repo) -> None:
    repo.write("src/app.py", "print('stashed')\n")
    repo.git("stash", "push", "-q")
    repo.write("src/app.py", "print('committed')\n")
    repo.commit_all("other")
    repo.git("stash", "pop", "-q", check=False)
    assert "UU src/app.py" in repo.git("status", "--porcelain")
    proc = repo.cp("save", expect=3)
    assert "stash pop" in proc.stderr and "then save" not in proc.stderr, proc.stderr


def test_a_tracked_file_become_a_fifo_is_named_not_gits_message(repo: Repo) -> None:
    import os
    import stat

    repo.cp("save", "-m", "before")
    (repo.path / "src/app.py").unlink()
    os.mkfifo(repo.path / "src/app.py")
    before = (repo.git("status", "--porcelain"), repo.git("ls-files", "-s"))
    for args in (["save"], ["restore", "cp_001", "--dry-run"]):
        proc = repo.cp(*args, expect=3)
        line = proc.stderr.strip()
        assert "\n" not in line and "'src/app.py'" in line and "FIFO" in line, line
        assert "update-index" not in line
    shown = repo.cp("status").stdout  # it only reads: it answers, and says why it cannot
    assert "drift since cp_001: unknown" in shown and "FIFO" in shown, shown
    # (state() would open the FIFO and wait for a writer)
    assert (repo.git("status", "--porcelain"), repo.git("ls-files", "-s")) == before
    assert stat.S_ISFIFO(os.lstat(repo.path / "src/app.py").st_mode)


def test_sparse_checkout_file_outside_the_cone_on_disk_is_captured(repo: Repo) -> None:
    repo.write("far/away.txt", "v1\n")
    repo.commit_all("far")
    repo.git("sparse-checkout", "set", "src")
    assert not (repo.path / "far" / "away.txt").exists()
    repo.cp("save", "-m", "sparse")
    # Put back by hand (git >= 2.37 then clears its skip-worktree bit) and edited.
    repo.write("far/away.txt", "MY EDIT OUTSIDE THE CONE\n")
    drift = repo.cp_json("status")["drift"]
    assert drift == ["far/away.txt"]
    assert "checkpoint saved: cp_002" in repo.cp("save", "-m", "edit").stdout
    assert repo.git("show", "refs/checkpoints/main/cp_002:far/away.txt") == (
        "MY EDIT OUTSIDE THE CONE\n"
    )
    edited = state(repo)
    repo.cp("restore", "cp_001")
    assert (repo.path / "far" / "away.txt").read_text() != "MY EDIT OUTSIDE THE CONE\n"
    repo.cp("undo")
    assert (repo.path / "far" / "away.txt").read_text() == "MY EDIT OUTSIDE THE CONE\n"
    assert state(repo)[0] == edited[0]
