"""The quick check after a settled save and one more change (an edit, a revert, a mode,
a link, a submodule, the index): it never says "unchanged", and the auto-save built on
the kept real index records the workspace as `git add -u` would."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from git_checkpoint.fast import quickcheck, quickstate

from ..conftest import Repo, make_repo
from ..tree_oracle import reference_tree

SETTLE = quickstate.RACY_NS / 1e9 + 0.05


def auto(repo: Repo) -> str | None:
    code = "from git_checkpoint.entry.hook import auto_save; print(auto_save('.', 'auto'))"
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=repo.path, capture_output=True, text=True, check=False
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.strip()
    return None if out == "None" else out


def settled_save(repo: Repo) -> None:
    time.sleep(SETTLE)
    repo.cp("save", "-m", "base")


def quick(repo: Repo) -> bool:
    return quickcheck.quick_unchanged(str(repo.path))


def latest_w(repo: Repo) -> str:
    name = repo.cp_json("list")["checkpoints"][-1]["name"]
    return repo.git("rev-parse", f"refs/checkpoints/{name}^{{tree}}").strip()


def assert_latest_is_workspace(repo: Repo) -> None:
    assert latest_w(repo) == reference_tree(repo)


def test_quick_submodule_moves_again(base: Repo, tmp_path: Path) -> None:
    sub = make_repo(tmp_path / "sub")
    sub.write("s.txt", "1\n")
    sub.commit_all("one")
    base.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub.path), "m1")
    base.commit_all("sub")
    inner = Repo(base.path / "m1")
    inner.write("s.txt", "2\n")
    inner.commit_all("two")  # m1 differs from the index at the save
    time.sleep(SETTLE)
    base.cp("save", "-m", "two")
    # No stat data vouches for a submodule's commit: nothing kept, never "unchanged".
    inner.write("s.txt", "3\n")
    inner.commit_all("three")
    assert not quick(base)


def test_quick_changed_file_edited_again(base: Repo) -> None:
    base.write("a/f.txt", "first edit\n")
    settled_save(base)
    assert quick(base)
    base.write("a/f.txt", "second edi\n")  # same size
    assert not quick(base)
    assert auto(base) is not None
    assert_latest_is_workspace(base)


def test_quick_changed_file_reverted(base: Repo) -> None:
    base.write("a/f.txt", "first edit\n")
    settled_save(base)
    assert quick(base)
    base.write("a/f.txt", "a\n")
    assert not quick(base)
    assert auto(base) is not None
    assert_latest_is_workspace(base)


def test_quick_deleted_then_recreated(base: Repo) -> None:
    (base.path / "a/f.txt").unlink()
    settled_save(base)
    assert quick(base)
    base.write("a/f.txt", "back but different\n")
    assert not quick(base)
    assert auto(base) is not None
    assert_latest_is_workspace(base)


def test_quick_exec_bit_flip_on_changed_file(base: Repo) -> None:
    base.write("a/f.txt", "edit\n")
    settled_save(base)
    (base.path / "a/f.txt").chmod(0o755)
    assert not quick(base)
    assert auto(base) is not None
    assert_latest_is_workspace(base)


def test_quick_changed_symlink_retargeted(base: Repo) -> None:
    os.symlink("a.txt", base.path / "ln")
    base.commit_all("ln")
    (base.path / "ln").unlink()
    os.symlink("run.sh", base.path / "ln")
    settled_save(base)
    assert quick(base)
    (base.path / "ln").unlink()
    os.symlink("a0/f.txt", base.path / "ln")
    assert not quick(base)
    assert auto(base) is not None
    assert_latest_is_workspace(base)


def test_quick_file_beyond_a_symlinked_folder(base: Repo, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text("outside\n")
    shutil.rmtree(base.path / "a/b")
    os.symlink(outside, base.path / "a/b")
    settled_save(base)
    assert quick(base)
    (outside / "f.txt").write_text("outside edited\n")
    # W never holds a/b/f.txt (beyond a link): a save is harmless, "unchanged" is true
    if auto(base) is not None:
        assert_latest_is_workspace(base)


def test_quick_index_replaced_by_reset(base: Repo) -> None:
    base.write("a/f.txt", "edit\n")
    base.git("add", "a/f.txt")
    settled_save(base)
    assert quick(base)
    base.git("reset", "-q")
    assert not quick(base)
    assert auto(base) is not None


def test_quick_intent_to_add_file_edited(base: Repo) -> None:
    base.write("new/x.txt", "x\n")
    base.git("add", "-N", "new/x.txt")
    settled_save(base)
    assert quick(base)
    base.write("new/x.txt", "y\n")
    assert not quick(base)
    assert auto(base) is not None
    assert_latest_is_workspace(base)


def test_quick_clean_file_edited_in_the_second_of_the_save(base: Repo) -> None:
    base.git("config", "core.trustCtime", "false")
    base.write("a/f.txt", "edit\n")
    time.sleep(SETTLE)
    path = base.path / "a.txt"
    base.cp("save", "-m", "s")
    path.write_text("b\n")  # same size as "a\n", just after the scan
    assert not quick(base)
    assert auto(base) is not None
    assert_latest_is_workspace(base)


def test_quick_auto_save_then_edit_again(base: Repo) -> None:
    base.write("a/f.txt", "edit 1\n")
    settled_save(base)
    base.write("a/f.txt", "edit 2\n")
    base.write("a0/f.txt", "edit 3\n")
    time.sleep(SETTLE)
    assert auto(base) is not None
    assert_latest_is_workspace(base)
    assert quick(base)
    base.write("a0/f.txt", "edit 4\n")
    assert not quick(base)
    assert auto(base) is not None
    assert_latest_is_workspace(base)


def test_quick_many_changed(base: Repo) -> None:
    for n in range(250):
        base.write(f"m/f{n}.txt", f"{n}\n")
    base.commit_all("many")
    for n in range(250):
        base.write(f"m/f{n}.txt", f"{n} edit\n")
    settled_save(base)
    assert quick(base)
    base.write("m/f7.txt", "7 EDIT\n")
    assert not quick(base)
    assert auto(base) is not None
    assert_latest_is_workspace(base)
