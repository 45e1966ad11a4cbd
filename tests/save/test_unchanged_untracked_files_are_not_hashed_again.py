"""An untracked file the last save hashed is not read or hashed again while its stat data
says it is unchanged (the quick state's, kept only when every file was older than that
save's scan by the racy margin): a save costs what changed. Whatever could make git hash
the same bytes otherwise (attributes, the configuration) or the stored blob go away (the
checkpoint gone) hashes every file again."""

from __future__ import annotations

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


def crlf_repo(repo: Repo, tmp_path: Path) -> tuple[dict[str, str], Path]:
    repo.write(".gitattributes", "*.bin binary\n")
    repo.commit_all("attributes")
    repo.write("notes/crlf.txt", b"one\r\ntwo\r\n")
    aged()
    env, log = hashing_env(tmp_path)
    launch(repo, "save", "-m", "first", env=env)
    assert "notes/crlf.txt" in hashed(log)
    return env, log


def saved_as_git_hashes(repo: Repo, n: int) -> None:
    assert (
        overlay_of(repo, n)["notes/crlf.txt"][1]
        == git_hashes(repo, ["notes/crlf.txt"])["notes/crlf.txt"]
    )


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


def attributes_file(repo: Repo) -> None:
    (repo.path / ".git/info").mkdir(exist_ok=True)
    (repo.path / ".git/info/attributes").write_text("*.txt text\n")


def autocrlf(repo: Repo) -> None:
    repo.git("config", "core.autocrlf", "true")


@pytest.mark.parametrize("change", [attributes_file, autocrlf], ids=["info-attributes", "autocrlf"])
def test_rules_changed_outside_the_work_tree_hash_the_untracked_files_again(
    repo: Repo, tmp_path: Path, change: Callable[[Repo], None]
) -> None:
    env, log = crlf_repo(repo, tmp_path)
    change(repo)
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
