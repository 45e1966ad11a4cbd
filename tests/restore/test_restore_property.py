"""Property: any workspace W1, saved; mutated to W2; restore gives W1; undo gives W2.

Bytes, modes, symlinks and the index of the managed set come back exactly; the files
outside it (ignored, excluded, secret-named) are never touched."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ..conftest import Repo, make_repo
from ..helpers import fingerprint

NAMES = ["a", "b", "c.txt", "dir", "x y", "ünï"]


paths = st.lists(st.sampled_from(NAMES), min_size=1, max_size=3).map("/".join)


contents = st.binary(max_size=64)


kind = st.sampled_from(["file", "exec", "link"])


workspace = st.dictionaries(paths, st.tuples(kind, contents), max_size=8)


placement = st.sampled_from(["committed", "staged", "untracked"])


def _materialize(root: Path, files: dict[str, tuple[str, bytes]]) -> dict[str, tuple[str, bytes]]:
    """Write files; skip paths that clash with an earlier file/folder. Return what was written."""
    written: dict[str, tuple[str, bytes]] = {}
    for path, (k, data) in sorted(files.items()):
        parts = path.split("/")
        prefixes = {"/".join(parts[:i]) for i in range(1, len(parts))}
        if prefixes & written.keys() or any(w.startswith(path + "/") for w in written):
            continue
        full = root / path
        full.parent.mkdir(parents=True, exist_ok=True)
        if k == "link":
            os.symlink(data.hex() or "target", full)
        else:
            full.write_bytes(data)
            full.chmod(0o755 if k == "exec" else 0o644)
        written[path] = (k, data)
    return written


def _clear_managed(root: Path) -> None:
    for entry in root.iterdir():
        if entry.name in (".git", "node_modules", "keep.log", ".env", ".gitignore"):
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()


def _outside(root: Path) -> dict[str, tuple[str, bytes, bool]]:
    fp = fingerprint(root)
    return {k: v for k, v in fp.items() if k.startswith(("node_modules", "keep.log", ".env"))}


def _managed(repo: Repo) -> tuple[dict[str, tuple[str, bytes, bool]], str]:
    fp = fingerprint(repo.path)
    files = {k: v for k, v in fp.items() if not k.startswith(("node_modules", "keep.log", ".env"))}
    return files, repo.git("ls-files", "-s")


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    first=workspace,
    first_places=st.lists(placement, min_size=8, max_size=8),
    second=workspace,
    second_places=st.lists(placement, min_size=8, max_size=8),
)
def test_restore_then_undo_round_trip(
    first: dict[str, tuple[str, bytes]],
    first_places: list[str],
    second: dict[str, tuple[str, bytes]],
    second_places: list[str],
) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repo = make_repo(Path(tmp) / "w")
        repo.write(".gitignore", "*.log\n")
        repo.write("node_modules/dep.js", "dep\n")
        repo.write("keep.log", "ignored\n")
        repo.write(".env", "TOKEN=1\n")
        repo.git("add", ".gitignore")
        repo.git("commit", "-q", "-m", "base")

        def build(files: dict[str, tuple[str, bytes]], places: list[str]) -> None:
            written = _materialize(repo.path, files)
            for i, path in enumerate(sorted(written)):
                where = places[i % len(places)]
                if where != "untracked":
                    repo.git("add", "-f", "--", path)
            if any(p == "committed" for p in places[: len(written)]) and written:
                repo.git("commit", "-q", "--allow-empty", "-m", "w1")

        build(first, first_places)
        w1 = _managed(repo)
        outside = _outside(repo.path)
        repo.cp("save", "--task", "p")

        # Mutate: a new set of files over the same paths, staged or not; HEAD unchanged.
        _clear_managed(repo.path)
        written = _materialize(repo.path, second)
        for i, path in enumerate(sorted(written)):
            if second_places[i % 8] == "staged":
                repo.git("add", "-f", "--", path)
        w2 = _managed(repo)

        repo.cp("restore", "p/cp_001")
        assert _managed(repo) == w1
        assert _outside(repo.path) == outside
        undo_proc = repo.cp("undo")
        assert "workspace matches" in undo_proc.stdout
        assert _managed(repo) == w2
        assert _outside(repo.path) == outside
