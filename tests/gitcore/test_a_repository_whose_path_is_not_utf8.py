"""A repository in a folder whose name is not UTF-8 (a Latin-1 `é`, as an old file
system or archive leaves it): git takes any bytes for a path, and so does checkpoint."""

from __future__ import annotations

import os
from pathlib import Path

from ..conftest import make_repo


def test_a_repository_whose_path_is_not_utf8_saves_restores_and_undoes(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / os.fsdecode(b"caf\xe9"))
    repo.write("app.py", "print(1)\n")
    repo.commit_all("base")
    repo.write("app.py", "print(2)\n")
    assert "checkpoint saved: cp_001" in repo.cp("save", "-m", "two").stdout
    repo.write("app.py", "print(3)\n")

    repo.cp("restore", "cp_001")
    assert (repo.path / "app.py").read_text() == "print(2)\n"
    repo.cp("undo")
    assert (repo.path / "app.py").read_text() == "print(3)\n"
