"""An attempt hides files the checkpoint holds behind a new rule (`.gitignore`, or an
exclude in `.checkpoint.yaml`) and edits them. The restore puts the rule files back
first, so those files are work again: each is kept in the safety checkpoint (adopted),
then overwritten, and undo gives the attempt's bytes back; killed around the adoption,
undo and --continue still finish. A hard link, a symlink to outside, a file right at
the size limit are kept as they are; a FIFO or a file too big to keep is refused with
nothing changed, and a fetched checkpoint never replaces a file this clone ignores."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from git_checkpoint.restore.checks import ADOPT_MAX_BYTES

from ..conftest import Repo
from ..helpers import state
from ..launcher import REAL_GIT
from ..servers import bare_repo, clone, publish
from .conftest import JOURNAL, full_state, git_wrapper, hidden_and_edited, needs_cp, run_with_git

# Where a SIGKILL lands around the adoption: the first listing of untracked files once
# .gitignore is the target's again, and before/after the adoption's `cat-file commit`
# (storage/commits.add_to_overlay, which only the adoption runs).
AFTER_RULES = (
    'if [ "$1 $2 $3" = "ls-files -z -o" ] && ! grep -q notes/ .gitignore; then\n'
    "  kill -KILL $PPID; exit 137\nfi"
)


IN_ADOPTION = {
    "before": 'if [ "$1 $2" = "cat-file commit" ]; then kill -KILL $PPID; exit 137; fi',
    "after": f'if [ "$1 $2" = "cat-file commit" ]; then {REAL_GIT} "$@"; '
    "kill -KILL $PPID; exit 137; fi",
}


KILLS = {"after-rules": AFTER_RULES, **{f"adoption-{k}": v for k, v in IN_ADOPTION.items()}}


@needs_cp
@pytest.mark.parametrize("where", list(KILLS))
def test_undo_after_a_kill_around_the_adoption_gives_the_edit_back(
    repo: Repo, tmp_path: Path, where: str
) -> None:
    hidden_and_edited(repo)
    attempt = full_state(repo)
    killed = run_with_git(repo, git_wrapper(tmp_path, KILLS[where]), "restore", "cp_001")
    assert killed.returncode == -9, killed.stderr
    assert (repo.path / JOURNAL).exists()
    assert (repo.path / "notes/todo.txt").read_text() == "the attempt's edit\n"

    repo.cp("undo")
    assert (repo.path / "notes/todo.txt").read_text() == "the attempt's edit\n"
    assert full_state(repo) == attempt


@needs_cp
@pytest.mark.parametrize("where", list(IN_ADOPTION))
def test_continue_after_a_kill_in_the_adoption_finishes(
    repo: Repo, tmp_path: Path, where: str
) -> None:
    hidden_and_edited(repo)
    killed = run_with_git(repo, git_wrapper(tmp_path, IN_ADOPTION[where]), "restore", "cp_001")
    assert killed.returncode == -9, killed.stderr
    repo.cp("restore", "--continue")
    assert (repo.path / "notes/todo.txt").read_text() == "mine\n"
    assert repo.git("status", "--porcelain") == "?? notes/\n"  # untracked in cp_001
    assert not (repo.path / JOURNAL).exists()


def test_an_adopted_hard_link_keeps_its_other_name_and_undo_gives_it_back(
    repo: Repo, tmp_path: Path
) -> None:
    hidden_and_edited(repo)
    other = tmp_path / "other-name.txt"
    os.link(repo.path / "notes/todo.txt", other)
    attempt = full_state(repo)

    repo.cp("restore", "cp_001")
    assert (repo.path / "notes/todo.txt").read_text() == "mine\n"
    assert other.read_text() == "the attempt's edit\n"  # the other name is not written
    repo.cp("undo")
    assert full_state(repo) == attempt


def test_an_adopted_symlink_to_outside_is_never_followed(repo: Repo, tmp_path: Path) -> None:
    hidden_and_edited(repo)
    outside = tmp_path / "outside.txt"
    outside.write_text("outside\n")
    (repo.path / "notes/todo.txt").unlink()
    (repo.path / "notes/todo.txt").symlink_to(outside)
    attempt = full_state(repo)

    repo.cp("restore", "cp_001")
    assert not (repo.path / "notes/todo.txt").is_symlink()
    assert outside.read_text() == "outside\n"
    repo.cp("undo")
    assert full_state(repo) == attempt
    assert outside.read_text() == "outside\n"


def test_a_hidden_sparse_file_right_at_the_limit_is_kept_and_given_back(repo: Repo) -> None:
    hidden_and_edited(repo)
    with open(repo.path / "notes/todo.txt", "r+b") as fh:
        fh.truncate(ADOPT_MAX_BYTES)  # the limit itself is kept; one byte more is refused
        fh.seek(ADOPT_MAX_BYTES - 4)
        fh.write(b"end\n")

    repo.cp("restore", "cp_001")
    assert (repo.path / "notes/todo.txt").read_text() == "mine\n"
    repo.cp("undo")
    with open(repo.path / "notes/todo.txt", "rb") as fh:
        assert fh.read(19) == b"the attempt's edit\n"
        fh.seek(ADOPT_MAX_BYTES - 4)
        assert fh.read() == b"end\n"
    assert os.path.getsize(repo.path / "notes/todo.txt") == ADOPT_MAX_BYTES


def test_a_hidden_fifo_where_the_target_has_a_file_is_refused_with_nothing_changed(
    repo: Repo,
) -> None:
    hidden_and_edited(repo)
    (repo.path / "notes/todo.txt").unlink()
    os.mkfifo(repo.path / "notes/todo.txt")
    gitignore = (repo.path / ".gitignore").read_text()
    status = repo.git("status", "--porcelain=v2", "--untracked-files=all", "--ignored")

    proc = repo.cp("restore", "cp_001", expect=3, timeout=60)
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr
    assert (repo.path / ".gitignore").read_text() == gitignore
    assert repo.git("status", "--porcelain=v2", "--untracked-files=all", "--ignored") == status
    assert stat.S_ISFIFO(os.lstat(repo.path / "notes/todo.txt").st_mode)
    assert not (repo.path / JOURNAL).exists()


def test_a_file_hidden_by_a_new_gitignore_comes_back_and_undo_returns_the_edit(
    repo: Repo,
) -> None:
    repo.write("notes/todo.txt", "mine\n")
    repo.cp("save", "-m", "base")
    with open(repo.path / ".gitignore", "a") as fh:
        fh.write("notes/\n")
    repo.write("notes/todo.txt", "the agent overwrote it\n")
    attempt = state(repo)

    repo.cp("restore", "cp_001")
    assert (repo.path / "notes/todo.txt").read_text() == "mine\n"
    assert "notes/" not in (repo.path / ".gitignore").read_text()

    repo.cp("undo")
    assert state(repo) == attempt


def test_a_file_hidden_by_a_new_exclude_comes_back(repo: Repo) -> None:
    repo.write(".checkpoint.yaml", "untracked:\n  include: []\n")
    repo.commit_all("config")
    repo.write("data/file.txt", "kept\n")
    repo.cp("save", "-m", "base")
    repo.write(".checkpoint.yaml", "untracked:\n  exclude: [data/]\n")
    repo.write("data/file.txt", "edited while excluded\n")
    attempt = state(repo)

    repo.cp("restore", "cp_001")
    assert (repo.path / "data/file.txt").read_text() == "kept\n"
    repo.cp("undo")
    assert state(repo) == attempt


def test_a_hidden_file_too_big_to_keep_is_still_refused(repo: Repo) -> None:
    repo.write("notes/todo.txt", "mine\n")
    repo.cp("save", "-m", "base")
    with open(repo.path / ".gitignore", "a") as fh:
        fh.write("notes/\n")
    with open(repo.path / "notes/todo.txt", "wb") as fh:
        fh.truncate(ADOPT_MAX_BYTES + 1)  # sparse: no disk used
    before = state(repo)

    proc = repo.cp("restore", "cp_001", expect=3)

    assert "notes/todo.txt" in proc.stderr and "too big" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert state(repo) == before
    assert os.path.getsize(repo.path / "notes/todo.txt") == ADOPT_MAX_BYTES + 1


def test_a_fetched_checkpoint_never_replaces_a_file_this_clone_ignores(
    repo: Repo, tmp_path: Path
) -> None:
    """Adoption is for this machine's own checkpoints: a fetched one holding `.env` in
    its overlay does not replace the `.env` this clone ignores: it is refused."""
    url = bare_repo(tmp_path / "server.git").as_uri()
    a = publish(repo, url)
    a.write("settings.local", "API=https://their.example\n")
    a.cp("save", "-m", "theirs")
    a.cp("push")
    b = clone(url, tmp_path / "b")
    b.cp("fetch")
    (b.path / ".git/info").mkdir(exist_ok=True)
    with open(b.path / ".git/info/exclude", "a") as fh:
        fh.write("settings.local\n")
    b.write("settings.local", "API=https://mine.example\n")
    before = state(b)

    proc = b.cp("restore", "origin/main/cp_001", "--keep-head", expect=3)

    assert "settings.local" in proc.stderr and "another machine" in proc.stderr
    assert state(b) == before
