"""Files named like secrets are outside the managed set: a restore never stores, touches
or removes them, and undo leaves them as they were."""

from __future__ import annotations

from ..conftest import Repo
from ..helpers import state


def test_restore_and_undo_never_touch_secret_looking_files(repo: Repo) -> None:
    repo.cp("save", "-m", "before the secrets")
    for name in (".ENV", ".aws/credentials", "credentials.json", "server.pem"):
        repo.write(name, f"secret of {name}\n")
    repo.write("work.txt", "work\n")
    with_secrets = state(repo)
    out = repo.cp("restore", "cp_001").stdout
    assert "removed: work.txt" in out
    for name in (".ENV", ".aws/credentials", "credentials.json", "server.pem"):
        assert (repo.path / name).read_text() == f"secret of {name}\n"
    repo.cp("undo")
    assert state(repo) == with_secrets


def test_a_secret_looking_file_is_never_stored_by_a_restore(repo: Repo) -> None:
    repo.write(".env", "TOKEN=old\n")
    repo.commit_all("env")
    repo.cp("save", "-m", "base")
    repo.git("rm", "-q", "--cached", ".env")
    repo.write(".env", "TOKEN=the-live-one\n")

    repo.cp("restore", "cp_001", expect=None, timeout=30)
    refs = repo.git("for-each-ref", "--format=%(objectname)", "refs/checkpoints/").split()
    for commit in refs:
        stored = repo.git("ls-tree", "-r", "--name-only", f"{commit}^3", check=False)
        assert ".env" not in stored.split(), f"{commit} stores .env"
