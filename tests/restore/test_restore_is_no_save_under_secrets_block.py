"""A restore's safety checkpoint is not a save: the save policies do not apply to it.
Secret-looking untracked names are outside the managed set: never stored, never touched
by restore. Under `secrets.on_save: block` a save refuses while one is there; a restore,
an undo and a diff still work, leaving the file alone."""

from __future__ import annotations

import pytest

from ..conftest import Repo


@pytest.fixture
def blocked(repo: Repo) -> Repo:
    repo.write(".checkpoint.yaml", "secrets: {on_save: block}\n")
    repo.commit_all("block")
    repo.write("src/app.py", "print('saved')\n")
    repo.cp("save", "-m", "good")
    repo.write("src/app.py", "print('attempt')\n")
    repo.write(".env", "TOKEN=local-only\n")
    return repo


def test_the_save_refuses_while_the_name_is_there(blocked: Repo) -> None:
    blocked.cp("save", "-m", "again", expect=3)


def test_restore_works_and_leaves_the_secret_named_file(blocked: Repo) -> None:
    blocked.cp("restore", "cp_001")
    assert (blocked.path / "src/app.py").read_text() == "print('saved')\n"
    assert (blocked.path / ".env").read_text() == "TOKEN=local-only\n"
    blocked.cp("undo")
    assert (blocked.path / "src/app.py").read_text() == "print('attempt')\n"


def test_diff_and_status_leave_the_name_out(blocked: Repo) -> None:
    proc = blocked.cp("diff", "--name-only")
    assert "src/app.py" in proc.stdout and ".env" not in proc.stdout
    status = blocked.cp("status")
    assert "unknown" not in status.stdout, status.stdout


def test_under_warn_restore_leaves_the_name_alone(repo: Repo) -> None:
    repo.write("src/app.py", "print('saved')\n")
    repo.cp("save", "-m", "good")
    repo.write("src/app.py", "print('attempt')\n")
    repo.write(".env", "TOKEN=local-only\n")
    repo.cp("restore", "cp_001")
    assert (repo.path / ".env").read_text() == "TOKEN=local-only\n"
    assert (repo.path / "src/app.py").read_text() == "print('saved')\n"
