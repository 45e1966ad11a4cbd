"""Attacks on bcce093 (a restore that removes a `.gitattributes` stages the files it
writes against only the rules that stay) and 717ff32 (agent hooks start git's auto
maintenance in the background).

The oracle for what a restore writes is git itself: a fresh worktree of the checkpoint
commit, or `git read-tree -u --reset` of the target tree in a copy of the repository
taken just before the restore. Five findings were strict xfails until fixed: the
rules a restore changes are now written first and the files below them staged again
under them (materialize.restage), and a hook's save no longer asks for maintenance.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from .conftest import Repo
from .helpers import blob, fingerprint, forge_checkpoint, mktree, state
from .restore_oracle import as_git_writes, killed_run, read_tree_oracle, same_as

# --- helpers -------------------------------------------------------------------------


def _cp_commit(repo: Repo, name: str) -> str:
    return repo.git("rev-parse", f"refs/checkpoints/main/{name}").strip()


def _fresh_checkout(repo: Repo, commit: str, where: Path) -> dict[str, tuple[str, bytes, bool]]:
    """What `git checkout` of `commit` writes: a fresh detached worktree's files."""
    repo.git("worktree", "add", "-q", "--detach", str(where), commit)
    try:
        found = fingerprint(where)
    finally:
        repo.git("worktree", "remove", "--force", str(where))
    found.pop(".git", None)
    return found


# --- 1. a restore that removes a .gitattributes ---------------------------------------


def test_nested_rules_one_removed_one_kept_one_changed(repo: Repo, tmp_path: Path) -> None:
    repo.write(".gitattributes", "*.txt eol=crlf\n")
    repo.write("keep/.gitattributes", "*.txt ident\n")
    repo.write("chg/.gitattributes", "*.txt -text\n")
    for path in ("a.txt", "keep/b.txt", "chg/c.txt", "gone/d.txt"):
        repo.write(path, "x\n$Id$\n")
    repo.commit_all("rules")
    repo.cp("save", "-m", "target")
    repo.write("gone/.gitattributes", "*.txt -text\n")  # removed by the restore
    repo.write("chg/.gitattributes", "*.txt eol=lf\n")  # changed back by the restore
    for path in ("a.txt", "keep/b.txt", "chg/c.txt", "gone/d.txt"):
        repo.write(path, "y\n")
    repo.git("add", "-A")
    as_git_writes(repo)
    before = state(repo)
    repo.cp("restore", "cp_001")
    wanted = _fresh_checkout(repo, _cp_commit(repo, "cp_001"), tmp_path / "oracle")
    same_as(repo, wanted, list(wanted))
    assert not (repo.path / "gone/.gitattributes").exists()
    repo.cp("undo")
    assert state(repo) == before


def test_a_changed_rule_without_a_removal_applies_as_git_checkout(
    repo: Repo, tmp_path: Path
) -> None:
    """No rule file removed (attributes=None): the changed .gitattributes is staged."""
    repo.write(".gitattributes", "*.txt eol=crlf\n")
    repo.write("t.txt", "one\n")
    repo.commit_all("crlf")
    repo.cp("save", "-m", "target")
    repo.write(".gitattributes", "*.txt -text\n")
    repo.write("t.txt", "two\n")
    repo.git("add", "-A")
    repo.cp("restore", "cp_001")
    wanted = _fresh_checkout(repo, _cp_commit(repo, "cp_001"), tmp_path / "oracle")
    same_as(repo, wanted, ["t.txt", ".gitattributes"])


@pytest.mark.parametrize("kind", ["symlink", "folder"])
def test_a_target_rule_file_that_is_a_symlink_or_folder(
    repo: Repo, tmp_path: Path, kind: str
) -> None:
    repo.write("rules.txt", "*.txt eol=crlf\n")
    if kind == "symlink":
        os.symlink("rules.txt", repo.path / ".gitattributes")
    else:
        repo.write(".gitattributes/x", "*.txt eol=crlf\n")
    repo.write("sub/a.txt", "one\n")
    repo.commit_all("odd root rule")
    repo.cp("save", "-m", "target")
    repo.write("sub/.gitattributes", "*.txt eol=crlf\n")
    repo.write("sub/a.txt", "two\n")
    repo.git("add", "-A")
    repo.cp("restore", "cp_001")
    wanted = _fresh_checkout(repo, _cp_commit(repo, "cp_001"), tmp_path / "oracle")
    same_as(repo, wanted, list(wanted))


@pytest.mark.parametrize("how", ["filter", "ident", "encoding", "autocrlf", "info", "global"])
def test_removed_rule_with_other_conversions_still_applied(
    repo: Repo, tmp_path: Path, how: str
) -> None:
    git_dir = repo.path / ".git"
    if how == "filter":
        repo.git("config", "filter.up.smudge", "tr a-z A-Z")
        repo.git("config", "filter.up.clean", "tr A-Z a-z")
        repo.write(".gitattributes", "*.txt filter=up\n")
    elif how == "ident":
        repo.write(".gitattributes", "*.txt ident\n")
    elif how == "encoding":
        repo.write(".gitattributes", "*.txt working-tree-encoding=UTF-16LE eol=lf\n")
    elif how == "autocrlf":
        repo.git("config", "core.autocrlf", "true")
    elif how == "info":
        (git_dir / "info").mkdir(exist_ok=True)
        (git_dir / "info" / "attributes").write_text("*.txt eol=crlf\n")
    elif how == "global":
        rules = repo.path.parent / "global-attributes"
        rules.write_text("*.txt eol=crlf ident\n")
        repo.git("config", "core.attributesFile", str(rules))
    text = "héllo\n$Id$\n"
    data = text.encode("utf-16-le") if how == "encoding" else text.encode()
    repo.write("sub/a.txt", data)
    repo.write("b.txt", data)
    repo.commit_all("base")
    repo.cp("save", "-m", "target")
    repo.write("sub/.gitattributes", "*.txt -text -ident\n")
    repo.write("sub/a.txt", "two\n")
    repo.write("b.txt", "two\n")
    repo.git("add", "-A")
    repo.cp("restore", "cp_001")
    assert not (repo.path / "sub/.gitattributes").exists()
    wanted = _fresh_checkout(repo, _cp_commit(repo, "cp_001"), tmp_path / "oracle")
    same_as(repo, wanted, ["sub/a.txt", "b.txt"])


def test_a_smudge_filter_run_from_the_work_tree(repo: Repo, tmp_path: Path) -> None:
    """git runs a filter command in the work tree's top folder: a repository-local
    script (`sh tools/up.sh`) is found there."""
    repo.write("tools/up.sh", "tr a-z A-Z\n")
    repo.git("config", "filter.up.smudge", "sh tools/up.sh")
    repo.git("config", "filter.up.clean", "tr A-Z a-z")
    repo.write(".gitattributes", "*.txt filter=up\n")
    repo.write("a.txt", "hello\n")
    repo.commit_all("filter")
    repo.cp("save", "-m", "target")
    repo.write("sub/.gitattributes", "*.txt -text\n")
    repo.write("a.txt", "two\n")
    repo.git("add", "-A")
    wanted = read_tree_oracle(repo, _cp_commit(repo, "cp_001") + "^{tree}", tmp_path / "oracle")
    assert wanted["a.txt"][1] == b"HELLO\n"  # (a fresh worktree has no tools/up.sh yet)
    proc = repo.cp("restore", "cp_001")
    assert (repo.path / "a.txt").read_bytes() == b"HELLO\n", proc.stdout + proc.stderr


def test_an_ignored_rule_file_left_on_disk(repo: Repo, tmp_path: Path) -> None:
    """An ignored .gitattributes is not captured and stays on disk; git's checkout reads
    it (no tracked rule file in its folder)."""
    repo.write(".gitignore", "*.log\nlocal/.gitattributes\n")
    repo.write("local/a.txt", "one\n")
    repo.commit_all("ignored rules")
    repo.cp("save", "-m", "target")
    repo.write("local/.gitattributes", "*.txt eol=crlf\n")  # ignored
    repo.write("sub/.gitattributes", "*.txt -text\n")
    repo.write("local/a.txt", "two\n")
    repo.git("add", "-A")
    tree = repo.git("rev-parse", f"{_cp_commit(repo, 'cp_001')}^{{tree}}").strip()
    wanted = read_tree_oracle(repo, tree, tmp_path / "copy")
    repo.cp("restore", "cp_001")
    same_as(repo, wanted, ["local/a.txt", "local/.gitattributes"])


# --- hostile rule files in a forged (fetched) checkpoint ------------------------------


def _raw_tree(repo: Repo, entries: list[tuple[str, str, str]]) -> str:
    """A tree written byte for byte from (mode, name, id) rows: nothing is checked."""
    data = b"".join(
        m.encode() + b" " + os.fsencode(n) + b"\0" + bytes.fromhex(o)
        for m, n, o in sorted(entries, key=lambda e: e[1] + ("/" if e[0] == "40000" else ""))
    )
    return subprocess.run(
        ["git", "hash-object", "-t", "tree", "-w", "--literally", "--stdin"],
        cwd=repo.path, input=data, capture_output=True, check=True,
    ).stdout.decode().strip()  # fmt: skip


def _with_root_rule(repo: Repo) -> list[tuple[str, str, str]]:
    """HEAD gets a root .gitattributes (the forged target lacks it: the restore removes
    it); the rows of HEAD's tree without it."""
    repo.write(".gitattributes", "*.txt -text\n")
    repo.write("t.txt", "one\n")
    repo.commit_all("a root rule")
    rows = []
    for line in repo.git("ls-tree", "HEAD").splitlines():
        meta, name = line.split("\t", 1)
        mode, _, oid = meta.split(" ")
        if name != ".gitattributes":
            rows.append((mode.lstrip("0") if mode == "040000" else mode, name, oid))
    return rows


def _refused_cleanly(repo: Repo, proc: subprocess.CompletedProcess[str], code: int) -> None:
    assert proc.returncode == code, proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


MISSING = "1234567890123456789012345678901234567890"


@pytest.mark.parametrize("where", ["tracked", "overlay"])
def test_a_kept_rule_file_naming_a_missing_blob_stops_before_anything(
    repo: Repo, where: str
) -> None:
    rows = _with_root_rule(repo)
    sub = _raw_tree(repo, [("100644", ".gitattributes", MISSING)])
    if where == "tracked":
        forge_checkpoint(repo, _raw_tree(repo, [*rows, ("40000", "sub", sub)]))
    else:
        forge_checkpoint(repo, _raw_tree(repo, rows), _raw_tree(repo, [("40000", "sub", sub)]))
    repo.write("t.txt", "two\n")
    before = state(repo)
    proc = repo.cp("restore", "cp_099", expect=None)
    _refused_cleanly(repo, proc, 4 if proc.returncode == 4 else 3)
    assert state(repo) == before


def test_a_kept_rule_file_naming_a_tree_stops_before_anything(repo: Repo) -> None:
    rows = _with_root_rule(repo)
    sub = _raw_tree(repo, [("100644", ".gitattributes", mktree(repo, []))])
    forge_checkpoint(repo, _raw_tree(repo, [*rows, ("40000", "sub", sub)]))
    repo.write("t.txt", "two\n")
    before = state(repo)
    proc = repo.cp("restore", "cp_099", expect=None)
    _refused_cleanly(repo, proc, proc.returncode if proc.returncode in (3, 4) else -1)
    assert state(repo) == before


@pytest.mark.parametrize("folder", ["..", ".git", ".GIT", "."])
def test_a_rule_file_under_a_hostile_folder_is_refused(repo: Repo, folder: str) -> None:
    rows = _with_root_rule(repo)
    rule = blob(repo, b"* filter=evil\n")
    sub = _raw_tree(repo, [("100644", ".gitattributes", rule)])
    forge_checkpoint(repo, _raw_tree(repo, rows), _raw_tree(repo, [("40000", folder, sub)]))
    repo.write("t.txt", "two\n")
    before = state(repo)
    proc = repo.cp("restore", "cp_099", expect=None)
    _refused_cleanly(repo, proc, 3)
    assert state(repo) == before
    assert not (repo.path.parent / ".gitattributes").exists()
    assert not (repo.path / ".git" / ".gitattributes").exists()


def test_a_rule_file_both_tracked_and_a_folder_in_the_overlay(repo: Repo) -> None:
    rows = _with_root_rule(repo)
    rule = blob(repo, b"*.txt eol=crlf\n")
    tracked = _raw_tree(repo, [("100644", ".gitattributes", rule)])
    inner = _raw_tree(repo, [("100644", ".gitattributes", rule)])
    overlay = _raw_tree(
        repo, [("40000", "sub", _raw_tree(repo, [("40000", ".gitattributes", inner)]))]
    )
    forge_checkpoint(repo, _raw_tree(repo, [*rows, ("40000", "sub", tracked)]), overlay)
    repo.write("t.txt", "two\n")
    before = state(repo)
    proc = repo.cp("restore", "cp_099", expect=None)
    assert "Traceback" not in proc.stderr
    if proc.returncode != 0:
        _refused_cleanly(repo, proc, proc.returncode if proc.returncode in (3, 4) else -1)
        assert state(repo) == before


def test_a_huge_kept_rule_file(repo: Repo, tmp_path: Path) -> None:
    rows = _with_root_rule(repo)
    rule = blob(repo, b"# pad\n" * 400_000 + b"*.txt eol=crlf\n")
    sub = _raw_tree(
        repo, [("100644", ".gitattributes", rule), ("100644", "a.txt", blob(repo, b"x\n"))]
    )
    commit = forge_checkpoint(repo, _raw_tree(repo, [*rows, ("40000", "sub", sub)]))
    repo.write("t.txt", "two\n")
    repo.cp("restore", "cp_099")
    wanted = _fresh_checkout(repo, commit, tmp_path / "oracle")
    same_as(repo, wanted, ["sub/a.txt", "t.txt"])


# --- a restore that removes a rule file, killed at each git call, then --continue ----


def test_a_killed_rule_removing_restore_continues_or_undoes(repo: Repo, tmp_path: Path) -> None:
    repo.write(".gitattributes", "*.txt eol=crlf\n")
    repo.write("sub/a.txt", "one\n")
    repo.write("b.txt", "bee\n")
    repo.commit_all("rules")
    repo.cp("save", "-m", "target")
    repo.write("sub/.gitattributes", "*.txt -text\n")
    repo.write("sub/a.txt", "two\n")
    repo.write("b.txt", "two\n")
    repo.git("add", "-A")
    as_git_writes(repo)
    before = state(repo)
    template = tmp_path / "template"
    shutil.copytree(repo.path, template, symlinks=True)
    whole = tmp_path / "whole"
    shutil.copytree(template, whole, symlinks=True)
    code, calls = killed_run(whole, tmp_path, 0, "restore", "cp_001")
    assert code == 0
    after = state(Repo(whole))
    assert after[0]["sub/a.txt"][1] == b"one\r\n"
    bad = []
    for n in range(1, len(calls) + 1):
        for how in ("continue", "undo"):
            copy = tmp_path / f"k{n}{how}"
            shutil.copytree(template, copy, symlinks=True)
            code, _ = killed_run(copy, tmp_path, n, "restore", "cp_001")
            if code != -9:
                continue
            if how == "continue":
                done = Repo(copy).cp("restore", "--continue", expect=None)
                got = state(Repo(copy))
                if not (got == after or (done.returncode == 2 and got == before)):
                    bad.append((n, how, calls[n - 1], done.returncode, done.stderr))
            else:
                done = Repo(copy).cp("undo", expect=None)
                if state(Repo(copy)) != before and done.returncode != 2:
                    bad.append((n, how, calls[n - 1], done.returncode, done.stderr))
            shutil.rmtree(copy)
    assert bad == []


def test_the_kept_rule_files_are_read_in_a_few_processes(repo: Repo, tmp_path: Path) -> None:
    for n in range(60):
        repo.write(f"d{n}/.gitattributes", "*.txt ident\n")
    repo.write("t.txt", "one\n")
    repo.commit_all("many rule files")
    repo.cp("save", "-m", "target")
    repo.write(".gitattributes", "*.txt -text\n")
    repo.write("t.txt", "two\n")
    repo.git("add", "-A")
    trace = tmp_path / "trace"
    repo.cp("restore", "cp_001", env={"GIT_TRACE": str(trace)})
    runs = [
        line for line in trace.read_text().splitlines() if "built-in: git cat-file blob" in line
    ]
    assert len(runs) <= 5


# --- 2. auto maintenance in the background of an agent hook ----------------------------

SLOW_PRUNE = r"""#!/bin/sh
# a slow pack-refs: the prune of the packed loose refs/heads/main holds its lock 3 s
[ "$1" = prepared ] || exit 0
if grep -q " 0\{40\} refs/heads/main$"; then sleep 3; fi
exit 0
"""


def _loose_17(repo: Repo, count: int) -> None:
    """`count` loose objects in objects/17 (git's gc --auto sample folder)."""
    import hashlib

    n = 0
    while count:
        data = f"seventeen {n}\n".encode()
        n += 1
        if hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest().startswith("17"):
            blob(repo, data)
            count -= 1


def _agent_hook(repo: Repo) -> subprocess.CompletedProcess[str]:
    import json

    payload = {
        "session_id": "s",
        "cwd": str(repo.path),
        "hook_event_name": "PreToolUse",
        "tool_name": "Bash",
        "tool_input": {"command": "git reset --hard"},
    }
    return subprocess.run(
        ["git-checkpoint-hook", "claude-code", "PreToolUse"], input=json.dumps(payload),
        cwd=repo.path, capture_output=True, text=True, check=False, timeout=60,
    )  # fmt: skip


def _settle(repo: Repo) -> None:
    import time

    git_dir = repo.path / ".git"
    for _ in range(100):
        if not list(git_dir.rglob("*.lock")) and not (git_dir / "gc.pid").exists():
            return
        time.sleep(0.1)


def test_the_agents_next_git_command_does_not_meet_maintenances_ref_locks(repo: Repo) -> None:
    repo.git("config", "gc.auto", "256")
    repo.git("config", "gc.pruneExpire", "now")
    hook = repo.path / ".git" / "hooks" / "reference-transaction"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(SLOW_PRUNE)
    hook.chmod(0o755)
    _loose_17(repo, 3)
    repo.write("a.txt", "work\n")
    try:
        proc = _agent_hook(repo)
        assert proc.returncode == 0 and "checkpoint saved" in proc.stderr, proc.stderr
        import time

        time.sleep(0.5)  # the agent's command starts (pack-refs is under way)
        repo.git("add", "-A")
        repo.git("-c", "maintenance.auto=false", "commit", "-q", "-m", "the agent's commit")
    finally:
        _settle(repo)


def test_no_leftover_processes_after_the_hooks_maintenance(repo: Repo) -> None:
    """Hook, then a CLI save, five times, with maintenance due each time: once settled,
    no git process of this repository is left, none a zombie, and the repository is sound."""
    repo.git("config", "gc.auto", "256")
    repo.git("config", "gc.pruneExpire", "now")
    for n in range(5):
        _loose_17(repo, 3)
        repo.write(f"n{n}.txt", f"{n}\n")
        proc = _agent_hook(repo)
        assert proc.returncode == 0 and "checkpoint saved" in proc.stderr, proc.stderr
        repo.cp("save", "-m", f"cli {n}")
    _settle(repo)
    ps = subprocess.run(["ps", "-eo", "stat=,ppid=,args="], capture_output=True, text=True).stdout
    zombies = [line.split() for line in ps.splitlines() if line.startswith("Z") and "git" in line]
    # Ours would be this test's children (orphans belong to init, which reaps them
    # lazily on this VM; other tests' processes run beside this one under xdist).
    assert [z for z in zombies if z[1] == str(os.getpid())] == []
    assert repo.git("fsck", "--strict", "--no-dangling") == ""
