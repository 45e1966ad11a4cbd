"""Whatever a save leaves out is recorded in its manifest (`left_out`) and listed by
`show`; a restore's safety checkpoint is a save too."""

from __future__ import annotations

from ..conftest import Repo


def test_a_safety_checkpoint_records_what_it_left_out(repo: Repo) -> None:
    repo.cp("save", "-m", "start")  # cp_001
    repo.write(".env", "API_KEY=not-stored\n")
    repo.write(".venv/pyvenv.cfg", "home = /usr/bin\n")
    repo.write("scratch.txt", "work\n")
    repo.cp("restore", "cp_001")  # safety checkpoint cp_002
    manifest = repo.cp("show", "cp_002", "--manifest").stdout
    assert "left_out:" in manifest and ".env" in manifest and ".venv/" in manifest, manifest
    shown = repo.cp("show", "cp_002").stdout
    assert "left out" in shown and ".env" in shown, shown
