"""An untracked file the last save hashed is not read or hashed again while its stat data
says it is unchanged (the quick state's, kept only when every file was older than that
save's scan by the racy margin): a save costs what changed. Whatever could make git hash
the same bytes otherwise (attributes, the configuration) or the stored blob go away (the
checkpoint gone) hashes every file again."""

from __future__ import annotations

import json
import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from ..conftest import Repo
from ..launcher import REAL_GIT, launch, wrapper_env
from .conftest import tree

UNTRACKED = ("notes/a.txt", "notes/b.txt", "data/c.bin")


def aged(seconds: float = 1.1) -> None:
    """Past the racy margin: a file written now is trusted by its stat data after this."""
    time.sleep(seconds)


def hashing_env(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """A `git` first on PATH that logs the paths every `update-index` is given."""
    log = tmp_path / "hashed.log"
    body = f'case "$*" in *update-index*) tee -a "{log}" | "{REAL_GIT}" "$@"; exit $? ;; esac'
    return wrapper_env(tmp_path, body), log


def hashed(log: Path) -> set[str]:
    paths = set(log.read_bytes().decode().split("\0")) - {""} if log.exists() else set()
    log.unlink(missing_ok=True)
    return paths


def overlay_of(repo: Repo, n: int) -> dict[str, tuple[str, str]]:
    return tree(repo, f"refs/checkpoints/main/cp_{n:03d}^3")


def git_hashes(repo: Repo, paths: list[str]) -> dict[str, str]:
    out = subprocess.run(
        ["git", "hash-object", "--", *paths], cwd=repo.path, capture_output=True, text=True
    ).stdout.split()
    return dict(zip(paths, out, strict=True))


def first_save(repo: Repo, tmp_path: Path) -> tuple[dict[str, str], Path]:
    for n, path in enumerate(UNTRACKED):
        repo.write(path, f"untracked {n}\n" * 50)
    aged()
    env, log = hashing_env(tmp_path)
    launch(repo, "save", "-m", "first", env=env)
    assert set(UNTRACKED) <= hashed(log)
    return env, log


def test_untracked_files_unchanged_since_the_last_save_are_not_hashed_again(
    repo: Repo, tmp_path: Path
) -> None:
    env, log = first_save(repo, tmp_path)
    repo.write("README.md", "changed\n")
    repo.write("notes/b.txt", "b changed\n")
    repo.write("notes/d.txt", "new\n")
    aged()
    launch(repo, "save", "-m", "second", env=env)
    assert hashed(log) == {"README.md", "notes/b.txt", "notes/d.txt"}
    files = [*UNTRACKED, "notes/d.txt"]
    assert {p: e[1] for p, e in overlay_of(repo, 2).items()} == git_hashes(repo, files)
    # And with nothing changed but one tracked file: none of the untracked ones.
    repo.write("README.md", "changed again\n")
    aged()
    launch(repo, "save", "-m", "third", env=env)
    assert hashed(log) == {"README.md"}
    assert overlay_of(repo, 3) == overlay_of(repo, 2)


def test_a_file_rewritten_with_its_old_size_and_date_is_hashed_again(
    repo: Repo, tmp_path: Path
) -> None:
    env, log = first_save(repo, tmp_path)
    path = repo.path / "notes/a.txt"
    st = path.stat()
    path.write_bytes(b"X" * st.st_size)  # same size, then the old date back
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    repo.write("README.md", "changed\n")
    aged()
    launch(repo, "save", "-m", "second", env=env)
    assert "notes/a.txt" in hashed(log)
    assert overlay_of(repo, 2)["notes/a.txt"][1] == git_hashes(repo, ["notes/a.txt"])["notes/a.txt"]


def test_a_file_written_in_the_racy_margin_is_hashed_by_the_next_save(
    repo: Repo, tmp_path: Path
) -> None:
    for n, path in enumerate(UNTRACKED):
        repo.write(path, f"untracked {n}\n")
    env, log = hashing_env(tmp_path)
    launch(repo, "save", "-m", "first", env=env)  # at once: its stat data vouches for nothing
    hashed(log)
    repo.write("README.md", "changed\n")
    aged()
    launch(repo, "save", "-m", "second", env=env)
    assert set(UNTRACKED) <= hashed(log)


def crlf_repo(
    repo: Repo, tmp_path: Path, path: str = "notes/crlf.txt"
) -> tuple[dict[str, str], Path]:
    repo.write(".gitattributes", "*.bin binary\n")
    repo.commit_all("attributes")
    repo.write(path, b"one\r\ntwo\r\n")
    aged()
    env, log = hashing_env(tmp_path)
    launch(repo, "save", "-m", "first", env=env)
    assert path in hashed(log)
    return env, log


def saved_as_git_hashes(repo: Repo, n: int, path: str = "notes/crlf.txt") -> None:
    assert overlay_of(repo, n)[path][1] == git_hashes(repo, [path])[path]


def test_an_edited_gitattributes_hashes_the_untracked_files_again(
    repo: Repo, tmp_path: Path
) -> None:
    env, log = crlf_repo(repo, tmp_path)
    repo.write(".gitattributes", "*.bin binary\n*.txt text\n")  # not staged
    aged()
    launch(repo, "save", "-m", "second", env=env)
    assert "notes/crlf.txt" in hashed(log)
    saved_as_git_hashes(repo, 2)
    assert overlay_of(repo, 2)["notes/crlf.txt"] != overlay_of(repo, 1)["notes/crlf.txt"]


def info_attributes(repo: Repo, tmp_path: Path) -> None:
    (repo.path / ".git/info").mkdir(exist_ok=True)
    (repo.path / ".git/info/attributes").write_text("*.txt text\n")


def autocrlf(repo: Repo, tmp_path: Path) -> None:
    repo.git("config", "core.autocrlf", "true")


def ignored_gitattributes(repo: Repo, tmp_path: Path) -> None:
    """A `.gitattributes` git ignores (info/exclude) still rules how the files beside it
    hash."""
    (repo.path / ".git/info").mkdir(exist_ok=True)
    with open(repo.path / ".git/info/exclude", "a") as fh:
        fh.write(".gitattributes\n")
    repo.write("notes/.gitattributes", "*.txt text\n")


def linked_info_attributes(repo: Repo, tmp_path: Path) -> None:
    target = tmp_path / "shared-attributes"
    target.write_text("*.bin binary\n")
    (repo.path / ".git/info").mkdir(exist_ok=True)
    os.symlink(target, repo.path / ".git/info/attributes")


def edited_behind_the_link(repo: Repo, tmp_path: Path) -> None:
    (tmp_path / "shared-attributes").write_text("*.txt text\n")


def nothing(repo: Repo, tmp_path: Path) -> None:
    pass


RuleChange = Callable[[Repo, Path], None]
RULE_CHANGES = {  # (before the first save, between the saves)
    "info-attributes": (nothing, info_attributes),
    "autocrlf": (nothing, autocrlf),
    "ignored-gitattributes": (nothing, ignored_gitattributes),
    "attributes-edited-behind-a-symlink": (linked_info_attributes, edited_behind_the_link),
}


@pytest.mark.parametrize("setup, change", RULE_CHANGES.values(), ids=RULE_CHANGES.keys())
def test_rules_changed_anywhere_git_reads_them_hash_the_untracked_files_again(
    repo: Repo, tmp_path: Path, setup: RuleChange, change: RuleChange
) -> None:
    setup(repo, tmp_path)
    env, log = crlf_repo(repo, tmp_path)
    change(repo, tmp_path)
    repo.write("README.md", "changed\n")
    aged()
    launch(repo, "save", "-m", "second", env=env)
    assert "notes/crlf.txt" in hashed(log)
    saved_as_git_hashes(repo, 2)


def test_blobs_of_a_checkpoint_gone_are_hashed_again(repo: Repo, tmp_path: Path) -> None:
    env, log = first_save(repo, tmp_path)
    repo.git("update-ref", "-d", "refs/checkpoints/main/cp_001")
    repo.git("reflog", "expire", "--expire=now", "--all")
    repo.git("gc", "-q", "--prune=now")
    repo.write("README.md", "changed\n")
    aged()
    launch(repo, "save", "-m", "second", env=env)
    assert set(UNTRACKED) <= hashed(log)
    repo.git("fsck", "--no-dangling")


def test_a_quick_state_naming_no_tree_is_a_normal_save(repo: Repo, tmp_path: Path) -> None:
    env, log = first_save(repo, tmp_path)
    state = repo.path / ".git/checkpoint/quick/state.json"
    data = json.loads(state.read_text())
    data["trees"]["overlay"] = "1" * 40
    state.write_text(json.dumps(data))
    repo.write("README.md", "changed\n")
    aged()
    launch(repo, "save", "-m", "second", env=env)
    assert set(UNTRACKED) <= hashed(log)
    assert {p: e[1] for p, e in overlay_of(repo, 2).items()} == git_hashes(repo, list(UNTRACKED))


def test_a_gitattributes_in_an_ignored_folder_above_an_included_one_hashes_it_again(
    repo: Repo, tmp_path: Path
) -> None:
    repo.write(".gitignore", "ign/\n")
    repo.write(".checkpoint.yaml", "untracked:\n  include: [ign/sub/]\n")
    env, log = crlf_repo(repo, tmp_path, "ign/sub/crlf.txt")
    repo.write("ign/.gitattributes", "*.txt text\n")  # ignored, not included: it rules
    repo.write("README.md", "changed\n")
    aged()
    launch(repo, "save", "-m", "second", env=env)
    assert "ign/sub/crlf.txt" in hashed(log)
    saved_as_git_hashes(repo, 2, "ign/sub/crlf.txt")


def test_a_gitattributes_touched_near_the_last_scan_vouches_for_nothing(
    repo: Repo, tmp_path: Path
) -> None:
    """Timestamps are coarse: a file of attributes written within the racy margin of the
    last save's scan could change again unseen by its stat data."""
    env, log = crlf_repo(repo, tmp_path)
    state = repo.path / ".git/checkpoint/quick/state.json"
    data = json.loads(state.read_text())
    rules = (repo.path / ".gitattributes").stat()
    data["stamp_ns"] = max(rules.st_mtime_ns, rules.st_ctime_ns) + 500_000_000
    state.write_text(json.dumps(data))
    repo.write("README.md", "changed\n")
    aged()
    launch(repo, "save", "-m", "second", env=env)
    assert "notes/crlf.txt" in hashed(log)


def test_a_relative_user_attributes_file_is_read_from_the_work_trees_top(
    repo: Repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """XDG_CONFIG_HOME=xdg: git reads xdg/git/attributes from the top, where it runs."""
    (repo.path / "xdg/git").mkdir(parents=True)
    (repo.path / "xdg/git/attributes").write_text("*.bin binary\n")
    (repo.path / ".git/info").mkdir(exist_ok=True)
    (repo.path / ".git/info/exclude").write_text("xdg/\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", "xdg")
    env, log = crlf_repo(repo, tmp_path)
    (repo.path / "xdg/git/attributes").write_text("*.txt text\n")
    repo.write("README.md", "changed\n")
    aged()
    launch(repo, "save", "-m", "second", env=env)
    assert "notes/crlf.txt" in hashed(log)
    saved_as_git_hashes(repo, 2)


def test_an_attributes_file_git_finds_under_its_prefix_is_never_vouched_for(
    repo: Repo, tmp_path: Path
) -> None:
    repo.git("config", "core.attributesFile", "%(prefix)/share/git-checkpoint-test/attributes")
    env, log = crlf_repo(repo, tmp_path)
    repo.write("README.md", "changed\n")
    aged()
    launch(repo, "save", "-m", "second", env=env)
    assert "notes/crlf.txt" in hashed(log)


def test_the_system_attributes_file_counts_unless_git_is_told_not_to_read_it(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    from git_checkpoint.fast import quickstate
    from git_checkpoint.gitcore.repo import Repo as GitRepo

    found = GitRepo.discover(repo.path)
    read = quickstate.rule_files(found, ["a/b.txt"], [])
    assert read is not None
    assert read["@system"] == quickstate.rule_stat(quickstate.SYSTEM_ATTRIBUTES)
    assert set(read) == {"@info", "@user", "@system", ".gitattributes", "a/.gitattributes"}
    monkeypatch.setenv("GIT_ATTR_NOSYSTEM", "1")
    unread = quickstate.rule_files(found, ["a/b.txt"], [])
    assert unread is not None and unread["@system"] is None
    if read["@system"] is not None:  # (a system file here: the two differ)
        assert unread != read


@pytest.mark.parametrize("key, value", [("changed", [5]), ("deleted", [None]), ("ref", 5)])
def test_a_quick_state_of_odd_types_is_a_normal_save(
    repo: Repo, tmp_path: Path, key: str, value: object
) -> None:
    env, _ = first_save(repo, tmp_path)
    state = repo.path / ".git/checkpoint/quick/state.json"
    data = json.loads(state.read_text())
    data[key] = value
    state.write_text(json.dumps(data))
    repo.write("README.md", "changed\n")
    aged()
    launch(repo, "save", "-m", "second", env=env)
    assert {p: e[1] for p, e in overlay_of(repo, 2).items()} == git_hashes(repo, list(UNTRACKED))
