"""Text that is not UTF-8 on the command line (a message, an include path): saved so that
every command reads the checkpoint back, or refused in one line, never an internal
error."""

from __future__ import annotations

import os

from ..conftest import Repo
from ..launcher import launch_via_shell, scratch


def test_an_include_path_that_is_not_utf8_saves_a_readable_checkpoint(repo: Repo) -> None:
    """Paths are bytes, and the manifest names a save's includes: `save --include
    $'lat\\xe9.txt'` of an ignored file would write a manifest that is not valid YAML,
    and `show`, `diff` and `list` would call the checkpoint malformed. Such a path is
    refused in one line (exit 2, nothing saved), and its folder, included instead,
    brings the file along in a checkpoint every command reads."""
    (repo.path / "inc").mkdir()
    name = os.fsdecode(b"inc/lat\xe9.txt")
    (repo.path / name).write_bytes(b"kept\n")
    (repo.path / ".gitignore").write_bytes(b"inc/\n")
    refused = repo.cp("save", "--include", name, "-m", "inc", expect=2)
    assert refused.stderr.count("\n") == 1 and "not UTF-8" in refused.stderr
    assert repo.git("for-each-ref", "refs/checkpoints") == ""
    repo.cp("save", "--include", "inc", "-m", "inc")
    shown = repo.cp("show", "cp_001", expect=None)
    assert shown.returncode == 0, shown.stderr
    assert "malformed" not in repo.cp("list").stdout
    overlay = repo.git("ls-tree", "-r", "--name-only", "-z", "refs/checkpoints/main/cp_001^3")
    assert name in overlay.split("\0")


def test_a_message_that_is_not_utf8_is_saved_or_refused_in_one_line(repo: Repo) -> None:
    """`save -m $'\\xff'` through the launcher: the message is kept (as git keeps any
    bytes) or refused with exit 2, never an internal error (a UnicodeEncodeError where
    the commit is written, exit 4); entry/fastcli reads such a message on purpose."""
    repo.write("new.txt", "new\n")
    proc = launch_via_shell(repo, "save", "-m", "caf\udce9")
    assert "internal error" not in proc.stderr, proc.stderr
    assert proc.returncode in (0, 2)
    assert scratch(repo) == []
