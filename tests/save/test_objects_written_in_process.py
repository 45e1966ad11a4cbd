"""The objects a save writes in-process (gitcore/loose, gitcore/indexfile): what plain
git would write, or refuse, under the same environment: commit dates and zones,
identities under user.useConfigOnly and `git -c`, trees of odd names and index settings,
and concurrent saves."""

from __future__ import annotations

import os
import re
import subprocess
import time
from pathlib import Path

import pytest

from git_checkpoint.gitcore import loose
from git_checkpoint.gitcore.repo import Repo as GitRepo

from ..conftest import Repo
from ..helpers import fingerprint

DATE_ENV = ("GIT_AUTHOR_DATE", "GIT_COMMITTER_DATE")


EMAIL_ENV = ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL")


def git_commit(repo: Repo, tree: str, message: str = "m\n") -> bytes | None:
    """What `git commit-tree` writes from this environment; None when git refuses."""
    run = subprocess.run(
        ["git", "commit-tree", tree], cwd=repo.path, input=message.encode(), capture_output=True
    )
    if run.returncode != 0:
        return None
    oid = run.stdout.decode().strip()
    return subprocess.run(
        ["git", "cat-file", "commit", oid], cwd=repo.path, capture_output=True, check=True
    ).stdout


def ours(repo: Repo, tree: str, message: str = "m\n") -> bytes | None:
    config = GitRepo.discover(repo.path).config_pairs()
    return loose.commit_body(config, tree, [], message)


def head_tree(repo: Repo) -> str:
    return repo.git("rev-parse", "HEAD^{tree}").strip()


# --- commit dates: git reads these otherwise, or refuses them -------------------------------

GIT_DISAGREES = {
    # git's match_tz takes no zone of 24 hours or more: the date is read as UTC, +0000
    "an ISO zone of 24 hours": "2024-02-29T12:00:00+2400",
    # git refuses it (invalid date format); written here, fsck --strict: badDateOverflow
    "a raw date past 64 bits": "@99999999999999999999 +0000",
    # re's \d matches any Unicode digit; git refuses the date
    "a raw date in Arabic-Indic digits": "@\u0661\u0662\u0663 +0000",
}


@pytest.mark.parametrize("case", list(GIT_DISAGREES))
def test_a_date_git_reads_otherwise_is_left_to_git(
    repo: Repo, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    monkeypatch.setenv("GIT_AUTHOR_DATE", GIT_DISAGREES[case])
    tree = head_tree(repo)
    mine = ours(repo, tree)
    assert mine is None or mine == git_commit(repo, tree), mine


def test_a_local_zone_with_seconds_west_of_utc_is_git_s_zone(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tm_gmtoff of -19820 s: git truncates to -0530; `// 60` floors to -331 min: -0531."""
    for name in DATE_ENV:
        monkeypatch.delenv(name)
    monkeypatch.setenv("TZ", "<-0530>5:30:20")
    time.tzset()
    try:
        tree = head_tree(repo)
        mine, git = ours(repo, tree), git_commit(repo, tree)
    finally:
        monkeypatch.undo()
        time.tzset()
    assert mine is not None and git is not None
    zones = re.compile(rb"> \d+ ([+-]\d{4})\n")
    assert zones.findall(mine) == zones.findall(git) == [b"-0530", b"-0530"]


def test_a_save_with_a_date_git_refuses_is_no_broken_commit(repo: Repo) -> None:
    """A date `git commit-tree` refuses: the save fails in one line (exit 4, no
    traceback), or writes a commit `git fsck --strict` accepts, never a broken one."""
    repo.write("src/app.py", "print('two')\n")
    proc = repo.cp(
        "save",
        "-m",
        "overflow",
        expect=None,
        env={"GIT_AUTHOR_DATE": GIT_DISAGREES["a raw date past 64 bits"]},
    )
    if proc.returncode == 0:
        fsck = subprocess.run(
            ["git", "fsck", "--strict", "--no-dangling"], cwd=repo.path, capture_output=True
        )
        assert fsck.returncode == 0, fsck.stderr.decode()
    else:
        assert proc.returncode == 4 and "Traceback" not in proc.stderr


def test_a_save_in_a_zone_with_seconds_writes_git_s_zone(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo.write("src/app.py", "print('two')\n")
    for name in DATE_ENV:
        monkeypatch.delenv(name)
    monkeypatch.setenv("TZ", "<-0530>5:30:20")
    repo.cp("save", "-m", "zone")
    raw = repo.git("cat-file", "commit", "refs/checkpoints/main/cp_001")
    assert re.findall(r" \d+ ([+-]\d{4})\n", raw) == ["-0530", "-0530"], raw


# --- identity: user.useConfigOnly -------------------------------------------------------------


def test_use_config_only_is_not_answered_from_email_env(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """git refuses $EMAIL under user.useConfigOnly (no identity): the commit written here
    must not take the $EMAIL git was told not to use either."""
    for name in EMAIL_ENV:
        monkeypatch.delenv(name)
    monkeypatch.setenv("EMAIL", "private@home.example")
    repo.git("config", "user.useConfigOnly", "true")
    tree = head_tree(repo)
    assert git_commit(repo, tree) is None  # git: "Author identity unknown"
    assert ours(repo, tree) is None


def test_a_save_under_use_config_only_records_no_email_env(
    repo: Repo, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in EMAIL_ENV:
        monkeypatch.delenv(name)
    monkeypatch.setenv("EMAIL", "private@home.example")
    repo.git("config", "user.useConfigOnly", "true")
    repo.write("src/app.py", "print('two')\n")
    repo.cp("save", "-m", "ident")
    raw = repo.git("cat-file", "commit", "refs/checkpoints/main/cp_001")
    assert "private@home.example" not in raw, raw


# --- trees: what the save writes is what git writes -----------------------------------------


def git_tree_of(repo: Repo, files: list[str], seed: Path | None, tmp: Path) -> str:
    """write-tree of `files` added (update-index --add --remove) to a copy of `seed`."""
    index = tmp / "check-index"
    index.unlink(missing_ok=True)
    if seed is not None:
        index.write_bytes(seed.read_bytes())
    env = {**os.environ, "GIT_INDEX_FILE": str(index)}
    data = b"".join(os.fsencode(f) + b"\0" for f in files)
    subprocess.run(
        ["git", "update-index", "--add", "--remove", "-z", "--stdin"],
        cwd=repo.path,
        input=data,
        env=env,
        check=True,
        capture_output=True,
    )
    out = subprocess.run(
        ["git", "write-tree"], cwd=repo.path, env=env, check=True, capture_output=True
    )
    return out.stdout.decode().strip()


ODD = [
    "-leading-dash",
    "--double",
    "sp ace/tab\tname",
    "ünï/cödé.txt",
    "a.b",
    "a-b",
    "a/b",
    "a0",
    "x/" + "l" * 200 + "/" + "n" * 250,
    "back\\slash",
    "trailing space ",
    "#hash",
    "[brackets]",
    "*star",
    "q?uestion",
    "deep/er/and/deeper/file",
]


def lines_of(repo: Repo, *argv: str) -> list[str]:
    out = subprocess.run(["git", *argv], cwd=repo.path, capture_output=True, check=True).stdout
    return [p.decode("utf-8", "surrogateescape") for p in out.split(b"\0") if p]


def test_odd_names_in_tracked_and_overlay_trees_are_git_s_trees(repo: Repo, tmp_path: Path) -> None:
    for i, name in enumerate(ODD):
        repo.write(f"tracked/{name}", f"t{i}\n", mode=0o755 if i % 3 == 0 else 0o644)
    os.symlink("../README.md", repo.path / "tracked/link")
    repo.commit_all("odd names")
    for i, name in enumerate(ODD):
        if i % 2:
            repo.write(f"tracked/{name}", f"changed {i}\n", mode=0o644 if i % 3 == 0 else 0o755)
        repo.write(f"new/{name}", f"u{i}\n", mode=0o755 if i % 4 == 0 else 0o644)
    (repo.path / "tracked/link").unlink()
    os.symlink("src/app.py", repo.path / "tracked/link")
    os.symlink("nowhere", repo.path / "new/dangling")
    (repo.path / "tracked/a.b").unlink()  # a deletion beside the edits
    repo.cp("save", "-m", "odd")
    ref = "refs/checkpoints/main/cp_001"
    tracked = lines_of(repo, "ls-files", "-z")
    expect_w = git_tree_of(repo, tracked, repo.path / ".git/index", tmp_path)
    assert repo.git("rev-parse", f"{ref}^{{tree}}").strip() == expect_w
    overlay = lines_of(repo, "ls-tree", "-r", "-z", "--name-only", f"{ref}^3")
    assert sorted(overlay) == sorted(lines_of(repo, "ls-files", "-o", "-z", "--exclude-standard"))
    assert repo.git("rev-parse", f"{ref}^3^{{tree}}").strip() == git_tree_of(
        repo, overlay, None, tmp_path
    )
    repo.git("fsck", "--strict", "--no-dangling")
    saved = fingerprint(repo.path)
    for name in ODD:
        repo.write(f"tracked/{name}", "scribbled\n")
    repo.cp("restore", "cp_001")
    assert fingerprint(repo.path) == saved


def test_a_file_folder_swap_saves_and_restores(repo: Repo, tmp_path: Path) -> None:
    repo.write("df/inner.txt", "inner\n")
    repo.write("fd", "a file\n")
    repo.commit_all("df")
    (repo.path / "df/inner.txt").unlink()
    (repo.path / "df").rmdir()
    repo.write("df", "now a file\n")
    (repo.path / "fd").unlink()
    repo.write("fd/inside.txt", "now a folder\n")
    repo.write("README.md", "# changed\n")
    repo.cp("save", "-m", "swap")
    repo.git("fsck", "--strict", "--no-dangling")
    saved = fingerprint(repo.path)
    repo.git("checkout", "-q", "-f", "HEAD")  # (the test's own repo: put back the commit)
    repo.git("clean", "-q", "-fd")
    repo.cp("restore", "cp_001")
    assert fingerprint(repo.path) == saved
    repo.cp("undo")
    assert fingerprint(repo.path) != saved


@pytest.mark.parametrize(
    "config",
    [
        {"index.version": "4"},
        {"feature.manyFiles": "true"},
        {"core.splitIndex": "true", "splitIndex.maxPercentChange": "0"},
        {"core.untrackedCache": "true"},
        {"index.threads": "4", "pack.threads": "1"},
    ],
    ids=["v4", "manyFiles", "split", "untrackedCache", "threads"],
)
def test_index_settings_give_git_s_trees(
    repo: Repo, tmp_path: Path, config: dict[str, str]
) -> None:
    for key, value in config.items():
        repo.git("config", key, value)
    repo.git("update-index", "--really-refresh")
    for i in range(12):
        repo.write(f"lib/m{i}.py", f"{i}\n")
    repo.commit_all("more")
    for n in range(3):
        repo.write(f"lib/m{n}.py", f"changed {n}\n")
        repo.write(f"new{n}/f.txt", f"new {n}\n")
        repo.cp("save", "-m", f"s{n}")
        ref = f"refs/checkpoints/main/cp_{n + 1:03d}"
        tracked = lines_of(repo, "ls-files", "-z")
        expect_w = git_tree_of(repo, tracked, repo.path / ".git/index", tmp_path)
        assert repo.git("rev-parse", f"{ref}^{{tree}}").strip() == expect_w
        overlay = lines_of(repo, "ls-tree", "-r", "-z", "--name-only", f"{ref}^3")
        assert repo.git("rev-parse", f"{ref}^3^{{tree}}").strip() == git_tree_of(
            repo, overlay, None, tmp_path
        )
    repo.git("fsck", "--strict", "--no-dangling")


def test_git_dash_c_identity_is_the_commit_s(repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME", *EMAIL_ENV):
        monkeypatch.delenv(name)
    repo.git("config", "user.name", "Config Name")
    repo.git("config", "user.email", "config@example.com")
    repo.write("src/app.py", "print('two')\n")
    subprocess.run(
        [
            "git",
            "-c",
            "user.name=Dash C",
            "-c",
            "committer.email=dc@example.com",
            "checkpoint",
            "save",
            "-m",
            "c",
        ],
        cwd=repo.path,
        check=True,
        capture_output=True,
    )
    raw = repo.git("cat-file", "commit", "refs/checkpoints/main/cp_001")
    assert "\nauthor Dash C <config@example.com> " in raw, raw
    assert "\ncommitter Dash C <dc@example.com> " in raw, raw
    expected = subprocess.run(
        [
            "git",
            "-c",
            "user.name=Dash C",
            "-c",
            "committer.email=dc@example.com",
            "commit-tree",
            "refs/checkpoints/main/cp_001^{tree}",
            "-m",
            "x",
        ],
        cwd=repo.path,
        check=True,
        capture_output=True,
    )
    theirs = repo.git("cat-file", "commit", expected.stdout.decode().strip())
    assert theirs.split("\n")[1:3] == raw.split("\n")[3:5]


def test_concurrent_saves_of_two_tasks_are_both_whole(repo: Repo) -> None:
    for i in range(30):
        repo.write(f"pkg/f{i}.txt", f"{i}\n")
    repo.commit_all("many")
    for i in range(30):
        repo.write(f"pkg/f{i}.txt", f"changed {i}\n")
        repo.write(f"loose/u{i}.txt", f"u {i}\n")
    procs = [
        subprocess.Popen(
            ["git", "checkpoint", "save", "--task", task, "-m", task],
            cwd=repo.path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for task in ("alpha", "beta", "alpha", "beta")
    ]
    results = [(*p.communicate(timeout=120), p.returncode) for p in procs]
    assert all(rc == 0 for _, _, rc in results), results
    trees = {
        repo.git("rev-parse", f"{ref}^{{tree}}", f"{ref}^3^{{tree}}")
        for ref in repo.git("for-each-ref", "--format=%(refname)", "refs/checkpoints").split()
    }
    assert len(trees) == 1, trees  # the same workspace, the same W and U trees
    repo.git("fsck", "--strict", "--no-dangling")
    leftovers = [
        str(p)
        for p in (repo.path / ".git").rglob("*")
        if p.name.startswith(("tmp_obj_", ".trees.", ".paths.")) or "checkpoint-" in p.name
    ]
    assert not leftovers, leftovers
