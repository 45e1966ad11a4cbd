"""What `git checkpoint save` writes: a stash-shaped commit (W on base, I and U as its
parents) holding every kind of tracked file, staged and unstaged apart, and a ref with a
reflog that survives `git gc`."""

from __future__ import annotations

import os

from ..conftest import Repo
from ..helpers import REF1, checkpoint_refs
from .conftest import assert_fsck_clean, blob, parents, tree


def test_save_writes_stash_shaped_commit(repo: Repo) -> None:
    base = repo.git("rev-parse", "HEAD").strip()
    repo.write("src/app.py", "print('changed')\n")
    proc = repo.cp("save", "-m", "first try")
    assert proc.stdout.strip() == "checkpoint saved: cp_001"
    assert checkpoint_refs(repo) == [REF1]
    ps = parents(repo, REF1)
    assert len(ps) == 2, "no untracked files: W has exactly B and I"
    assert ps[0] == base
    assert parents(repo, ps[1]) == [base], "I has parent B"
    msg = repo.git("log", "-1", "--format=%B", REF1)
    assert msg.splitlines()[0] == "checkpoint cp_001 on main: first try"
    assert msg.splitlines()[1] == ""
    assert blob(repo, REF1, "src/app.py") == b"print('changed')\n"
    # git diff B W is the reviewable change
    assert repo.git("diff", "--name-only", base, REF1).split() == ["src/app.py"]


def test_multiline_message_is_one_summary_line(repo: Repo) -> None:
    repo.write("README.md", "x\n")
    repo.cp("save", "-m", "line one\nline two")
    first = repo.git("log", "-1", "--format=%s", REF1).strip()
    assert first == "checkpoint cp_001 on main: line one line two"


def test_tracked_file_kinds(repo: Repo) -> None:
    binary = bytes(range(256)) * 4 + b"\0\r\n\xff"
    uni = "données/résumé ü 日本.txt"
    deep = "a/b/c/d/e/f/g/h/i/j/deep.txt"
    repo.write("bin.dat", binary)
    repo.write("empty.txt", b"")
    repo.write("run.sh", "#!/bin/sh\necho hi\n", mode=0o755)
    os.symlink("src/app.py", repo.path / "link")
    repo.write(uni, "unicode\n")
    repo.write(deep, "deep\n")
    repo.git("add", "-A")
    # then change each of them in the work tree only
    repo.write("bin.dat", binary[::-1])
    repo.write("empty.txt", b"")
    (repo.path / "README.md").chmod(0o755)
    (repo.path / "link").unlink()
    os.symlink("README.md", repo.path / "link")
    repo.write(uni, "unicode 2\n")
    repo.write(deep, "deeper\n")
    repo.cp("save")

    w = tree(repo, REF1)
    i = tree(repo, f"{REF1}^2")
    assert blob(repo, REF1, "bin.dat") == binary[::-1]
    assert blob(repo, f"{REF1}^2", "bin.dat") == binary
    assert blob(repo, REF1, "empty.txt") == b""
    assert w["run.sh"][0] == "100755"
    assert w["README.md"][0] == "100755", "a chmod +x in the work tree is captured"
    assert i["README.md"][0] == "100644"
    assert w["link"][0] == "120000"
    assert blob(repo, REF1, "link") == b"README.md"
    assert blob(repo, f"{REF1}^2", "link") == b"src/app.py"
    assert blob(repo, REF1, uni) == b"unicode 2\n"
    assert blob(repo, REF1, deep) == b"deeper\n"
    assert blob(repo, f"{REF1}^2", deep) == b"deep\n"


def test_deleted_tracked_files(repo: Repo) -> None:
    repo.write("gone.txt", "bye\n")
    repo.write("staged-gone.txt", "bye\n")
    repo.commit_all("more")
    (repo.path / "gone.txt").unlink()  # unstaged deletion
    repo.git("rm", "-q", "staged-gone.txt")  # staged deletion
    repo.cp("save")
    w, i = tree(repo, REF1), tree(repo, f"{REF1}^2")
    assert "gone.txt" not in w
    assert "gone.txt" in i
    assert "staged-gone.txt" not in w
    assert "staged-gone.txt" not in i


def test_staged_and_unstaged_come_apart(repo: Repo) -> None:
    repo.write("src/app.py", "staged\n")
    repo.write("new.py", "new staged\n")
    repo.git("add", "src/app.py", "new.py")
    repo.write("src/app.py", "unstaged\n")
    repo.write("new.py", "new unstaged\n")
    repo.cp("save")
    assert blob(repo, f"{REF1}^2", "src/app.py") == b"staged\n"
    assert blob(repo, REF1, "src/app.py") == b"unstaged\n"
    assert blob(repo, f"{REF1}^2", "new.py") == b"new staged\n"
    assert blob(repo, REF1, "new.py") == b"new unstaged\n"
    assert len(parents(repo, REF1)) == 2, "staged new files are tracked, not overlay"


def test_intent_to_add_file_is_captured(repo: Repo) -> None:
    repo.write("ita.py", "agent wrote this\n")
    repo.git("add", "-N", "ita.py")
    repo.cp("save")
    assert blob(repo, REF1, "ita.py") == b"agent wrote this\n"


def test_force_added_ignored_file_is_tracked_and_captured(repo: Repo) -> None:
    repo.write("keep.log", "tracked although ignored\n")
    repo.git("add", "-f", "keep.log")
    repo.write("keep.log", "changed\n")
    repo.cp("save")
    assert blob(repo, REF1, "keep.log") == b"changed\n"


def test_awkward_message_round_trips(repo: Repo) -> None:
    message = "fix: a # b --- 'q' \"d\" ü {x: [1]} *"
    repo.cp("save", "-m", message)
    row = repo.cp_json("list")["checkpoints"][0]
    assert row["message"] == message
    m = repo.cp_json("show", "@", "--manifest")["manifest"]
    assert m["notes"] == [message]
    assert m["checkpoint_id"] == "cp_001"


def test_ref_has_reflog(repo: Repo) -> None:
    repo.cp("save")
    log = repo.git("reflog", "show", "--format=%H %gs", REF1).strip().splitlines()
    assert len(log) == 1
    oid, _, reason = log[0].partition(" ")
    assert oid == repo.git("rev-parse", REF1).strip()
    assert "cp_001" in reason


def test_checkpoints_survive_gc(repo: Repo) -> None:
    repo.write("src/app.py", "work\n")
    repo.write("u.txt", "u\n")
    repo.cp("save")
    repo.git("gc", "-q", "--prune=now")
    assert blob(repo, f"{REF1}^3", "u.txt") == b"u\n"
    assert blob(repo, REF1, "src/app.py") == b"work\n"
    assert_fsck_clean(repo)
