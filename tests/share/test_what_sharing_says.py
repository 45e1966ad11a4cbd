"""What sharing says names the right things: a fetched checkpoint restored is named as
fetched (not as this clone's own checkpoint of the same id), and a push that a secret
blocks names the checkpoints that hold it, with commands that do get the push through."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from ..conftest import Repo
from ..servers import bare_repo

AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLE"


def two_clones(repo: Repo, tmp_path: Path) -> tuple[Repo, Repo]:
    remote = bare_repo(tmp_path / "remote.git")
    repo.git("remote", "add", "origin", str(remote))
    repo.git("push", "-q", "origin", "main")
    other = tmp_path / "b"
    subprocess.run(["git", "clone", "-q", str(remote), str(other)], check=True)
    return repo, Repo(other)


def key_saved_then_removed(a: Repo) -> None:
    """cp_001 holds a key; cp_002, saved after it was taken out, does not."""
    a.write("src/settings.py", f"AWS_ACCESS_KEY_ID = '{AWS_KEY}'\n")
    a.cp("save", "-m", "with the key")
    a.write("src/settings.py", "AWS_ACCESS_KEY_ID = os.environ['KEY']\n")
    a.cp("save", "-m", "key removed")


def test_a_fetched_checkpoint_restored_is_named_as_fetched(repo: Repo, tmp_path: Path) -> None:
    a, b = two_clones(repo, tmp_path)
    a.write("src/app.py", "print('from a')\n")
    a.cp("save", "-m", "a's work")
    a.cp("push", "origin")
    b.write("src/app.py", "print('from b')\n")
    b.cp("save", "-m", "b's own cp_001")
    b.cp("fetch", "origin")
    proc = b.cp("restore", "origin/main/cp_001")
    assert proc.stdout.splitlines()[-1] == "workspace matches origin/main/cp_001"
    assert (b.path / "src/app.py").read_text() == "print('from a')\n"
    proc = b.cp("restore", "cp_001")  # b's own, by its short name
    assert proc.stdout.splitlines()[-1] == "workspace matches cp_001"


def test_a_blocked_push_names_the_checkpoint_with_the_secret(repo: Repo, tmp_path: Path) -> None:
    a, _ = two_clones(repo, tmp_path)
    key_saved_then_removed(a)
    proc = a.cp("push", "origin", expect=3)
    message = proc.stderr
    assert "secrets found in main/cp_001, nothing pushed" in message
    assert "git checkpoint drop main/cp_001" in message
    assert "git checkpoint push origin main/cp_002" in message
    fingerprint = re.search(r"secrets\.allow in \.checkpoint\.yaml \(([0-9a-f]{12})\)", message)
    assert fingerprint, message

    # Each way it names gets a push through.
    a.cp("push", "origin", "main/cp_002")
    a.write(".checkpoint.yaml", f"secrets:\n  allow: [{fingerprint.group(1)}]\n")
    a.cp("push", "origin")
    pushed = a.git("ls-remote", "origin", "refs/checkpoints/*").split()
    assert "refs/checkpoints/main/cp_001" in pushed


def test_dropping_the_checkpoint_named_gets_the_push_through(repo: Repo, tmp_path: Path) -> None:
    a, _ = two_clones(repo, tmp_path)
    key_saved_then_removed(a)
    a.cp("push", "origin", expect=3)
    a.cp("drop", "main/cp_001")
    proc = a.cp("push", "origin")
    assert "main/cp_002" in proc.stdout
