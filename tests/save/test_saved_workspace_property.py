"""Property: any workspace, once saved, comes back from plain git.

For a generated workspace (random bytes, executables, symlinks, staged and unstaged
edits, deletions, untracked files), `git stash apply --index <checkpoint>` in a clean
clone at the base commit gives the same file bytes, modes, symlink targets and index.
As a second oracle, the checkpoint's three trees equal those of git's own
`git stash push --include-untracked` taken in a copy of the same workspace."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from ..helpers import workspace_files

# A state of one path: absent, or (kind, payload) with kind file / exec / link.
State = tuple[str, bytes] | None


DIRS = ["", "D/", "D/E/", "Ü n/", "X/Y/Z/W/"]


NAME = st.text(alphabet="abcxyzé日_- 0", min_size=1, max_size=6).filter(
    lambda n: n.strip() == n and n not in ("-", "_")
)


EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


LINK_TARGETS = [b"README", b"nowhere", b"../up", b"D/E", b"\xc3\xbc"]


@st.composite
def states(draw: st.DrawFn) -> State:
    kind = draw(st.sampled_from(["none", "file", "file", "exec", "link"]))
    if kind == "none":
        return None
    if kind == "link":
        return ("link", draw(st.sampled_from(LINK_TARGETS)))
    return (kind, draw(st.binary(max_size=48)))


@dataclass(frozen=True)
class PathSpec:
    path: str
    base: State
    index: State
    work: State


@st.composite
def workspaces(draw: st.DrawFn) -> list[PathSpec]:
    paths = draw(
        st.lists(
            st.tuples(st.sampled_from(DIRS), NAME).map("".join),
            min_size=1,
            max_size=10,
            unique=True,
        )
    )
    specs = []
    for path in paths:
        base = draw(states())
        # the index: often as in the base, sometimes its own state
        index = base if draw(st.booleans()) else draw(states())
        # the work tree: often as in the index, sometimes its own state
        work = index if draw(st.integers(0, 3)) == 0 else draw(states())
        specs.append(PathSpec(path, base, index, work))
    return specs


def git(cwd: Path, *args: str, input: bytes | None = None) -> bytes:
    proc = subprocess.run(["git", *args], cwd=cwd, input=input, capture_output=True, check=False)
    if proc.returncode != 0:
        raise AssertionError(f"git {args} in {cwd}: {proc.stderr.decode(errors='replace')}")
    return proc.stdout


def git_fails(cwd: Path, *args: str) -> bool:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False).returncode != 0


def put(root: Path, path: str, state: State) -> None:
    p = root / path
    if p.is_symlink() or p.exists():
        p.unlink()
    if state is None:
        return
    p.parent.mkdir(parents=True, exist_ok=True)
    kind, payload = state
    if kind == "link":
        os.symlink(os.fsdecode(payload), p)
    else:
        p.write_bytes(payload)
        p.chmod(0o755 if kind == "exec" else 0o644)


def build(root: Path, specs: list[PathSpec]) -> None:
    git(root.parent, "init", "-q", str(root))
    (root / "README").write_bytes(b"readme\n")
    for s in specs:
        put(root, s.path, s.base)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    removed = [s.path for s in specs if s.index is None and s.base is not None]
    if removed:
        git(root, "rm", "-q", "--cached", "--", *removed)
    staged = [s for s in specs if s.index is not None and s.index != s.base]
    for s in staged:
        put(root, s.path, s.index)
    if staged:
        git(root, "add", "-f", "--", *(s.path for s in staged))
    for s in specs:
        put(root, s.path, s.work)


def listing(root: Path, tree: str) -> dict[str, bytes]:
    out = git(root, "ls-tree", "-r", "-z", tree)
    entries = {}
    for item in out.split(b"\0"):
        if item:
            meta, _, name = item.partition(b"\t")
            entries[os.fsdecode(name)] = meta
    return entries


def trees(root: Path, rev: str) -> list[str]:
    """Trees of W, I and U (U may be missing)."""
    out = git(root, "rev-list", "--no-walk", "--parents", "-n", "1", rev).decode().split()
    commits = [out[0], *out[2:]]
    return [git(root, "rev-parse", f"{c}^{{tree}}").decode().strip() for c in commits]


@settings(
    max_examples=40,
    deadline=None,
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.shrink],
    suppress_health_check=[
        HealthCheck.function_scoped_fixture,
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
    ],
)
@given(specs=workspaces())
def test_saved_workspace_comes_back_with_stash_apply(
    specs: list[PathSpec], tmp_path_factory: pytest.TempPathFactory
) -> None:
    top = Path(tempfile.mkdtemp(dir=tmp_path_factory.getbasetemp()))
    try:
        work = top / "work"
        build(work, specs)
        want_files = workspace_files(work)
        want_index = git(work, "ls-files", "-s", "-z")
        want_status = git(work, "status", "--porcelain=v1", "-z", "--untracked-files=all")

        git(work, "checkpoint", "save", "-m", "property")
        ref = "refs/checkpoints/main/cp_001"
        got_trees = trees(work, ref)

        # the user's workspace is as it was
        assert workspace_files(work) == want_files
        assert git(work, "ls-files", "-s", "-z") == want_index

        # plain git brings it back in a clean clone of the base
        clone = top / "clone"
        git(top, "clone", "-q", "--no-local", str(work), str(clone))
        git(clone, "fetch", "-q", "origin", f"+{ref}:{ref}")
        git(clone, "stash", "apply", "--index", ref)
        assert workspace_files(clone) == want_files
        assert git(clone, "ls-files", "-s", "-z") == want_index
        assert git(clone, "status", "--porcelain=v1", "-z", "--untracked-files=all") == want_status

        # and the trees are the ones git stash itself would have made
        copy = top / "copy"
        shutil.copytree(work, copy, symlinks=True)
        git(copy, "stash", "push", "-q", "--include-untracked")
        if git_fails(copy, "rev-parse", "-q", "--verify", "refs/stash"):
            assert want_status == b"", "git stash found nothing, but the workspace has changes"
        else:
            native = trees(copy, "refs/stash")
            if native[2:] == [EMPTY_TREE]:
                native = native[:2]  # git stash -u adds an empty U; a checkpoint leaves it out
            assert got_trees[1:] == native[1:], "index and overlay trees as git stash makes them"
            # git stash's W also keeps paths of B that left the index (they are in U too)
            # and files added to the index then deleted from the work tree; a checkpoint's
            # W is the index's paths as they are in the work tree, so compare those.
            indexed = listing(work, got_trees[1])
            native_w = {
                p: e
                for p, e in listing(copy, native[0]).items()
                if p in indexed and os.path.lexists(work / p)
            }
            assert listing(work, got_trees[0]) == native_w
    finally:
        shutil.rmtree(top, ignore_errors=True)
