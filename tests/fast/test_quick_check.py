"""The quick check (fast/quickcheck): it may answer "unchanged" only when a full save
would have found the workspace equal to the task's latest checkpoint. Every case here
changes one thing the checkpoint depends on and checks that the quick answer is no longer
"unchanged" and that the auto-save then captures the change."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from ..conftest import Repo
from .conftest import auto, latest_file, quick, settled_save


def test_unchanged_is_quick_and_saves_nothing(saved: Repo) -> None:
    before = saved.git("for-each-ref", "refs/checkpoints/")
    assert auto(saved) is None
    assert saved.git("for-each-ref", "refs/checkpoints/") == before


def test_tracked_edit(saved: Repo) -> None:
    saved.write("src/app.py", "print('edited again')\n")
    assert not quick(saved.path)
    assert auto(saved) is not None
    assert quick(saved.path) or True  # a fresh edit may be too recent to vouch for


def test_racy_same_size_edit_in_the_same_second(repo: Repo) -> None:
    """The classic racy-git case: an edit of the same size, with the same mtime, in the
    same second as the save's scan. With core.trustCtime off, stat data alone cannot see
    it: only the kept index's own (early) mtime makes git look at the content."""
    repo.git("config", "core.trustCtime", "false")
    path = repo.path / "src/app.py"
    for attempt in range(5):
        time.sleep(1 - time.time() % 1 + 0.01)  # a fresh second: the save may fit in it
        repo.write("src/app.py", f"print('AAA{attempt}')\n")
        repo.cp("save", "-m", "racy")
        st = os.stat(path)
        state = repo.path / ".git/checkpoint/quick/state.json"
        if not state.exists():
            break  # the save saw the edit was too fresh to vouch for: nothing kept
        stamp = json.loads(state.read_text())["stamp_ns"]
        if stamp // 10**9 == st.st_mtime_ns // 10**9:
            break  # the scan ran in the second of the edit: the racy case
    else:
        pytest.skip("the machine is too slow to scan within the second of the edit")
    path.write_text("print('BBBB')\n")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert not quick(repo.path)
    assert auto(repo) is not None
    assert latest_file(repo, "src/app.py") == b"print('BBBB')\n"


def test_same_size_edit_with_old_mtime_later(saved: Repo) -> None:
    path = saved.path / "src/app.py"
    st = os.stat(path)
    path.write_text("print('EDITED')\n")  # same length as before
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert not quick(saved.path)  # ctime moved: git's stat check sees it


def test_new_untracked_file(saved: Repo) -> None:
    saved.write("notes/more.txt", "x\n")
    assert not quick(saved.path)
    assert auto(saved) is not None


def test_untracked_file_edited(saved: Repo) -> None:
    path = saved.path / "notes/todo.txt"
    st = os.stat(path)
    path.write_text("UNTRACKED WORK\n")  # same size, same mtime
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert not quick(saved.path)
    assert auto(saved) is not None
    assert latest_file(saved, "notes/todo.txt") == b"UNTRACKED WORK\n"


def test_untracked_file_deleted(saved: Repo) -> None:
    (saved.path / "notes/todo.txt").unlink()
    assert not quick(saved.path)


def test_tracked_file_deleted(saved: Repo) -> None:
    (saved.path / "README.md").unlink()
    assert not quick(saved.path)


def test_checkpoint_yaml_change(saved: Repo) -> None:
    saved.write(".checkpoint.yaml", "untracked:\n  exclude: [notes/]\n")
    assert not quick(saved.path)


def test_git_config_change(saved: Repo) -> None:
    saved.git("config", "checkpoint.overlayMaxFiles", "3")
    assert not quick(saved.path)


def test_ignore_rules_change(saved: Repo) -> None:
    saved.write(".git/info/exclude", "notes/\n")
    assert not quick(saved.path)


def test_head_moves(saved: Repo) -> None:
    saved.git("commit", "-q", "--allow-empty", "-m", "empty")
    assert not quick(saved.path)


def test_branch_switch(saved: Repo) -> None:
    saved.git("branch", "other")
    saved.git("symbolic-ref", "HEAD", "refs/heads/other")  # same commit, another task
    assert not quick(saved.path)
    assert auto(saved) is not None  # the first checkpoint of task "other"


def test_index_change(saved: Repo) -> None:
    saved.git("add", "src/app.py")  # same work tree, different index: a different I
    assert not quick(saved.path)
    assert auto(saved) is not None


def test_checkpoint_dropped(saved: Repo) -> None:
    saved.cp("drop", "cp_001")
    assert not quick(saved.path)
    assert auto(saved) is not None


def test_another_latest_checkpoint(saved: Repo) -> None:
    saved.write("src/app.py", "print('other')\n")
    saved.cp("save", "-m", "newer")  # a newer latest: state follows it
    saved.write("src/app.py", "print('edited')\n")  # back to cp_001's content
    assert not quick(saved.path)
    assert auto(saved) is not None  # differs from the latest (cp_002), so it saves


def test_other_task_from_the_environment(saved: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CHECKPOINT_TASK", "elsewhere")
    assert not quick(saved.path)


def test_pending_restore_journal(saved: Repo) -> None:
    journal = saved.path / ".git" / "checkpoint" / "restore-journal.json"
    journal.write_text("{}")
    assert not quick(saved.path)


def test_tampered_state_falls_back(saved: Repo) -> None:
    state = saved.path / ".git" / "checkpoint" / "quick" / "state.json"
    state.write_text("not json")
    assert not quick(saved.path)
    assert auto(saved) is None  # the full save deduplicates
    state.unlink()
    assert not quick(saved.path)


def test_saved_index_replaced(saved: Repo) -> None:
    folder = saved.path / ".git" / "checkpoint" / "quick"
    data = json.loads((folder / "state.json").read_text())
    (folder / data["saved_index"]).write_bytes(b"")
    assert not quick(saved.path)


def test_included_ignored_folder(repo: Repo) -> None:
    repo.write(".checkpoint.yaml", "untracked:\n  include: [fixtures/]\n")
    repo.write(".gitignore", "*.log\nnode_modules/\nfixtures/\n")
    repo.write("fixtures/a.txt", "a\n")
    settled_save(repo)
    assert quick(repo.path)
    repo.write("fixtures/b.txt", "b\n")  # ignored, but included: a change
    assert not quick(repo.path)
    assert auto(repo) is not None
    settled_save(repo)
    path = repo.path / "fixtures/a.txt"
    st = os.stat(path)
    path.write_text("A\n")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert not quick(repo.path)


def test_fresh_untracked_files_are_not_vouched_for(repo: Repo) -> None:
    """An untracked file written within the racy window of the save's scan: its stat
    data cannot prove a later same-size edit absent, so the quick path stays off."""
    repo.write("new.txt", "1\n")
    repo.cp("save", "-m", "fresh")
    path = repo.path / "new.txt"
    st = os.stat(path)
    path.write_text("2\n")
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert not quick(repo.path)
    assert auto(repo) is not None


def test_linked_worktrees_keep_their_own_state(saved: Repo, tmp_path: Path) -> None:
    other = tmp_path / "linked"
    saved.git("worktree", "add", "-q", "-b", "side", str(other))
    assert not quick(other)  # nothing saved there yet
    settled_save(saved, cwd=other)
    assert quick(other)
    assert quick(saved.path)  # the first worktree's state is its own
    (other / "README.md").write_text("changed in the linked worktree\n")
    assert not quick(other)
    assert quick(saved.path)


def test_git_dir_from_the_environment_is_never_quick(
    saved: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_DIR", str(saved.path / ".git"))
    assert not quick(saved.path)


def test_subfolder_cwd(saved: Repo) -> None:
    assert quick(saved.path / "src")
    assert auto(saved, cwd=saved.path / "src") is None


def test_a_checkpoint_ref_git_writes_again_is_a_change(saved: Repo) -> None:
    """git writes a ref to a lock file and renames it into place: the task's ref folder
    is read by name and inode, no ref file opened but the latest's."""
    saved.write("src/app.py", "print('other')\n")
    saved.cp("save", "-m", "newer")
    saved.write("src/app.py", "print('other again')\n")
    settled_save(saved)  # cp_003, the latest: the quick state vouches for it
    assert quick(saved.path)
    head = saved.git("rev-parse", "HEAD").strip()
    saved.git("update-ref", "refs/checkpoints/main/cp_001", head)  # an older one, rewritten
    assert not quick(saved.path)


def test_a_checkpoint_ref_git_adds_is_a_change(saved: Repo) -> None:
    head = saved.git("rev-parse", "HEAD").strip()
    saved.git("update-ref", "refs/checkpoints/main/cp_900", head)
    assert not quick(saved.path)


def test_packed_checkpoint_refs_are_a_change(saved: Repo) -> None:
    saved.git("pack-refs", "--all")
    assert not quick(saved.path)


def test_the_latest_ref_deleted_and_made_again_elsewhere_is_a_change(saved: Repo) -> None:
    """The file system may give the new ref file its old inode: its content decides."""
    ref = "refs/checkpoints/main/cp_001"
    head = saved.git("rev-parse", "HEAD").strip()
    saved.git("update-ref", "-d", ref)
    saved.git("update-ref", ref, head)
    assert not quick(saved.path)


def test_a_ref_above_the_latest_that_comes_to_name_a_checkpoint_is_a_change(saved: Repo) -> None:
    """A ref numbered above the latest checkpoint that names none (a save passes it by)
    becomes `@` once it names one: its content counts, whatever its inode (a file
    written in place keeps it, as a ref deleted and made again may)."""
    head = saved.git("rev-parse", "HEAD").strip()
    saved.git("update-ref", "refs/checkpoints/main/cp_005", head)  # no checkpoint
    saved.write("src/app.py", "print('third')\n")
    settled_save(saved)
    assert quick(saved.path)
    first = saved.git("rev-parse", "refs/checkpoints/main/cp_001").strip()
    ref = saved.path / ".git/refs/checkpoints/main/cp_005"
    inode = ref.stat().st_ino
    with ref.open("r+") as fh:  # in place: the same inode
        fh.write(first + "\n")
    assert ref.stat().st_ino == inode
    assert not quick(saved.path)
    assert auto(saved) is not None
