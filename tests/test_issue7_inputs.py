"""Regressions for issue 7, the input side: sparse checkouts, conflicted merges, two run
loops, hostile configs and manifests, secret names and one-line errors. Each test is
named after what broke.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from .conftest import Repo, make_repo
from .helpers import state
from .test_verify import configure, verifier


def test_sparse_checkout_file_outside_the_cone_on_disk_is_captured(repo: Repo) -> None:
    repo.write("far/away.txt", "v1\n")
    repo.commit_all("far")
    repo.git("sparse-checkout", "set", "src")
    assert not (repo.path / "far" / "away.txt").exists()
    repo.cp("save", "-m", "sparse")
    # Put back by hand (git >= 2.37 then clears its skip-worktree bit) and edited.
    repo.write("far/away.txt", "MY EDIT OUTSIDE THE CONE\n")
    drift = repo.cp_json("status")["drift"]
    assert drift == ["far/away.txt"]
    assert "checkpoint saved: cp_002" in repo.cp("save", "-m", "edit").stdout
    assert repo.git("show", "refs/checkpoints/main/cp_002:far/away.txt") == (
        "MY EDIT OUTSIDE THE CONE\n"
    )
    edited = state(repo)
    repo.cp("restore", "cp_001")
    assert (repo.path / "far" / "away.txt").read_text() != "MY EDIT OUTSIDE THE CONE\n"
    repo.cp("undo")
    assert (repo.path / "far" / "away.txt").read_text() == "MY EDIT OUTSIDE THE CONE\n"
    assert state(repo)[0] == edited[0]


def _conflicted_merge(repo: Repo) -> None:
    repo.git("checkout", "-qb", "other")
    repo.write("src/app.py", "print('theirs')\n")
    repo.commit_all("theirs")
    repo.git("checkout", "-q", "main")
    repo.write("src/app.py", "print('ours')\n")
    repo.commit_all("ours")
    repo.cp("save", "-m", "before the merge")
    repo.git("merge", "-q", "other", check=False)
    assert repo.git("ls-files", "-u")  # conflicted


def test_read_only_commands_work_during_a_conflicted_merge(repo: Repo) -> None:
    _conflicted_merge(repo)
    before = state(repo), repo.git("ls-files", "-s", "--stage")
    assert repo.cp_json("status")["drift"] == ["src/app.py"]
    assert [f["path"] for f in repo.cp_json("diff")["files"]] == ["src/app.py"]
    assert repo.cp_json("resume")["files_under_active_edit"] == ["src/app.py"]
    for command in (["list"], ["show"], ["log"]):
        repo.cp(*command)
    proc = repo.cp("save", expect=3)
    assert "unmerged" in proc.stderr and len(proc.stderr.splitlines()) == 1
    assert (state(repo), repo.git("ls-files", "-s", "--stage")) == before  # index untouched


def _one_line_error(proc: subprocess.CompletedProcess[str]) -> str:
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    return lines[0]


@pytest.mark.parametrize("kind", ["symlink to /dev/zero", "fifo", "folder", "huge", "symlink"])
def test_config_that_is_not_a_small_regular_file_is_a_fast_one_line_error(
    repo: Repo, kind: str
) -> None:
    path = repo.path / ".checkpoint.yaml"
    if kind == "symlink to /dev/zero":
        path.symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    elif kind == "huge":
        path.write_text("# padding\n" * 200_000)
    else:  # even to a good config: a checkpoint could point it anywhere
        (repo.path / "real.yaml").write_text("promotion_rule: all_pass\n")
        path.symlink_to("real.yaml")
    started = time.monotonic()
    proc = repo.cp("status", expect=2, timeout=20)
    assert time.monotonic() - started < 10
    assert ".checkpoint.yaml" in _one_line_error(proc)


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e999"])
def test_lock_timeout_nan_or_inf_is_bad_input(repo: Repo, value: str) -> None:
    repo.git("config", "checkpoint.lockTimeout", value)
    assert "locktimeout" in _one_line_error(repo.cp("save", expect=2))


@pytest.mark.parametrize("value", [".nan", ".inf", "-.inf"])
def test_verifier_timeout_nan_or_inf_is_bad_input(repo: Repo, value: str) -> None:
    repo.write(
        ".checkpoint.yaml",
        f"verifiers:\n  - name: unit\n    command: 'true'\n    timeout: {value}\n",
    )
    assert "timeout" in _one_line_error(repo.cp("verify", expect=2))


def test_overlay_limit_of_infinite_files_is_bad_input(repo: Repo) -> None:
    repo.git("config", "checkpoint.overlayMaxFiles", "inf")
    assert "overlaymaxfiles" in _one_line_error(repo.cp("save", expect=2))


def test_verifier_command_with_a_nul_byte_is_bad_input(repo: Repo) -> None:
    repo.write(".checkpoint.yaml", 'verifiers:\n  - name: unit\n    command: "echo\\0hi"\n')
    assert "NUL" in _one_line_error(repo.cp("verify", expect=2))


def _forge_manifest(repo: Repo, cp_id: str, extra_yaml: str) -> None:
    """A stash-shaped checkpoint whose manifest ends with `extra_yaml`, as a remote could."""
    head = repo.git("rev-parse", "HEAD").strip()
    index = repo.git("commit-tree", f"{head}^{{tree}}", "-p", head, "-m", "index").strip()
    message = (
        f"checkpoint {cp_id} on main: forged\n\nbase_commit: {head}\ntask: main\n"
        f"checkpoint_id: {cp_id}\nauto: false\n{extra_yaml}"
    )
    commit = repo.git(
        "commit-tree", f"{head}^{{tree}}", "-p", head, "-p", index, input=message.encode()
    ).strip()
    repo.git("update-ref", f"refs/checkpoints/main/{cp_id}", commit)


def test_yaml_alias_bomb_in_a_manifest_is_refused_fast(repo: Repo) -> None:
    rows = ['l0: &l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    rows += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 10)]
    _forge_manifest(repo, "cp_050", "\n".join(rows) + "\nnotes: *l9\n")
    started = time.monotonic()
    proc = repo.cp("show", "cp_050", "--json", expect=2, timeout=30)
    assert "alias" in proc.stderr + proc.stdout
    listed = repo.cp_json("list", expect=0)["checkpoints"]
    assert "malformed" in listed[0]["message"]
    repo.cp("status")
    repo.cp("review", "--format", "json")
    assert time.monotonic() - started < 15


@pytest.mark.parametrize(
    "field", ["verifiers: 7", "notes: {a: 1}", "overlay: [1]", "created_at: [x]", "auto: [1]"]
)
def test_manifest_field_of_the_wrong_type_is_malformed_not_a_crash(repo: Repo, field: str) -> None:
    repo.cp("save", "-m", "mine")
    _forge_manifest(repo, "cp_051", field + "\n")
    _one_line_error(repo.cp("show", "cp_051", expect=2))
    listed = repo.cp_json("list")["checkpoints"]
    assert [c["id"] for c in listed] == ["cp_001", "cp_051"]
    assert "malformed" in listed[1]["message"]
    repo.cp("status")
    repo.cp("resume")
    repo.cp("show", "cp_001")
    for fmt in ("text", "markdown", "json"):
        repo.cp("review", "--format", fmt)


def test_second_run_loop_on_one_worktree_refuses_while_the_first_is_alive(
    repo: Repo, tmp_path: Path
) -> None:
    configure(repo, verifier("unit", "true"))
    started, release = tmp_path / "started", tmp_path / "release"
    agent = tmp_path / "agent.sh"
    agent.write_text(
        f"echo attempt > work.txt; touch {started}\nwhile [ ! -f {release} ]; do sleep 0.05; done\n"
    )
    first = subprocess.Popen(
        ["git", "checkpoint", "run", "--attempts", "1", "--", "sh", str(agent)],
        cwd=repo.path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while not started.exists():
            assert first.poll() is None, first.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.05)
        refs = repo.git("for-each-ref", "refs/checkpoints/")
        proc = repo.cp(
            "run", "--attempts", "1", "--", "sh", "-c", "echo other > other.txt", expect=3
        )
        assert "another `git checkpoint run`" in _one_line_error(proc)
        assert not (repo.path / "other.txt").exists()
        assert repo.git("for-each-ref", "refs/checkpoints/") == refs  # nothing saved
    finally:
        release.touch()
        out, err = first.communicate(timeout=60)
    assert first.returncode == 0, out + err
    assert (repo.path / "work.txt").read_text() == "attempt\n"
    repo.cp("run", "--attempts", "1", "--", "true")  # the lock went with the first loop


SECRET_NAMES = [
    ".ENV",
    ".Env.Local",
    "deploy/prod.env",
    ".aws/credentials",
    "home/.AWS/Credentials",
    ".npmrc",
    ".pypirc",
    ".netrc",
    ".git-credentials",
    "config/credentials.json",
    "certs/server.pem.bak",
    "certs/client.P12",
    "certs/site.key",
    "certs/site.pfx",
    "certs/store.jks",
    "keys/id_rsa",
    "keys/ID_ED25519.pub",
    "keys/id_ecdsa",
    "config/secrets.yml",
    "config/secrets.yaml",
    "vault.kdbx",
    "gcp/my-service-account.json",
]


def test_secret_names_are_matched_case_insensitively_from_a_wider_list(repo: Repo) -> None:
    for name in SECRET_NAMES:
        repo.write(name, "TOKEN=hunter2\n")
    repo.write("notes/plain.txt", "not a secret\n")
    saved = repo.cp_json("save")
    assert sorted(saved["secrets_left_out"]) == sorted(SECRET_NAMES)
    stored = repo.git("ls-tree", "-r", "--name-only", "refs/checkpoints/main/cp_001^3")
    assert stored.split() == ["notes/plain.txt"]


def test_restore_and_undo_never_touch_secret_looking_files(repo: Repo) -> None:
    repo.cp("save", "-m", "before the secrets")
    for name in (".ENV", ".aws/credentials", "credentials.json", "server.pem.bak"):
        repo.write(name, f"secret of {name}\n")
    repo.write("work.txt", "work\n")
    with_secrets = state(repo)
    out = repo.cp("restore", "cp_001").stdout
    assert "removed: work.txt" in out
    for name in (".ENV", ".aws/credentials", "credentials.json", "server.pem.bak"):
        assert (repo.path / name).read_text() == f"secret of {name}\n"
    repo.cp("undo")
    assert state(repo) == with_secrets


def test_readme_lists_exactly_the_secret_patterns() -> None:
    from git_checkpoint.config.model import SECRET_PATTERNS

    readme = (Path(__file__).parent.parent / "README.md").read_text()
    block = readme.split("the others the file name:")[1].split("(Tracked")[0]
    assert re.findall(r"`([^`]+)`", block) == list(SECRET_PATTERNS)


def test_a_5000_character_task_is_bad_input(repo: Repo) -> None:
    assert "at most" in _one_line_error(repo.cp("save", "--task", "t" * 5000, expect=2))
    assert repo.git("for-each-ref", "refs/checkpoints/") == ""


def test_a_long_branch_gives_a_short_task_that_still_tells_branches_apart(repo: Repo) -> None:
    names = ["feature/" + "x" * 150 + "/" + "y" * 150 + suffix for suffix in ("/one", "/two")]
    tasks = []
    for name in names:
        repo.git("checkout", "-qb", name)
        repo.write("src/app.py", f"print({name[-3:]!r})\n")
        tasks.append(repo.cp_json("save")["task"])
    assert len(set(tasks)) == 2 and all(len(t) <= 200 for t in tasks)


needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or not shutil.which("chattr"),
    reason="root ignores permissions: the test needs root and chattr for an immutable flag",
)


@contextlib.contextmanager
def _immutable(path: Path) -> Iterator[None]:
    if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0:
        pytest.skip(f"this file system takes no immutable flag ({path})")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


@needs_root
@pytest.mark.parametrize("where", [".git", ".git/checkpoint"])
def test_permission_error_in_the_git_dir_is_one_line_exit_4(repo: Repo, where: str) -> None:
    repo.cp("save", "-m", "one")
    repo.write("src/app.py", "print('edited')\n")
    before = state(repo)
    refs = repo.git("for-each-ref", "refs/checkpoints/")
    with _immutable(repo.path / where):
        line = _one_line_error(repo.cp("save", expect=4))
        assert "Operation not permitted" in line and "lsattr" in line
        if where == ".git":  # status needs a scratch index there; .git/checkpoint it only reads
            assert "lsattr" in _one_line_error(repo.cp("status", expect=4))
        else:
            repo.cp("status")
    assert state(repo) == before
    assert repo.git("for-each-ref", "refs/checkpoints/") == refs  # no checkpoint half made


@needs_root
def test_permission_error_on_an_immutable_folder_during_restore_is_one_line(repo: Repo) -> None:
    repo.cp("save", "-m", "one")
    repo.write("src/app.py", "print('edited')\n")
    before = state(repo)
    # The file too: a file in an immutable folder can still be written over in place.
    with _immutable(repo.path / "src"), _immutable(repo.path / "src/app.py"):
        proc = repo.cp("restore", "cp_001", expect=None)
        assert proc.returncode in (3, 4)
        _one_line_error(proc)
    assert state(repo) == before


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A 2 MiB tmpfs: the repository goes in it, and it is filled up later."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs to fill needs root")
    mount = tmp_path / "small"
    mount.mkdir()
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True
    )
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.decode().strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=True)


def test_no_space_left_during_save_is_one_line_exit_4(full_disk: Path) -> None:
    repo = make_repo(full_disk / "work")
    repo.write("src/app.py", "print('hello')\n")
    repo.commit_all("initial")
    repo.cp("save", "-m", "one")
    repo.write("src/app.py", "print('edited')\n")
    with open(full_disk / "filler", "wb") as fh, contextlib.suppress(OSError):
        while True:
            fh.write(b"\0" * 65536)
    before = state(repo)
    refs = repo.git("for-each-ref", "refs/checkpoints/")
    line = _one_line_error(repo.cp("save", "-m", "two", expect=4))
    # Ours (an OSError) or git's own words, as whichever write meets the full disk first
    # (the scratch index is a link now: the first write is git's, refreshing it).
    assert "No space left on device" in line or "Out of diskspace" in line, line
    assert state(repo) == before
    assert repo.git("for-each-ref", "refs/checkpoints/") == refs


@pytest.mark.parametrize("kind", ["fifo", "symlink to /dev/zero"])
def test_task_record_that_is_not_a_regular_file_never_hangs(repo: Repo, kind: str) -> None:
    repo.cp("save", "--hypothesis", "h")
    record = repo.path / ".git" / "checkpoint" / "tasks" / "main.yaml"
    record.unlink()
    if kind == "fifo":
        os.mkfifo(record)
    else:
        record.symlink_to("/dev/zero")
    started = time.monotonic()
    assert "task: main" in repo.cp("status", timeout=20).stdout
    repo.cp("resume", timeout=20)
    assert time.monotonic() - started < 10
