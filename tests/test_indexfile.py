"""The index files graft.py writes and reads itself (indexfile.py), checked against git's
own reading and writing, and the trees of recent checkpoints kept for trees_of."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from git_checkpoint.gitcore import indexfile, loose

from .conftest import Repo
from .test_early_scan import traced
from .test_store_reuse import parents


def listed(repo: Repo, index: Path) -> dict[str, tuple[str, str]]:
    """git's own reading of `index`: path -> (mode, id)."""
    env = {**os.environ, "GIT_INDEX_FILE": str(index)}
    out = subprocess.run(
        ["git", "ls-files", "-s", "-z"], cwd=repo.path, env=env, capture_output=True, check=True
    ).stdout.decode("utf-8", "surrogateescape")
    entries = {}
    for record in out.split("\0"):
        if record:
            meta, _, path = record.partition("\t")
            mode, oid, _ = meta.split(" ")
            entries[path] = (mode, oid)
    return entries


def git_index(repo: Repo, index: Path, *args: str, stdin: bytes | None = None) -> None:
    env = {**os.environ, "GIT_INDEX_FILE": str(index)}
    subprocess.run(["git", *args], cwd=repo.path, env=env, input=stdin, check=True)


def test_a_seed_reads_back_in_git_as_written(repo: Repo, tmp_path: Path) -> None:
    blob = repo.git("hash-object", "-w", "--stdin", input=b"x\n").strip()
    head = repo.git("rev-parse", "HEAD").strip()
    entries = {
        "a.txt": ("100644", blob),
        "bin/run": ("100755", blob),
        "link": ("120000", blob),
        "mod": ("160000", head),
        "dir/ü\udcff.txt": ("100644", blob),  # not UTF-8: kept as bytes
        "a-b": ("100644", blob),  # "-" sorts before "."
        "n/" + "x" * 5000: ("100644", blob),  # longer than the flags' 12 bits
    }
    index = tmp_path / "index"
    indexfile.write_seed(str(index), entries)
    assert listed(repo, index) == entries
    assert indexfile.read_entries(str(index)) == entries
    git_index(repo, index, "update-index", "--add", "--remove", "a.txt")  # gone on disk
    assert indexfile.read_entries(str(index)) == listed(repo, index)
    assert "a.txt" not in listed(repo, index)


def test_an_empty_seed_is_an_empty_index(repo: Repo, tmp_path: Path) -> None:
    index = tmp_path / "index"
    indexfile.write_seed(str(index), {})
    assert listed(repo, index) == {} and indexfile.read_entries(str(index)) == {}
    git_index(repo, index, "update-index", "--add", "src/app.py")
    assert indexfile.read_entries(str(index)) == listed(repo, index) != {}


def test_git_written_indexes_read_the_same_or_not_at_all(repo: Repo, tmp_path: Path) -> None:
    """Versions 2 and 3 read as ls-files lists them; version 4, a split index, a
    conflict or a damaged file answer None (graft then asks ls-files)."""
    real = repo.path / ".git/index"
    assert indexfile.read_entries(str(real)) == listed(repo, real)
    index = tmp_path / "index"
    index.write_bytes(real.read_bytes())
    git_index(repo, index, "update-index", "--index-version", "3")
    git_index(repo, index, "update-index", "--skip-worktree", "src/app.py")  # extended flag
    assert indexfile.read_entries(str(index)) == listed(repo, index)
    git_index(repo, index, "update-index", "--index-version", "4")
    assert indexfile.read_entries(str(index)) is None
    git_index(repo, index, "update-index", "--index-version", "2")
    git_index(repo, index, "update-index", "--split-index")
    assert b"link" in index.read_bytes()  # the entries are in a shared index beside it
    assert indexfile.read_entries(str(index)) is None
    blob = repo.git("hash-object", "-w", "--stdin", input=b"theirs\n").strip()
    conflicted = tmp_path / "conflicted"
    info = f"100644 {blob} 2\tc.txt\n100644 {blob} 3\tc.txt\n".encode()
    git_index(repo, conflicted, "update-index", "--index-info", stdin=info)
    assert indexfile.read_entries(str(conflicted)) is None
    data = real.read_bytes()
    for damaged in (data[:40], data[:-21], b"XXXX" + data[4:], b""):
        index.write_bytes(damaged)
        assert indexfile.read_entries(str(index)) is None
    assert indexfile.read_entries(str(tmp_path / "absent")) is None


@pytest.mark.parametrize("setting", ["core.splitIndex=true", "index.version=4"])
def test_save_under_a_split_or_v4_index_is_add_u(repo: Repo, setting: str) -> None:
    """graft's scratch index in another form: ls-files reads it, W is still add -u's."""
    key, value = setting.split("=")
    repo.git("config", key, value)
    repo.write("src/app.py", "print('edited')\n")
    repo.write("docs/new.md", "untracked\n")
    repo.cp("save", "-m", "one")
    repo.git("add", "-u")
    assert (
        repo.git("write-tree").strip()
        == repo.git("rev-parse", "refs/checkpoints/main/cp_001^{tree}").strip()
    )


def test_the_trees_of_recent_checkpoints_need_no_git(repo: Repo) -> None:
    """A save writes the tree of each I and U commit to the state folder's `trees`; the
    next save, and a restore of a recent checkpoint, read them there, not with rev-parse."""
    repo.write(".checkpoint.yaml", "secrets: {on_save: warn}\n")
    repo.write("notes.txt", "untracked\n")
    repo.cp("save", "-m", "one")
    index_commit, overlay_commit = parents(repo, "cp_001")[1:]
    kept = (repo.path / ".git/checkpoint/trees").read_text().splitlines()
    for commit in (index_commit, overlay_commit):
        assert f"{commit} {repo.git('rev-parse', commit + '^{tree}').strip()}" in kept
    repo.write("src/app.py", "print('two')\n")
    calls = traced(repo, "save", "-m", "two")
    assert not [c for c in calls if any("^{tree}" in a for a in c)], calls
    calls = traced(repo, "restore", "cp_001")
    assert not [c for c in calls if any("^{tree}" in a for a in c)], calls
    assert repo.path.joinpath("src/app.py").read_text() != "print('two')\n"


def test_a_broken_trees_file_is_no_cache(repo: Repo) -> None:
    """Lines that are not `commit tree` are ignored (git answers); a trees file that cannot
    be written never fails a save."""
    trees = repo.path / ".git/checkpoint/trees"
    repo.cp("save", "-m", "one")
    trees.write_bytes(b"\xff\xfe garbage\nnot two ids\n" + b"a" * 40 + b"\n")
    repo.write("src/app.py", "print('two')\n")
    repo.cp("save", "-m", "two")
    repo.cp("restore", "cp_001")
    assert trees.read_text().count("\n") >= 1 and "garbage" not in trees.read_text()
    trees.unlink()
    trees.mkdir()  # cannot be replaced by a file
    repo.write("src/app.py", "print('three')\n")
    repo.cp("save", "-m", "three")
    repo.cp("restore", "cp_002")
    assert repo.path.joinpath("src/app.py").read_text() == "print('two')\n"


def test_the_overlay_tree_is_write_trees(repo: Repo, tmp_path: Path) -> None:
    """U's tree, built from the scratch index here (graft.tree_of, loose.py), is the one
    `write-tree` writes for the same files; git's strict fsck finds nothing to say."""
    names = ["a", "a.txt", "a-b", "x/y/z.txt", "x/y.txt", "x/y-/q", "dé/ü.md", "bin/run"]
    for name in names:
        repo.write(f"new/{name}" if name == "a" else name, f"{name}\n")
    os.chmod(repo.path / "bin/run", 0o755)
    os.symlink("a.txt", repo.path / "link")
    repo.cp("save", "-m", "overlay")
    overlay = parents(repo, "cp_001")[2]
    index = tmp_path / "index"
    files = [f"new/{n}" if n == "a" else n for n in names] + ["link"]
    git_index(
        repo, index, "update-index", "--add", "-z", "--stdin", stdin="\0".join(files).encode()
    )
    expected = subprocess.run(
        ["git", "write-tree"],
        cwd=repo.path,
        env={**os.environ, "GIT_INDEX_FILE": str(index)},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert repo.git("rev-parse", f"{overlay}^{{tree}}").strip() == expected
    repo.git("fsck", "--strict", "--no-dangling")
    assert not list((repo.path / ".git/objects").glob("*/tmp_obj_*"))


def sha256_repo(tmp_path: Path) -> Repo:
    path = tmp_path / "r256"
    subprocess.run(["git", "init", "-q", "--object-format=sha256", str(path)], check=True)
    return Repo(path)


def test_sha256_objects_are_left_to_git(repo: Repo, tmp_path: Path) -> None:
    """Ids of 64 hex digits: the overlay's tree and graft's trees come from git."""
    from git_checkpoint.gitcore.repo import Repo as GitRepo

    usual = GitRepo.discover(repo.path)
    assert usual.sha1() and loose.usable(usual.config_pairs())
    other = GitRepo.discover(sha256_repo(tmp_path).path)
    assert not other.sha1() and not loose.usable(other.config_pairs())


@pytest.mark.xfail(
    strict=True,
    reason="SHA-256 repositories are not supported yet: the refs are created against a "
    "40-digit zero id (gitio.ZERO_OID), and manifests and sharing expect 40-digit ids",
)
def test_a_sha256_repository_saves_and_restores(tmp_path: Path) -> None:
    repo = sha256_repo(tmp_path)
    path = repo.path
    repo.write("src/app.py", "print('one')\n")
    repo.commit_all("init")
    repo.write("src/app.py", "print('two')\n")
    repo.write("notes.txt", "untracked\n")
    repo.cp("save", "-m", "two")
    repo.write("src/app.py", "print('three')\n")
    (path / "notes.txt").unlink()
    repo.cp("restore", "cp_001")
    assert (path / "src/app.py").read_text() == "print('two')\n"
    assert (path / "notes.txt").read_text() == "untracked\n"
    repo.git("fsck", "--strict", "--no-dangling")


def test_a_sha256_repository_is_refused_in_one_line(tmp_path: Path) -> None:
    """Until it is supported: exit 3 and why, not git's complaint about a zero id."""
    repo = sha256_repo(tmp_path)
    repo.write("src/app.py", "print('one')\n")
    repo.commit_all("init")
    repo.write("src/app.py", "print('two')\n")
    proc = repo.cp("save", "-m", "two", expect=3)
    assert proc.stderr.count("\n") == 1 and "SHA-256" in proc.stderr
    assert repo.cp_json("save", "-m", "two", "--json", expect=3)["exit_code"] == 3
    assert repo.git("for-each-ref", "refs/checkpoints/") == ""
    assert (repo.path / "src/app.py").read_text() == "print('two')\n"
    doctor = repo.cp("doctor", expect=None)
    assert doctor.returncode != 0 and "SHA-256" in doctor.stdout + doctor.stderr


def test_a_shared_repository_gets_its_objects_from_git(repo: Repo) -> None:
    """core.sharedRepository: git writes the objects, with the group's permissions (a
    folder we made under umask 077 would shut the group out)."""
    repo.git("config", "core.sharedRepository", "group")
    repo.write("deep/er/still/file.txt", "new\n")
    repo.git("add", "deep")
    repo.commit_all("deep")
    repo.write("deep/er/still/file.txt", "edited\n")
    repo.write("fresh/folder/new.txt", "untracked\n")
    objects = repo.path / ".git/objects"
    before = set(objects.iterdir())
    old = os.umask(0o077)
    try:
        repo.cp("save", "-m", "shared")
    finally:
        os.umask(old)
    made = [f for f in set(objects.iterdir()) - before if len(f.name) == 2]
    assert made  # the save wrote objects in folders of its own
    for folder in made:
        assert folder.stat().st_mode & 0o070 == 0o070, folder


def test_objects_elsewhere_are_left_to_git(monkeypatch: pytest.MonkeyPatch) -> None:
    """An object directory or quarantine from the environment: git knows where to write."""
    assert loose.usable([("core.autocrlf", "true")])
    for name in ("GIT_OBJECT_DIRECTORY", "GIT_QUARANTINE_PATH"):
        with monkeypatch.context() as patch:
            patch.setenv(name, "/elsewhere")
            assert not loose.usable([])
    assert not loose.usable([("core.sharedrepository", "group")])


def test_a_tree_already_there_is_renewed_not_rewritten(tmp_path: Path) -> None:
    body = b"100644 a\0" + bytes(20)
    oid = "0" * 40  # any name: write_trees trusts its caller's ids
    loose.write_trees(tmp_path, {oid: body})
    path = tmp_path / oid[:2] / oid[2:]
    assert path.stat().st_mode & 0o777 == 0o444 & ~current_umask()
    os.utime(path, (1, 1))
    loose.write_trees(tmp_path, {oid: b"other"})
    assert path.stat().st_mtime > 1  # freshened, as git does, so a prune keeps it
    import zlib

    assert zlib.decompress(path.read_bytes()) == b"tree %d\0" % len(body) + body


def current_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
