"""A restore that writes a checkpoint's file over a file now too big for the overlay
keeps that file in its safety checkpoint and says it brought the path back; neither the
restore nor the safety checkpoint says the file was left out."""

from __future__ import annotations

from ..conftest import Repo


def test_an_over_limit_file_the_restore_replaces_is_not_said_left_in_place(repo: Repo) -> None:
    repo.write(".checkpoint.yaml", "limits:\n  overlay_max_bytes: 1KiB\n")
    repo.commit_all("small overlay")
    repo.write("data.bin", "small\n")
    repo.cp("save", "-m", "small data")  # cp_001 holds data.bin
    big = bytes(range(256)) * 20
    repo.write("data.bin", big)
    proc = repo.cp("restore", "cp_001")
    assert (repo.path / "data.bin").read_text() == "small\n"
    assert "brought back: data.bin" in proc.stdout
    assert "left in place, in no checkpoint: data.bin" not in proc.stdout, proc.stdout
    manifest = repo.cp("show", "cp_002", "--manifest").stdout  # the safety checkpoint
    assert "data.bin" not in manifest.partition("left_out:")[2], manifest
    repo.cp("undo")
    assert (repo.path / "data.bin").read_bytes() == big
