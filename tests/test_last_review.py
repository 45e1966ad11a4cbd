"""Review of 981e84d (diff-tree against an index that is not there), 7db7742 (an `id` on
each note line) and 4d452f8 (the hook imports the save path on a thread of its own).

What held: the two diff-tree calls give the same answer with the empty index as with
the real one (submodules whose .gitmodules is in the index alone, with ignore=all, an
intent-to-add entry, sparse checkout); old note lines without `id` mixed with new ones
read as before (status, show, list, review, a push/fetch round trip), and no human
output shows an id; the hook's thread: a Ctrl-C while git scans, save-path imports that
fail, concurrent hooks. What did not: see test_a_file_where_the_no_index_folder_goes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from git_checkpoint.gitcore.repo import Repo as GitRepo
from git_checkpoint.restore import plan as restore
from git_checkpoint.save import secrets as secrets_scan
from git_checkpoint.storage import notes

from .conftest import Repo, make_repo
from .test_direct_attacks import REAL_GIT, scratch, wrapper_env
from .test_quicksave import saved  # noqa: F401 - the fixture

# --- 981e84d: diff-tree with an empty index ---------------------------------------------


def _submodule_trees(repo: Repo, tmp_path: Path) -> tuple[str, str]:
    """Two trees that differ in a gitlink, a regular file and an added file; .gitmodules
    (ignore = all) is in the index alone, and the repository's config says ignore too."""
    sub = make_repo(tmp_path / "sub")
    sub.write("s.txt", "one\n")
    first = sub.commit_all("one")
    sub.write("s.txt", "two\n")
    second = sub.commit_all("two")
    gitmodules = '[submodule "m"]\n\tpath = mod\n\turl = ../sub\n\tignore = all\n'
    repo.write(".gitmodules", gitmodules)
    repo.git("add", ".gitmodules")
    repo.git("update-index", "--add", "--cacheinfo", f"160000,{first},mod")
    old = repo.git("write-tree").strip()
    repo.git("update-index", "--cacheinfo", f"160000,{second},mod")
    repo.write("README.md", "changed\n")
    repo.write("added.txt", "token = 'x'\n")
    repo.git("add", "README.md", "added.txt")
    new = repo.git("write-tree").strip()
    (repo.path / ".gitmodules").unlink()  # in the index alone now
    repo.git("config", "submodule.m.ignore", "all")
    repo.write("ita.txt", "later\n")
    repo.git("add", "-N", "ita.txt")
    return old, new


def test_diff_tree_answers_alike_with_the_empty_index(repo: Repo, tmp_path: Path) -> None:
    old, new = _submodule_trees(repo, tmp_path)
    found = GitRepo.discover(repo.path)
    argv = ["diff-tree", "-r", "-z", "--no-renames", "--ignore-submodules=none", "--raw"]
    assert found.git(*argv, old, new) == found.git(*argv, old, new, env=found.no_index())
    changes = restore._changes(found, old, new)
    assert set(changes) == {"README.md", "added.txt", "mod"}
    assert changes["added.txt"][0] is None and changes["added.txt"][1] is not None
    assert changes["mod"][1] == (0o160000, repo.git("rev-parse", f"{new}:mod").strip())
    # the secrets scan's diff-tree has no --ignore-submodules: there the empty index
    # shows the gitlink that .gitmodules in the real index hides, and the scan drops
    # gitlinks anyway, so its answer is the same
    stdin = f"{old} {new}\n{new} {new}\n{old} {new}\n".encode()
    many = ("diff-tree", "--stdin", "-r", "-z", "--no-renames")
    real = found.git(*many, stdin=stdin)
    empty = found.git(*many, stdin=stdin, env=found.no_index())
    assert b"160000" not in real and b"160000" in empty
    got = secrets_scan.changed_files_many(found, [(old, new), (new, new), (old, new)])
    assert [sorted(p for p, _, _ in pair) for pair in got] == [
        ["README.md", "added.txt"],
        [],
        ["README.md", "added.txt"],
    ]
    assert not (repo.path / ".git" / "checkpoint" / "no-index").exists()  # never written


def test_sparse_checkout_restore_uses_the_tree_diff(repo: Repo) -> None:
    repo.write("keep/a.txt", "a\n")
    repo.write("away/b.txt", "b\n")
    repo.commit_all("two folders")
    repo.cp("save", "-m", "one")
    repo.git("sparse-checkout", "set", "keep")
    repo.write("keep/a.txt", "edited\n")
    repo.cp("restore", "cp_001", expect=None)
    assert (repo.path / "keep" / "a.txt").read_text() == "a\n"


def test_a_file_where_the_no_index_folder_goes(repo: Repo) -> None:
    """BREAK (low severity): <git dir>/checkpoint/no-index is a file (anything may put
    one there, or an older tool's cache of that name). git opens
    .../no-index/index, gets ENOTDIR, not ENOENT, and dies 'index file open failed:
    Not a directory': the restore, which needed no index at all, refuses (exit 3)
    with 'unsafe checkpoint main/cp_001: unreadable tree', blaming a sound checkpoint.
    Before 981e84d it read the real index and worked."""
    repo.cp("save", "-m", "one")
    repo.write("README.md", "changed\n")
    (repo.path / ".git" / "checkpoint").mkdir(exist_ok=True)
    (repo.path / ".git" / "checkpoint" / "no-index").write_text("not a folder\n")
    proc = repo.cp("restore", "cp_001", expect=None)
    assert proc.returncode == 0, proc.stderr
    assert (repo.path / "README.md").read_text() != "changed\n"


# --- 7db7742: note lines with and without an id -----------------------------------------


def _old_lines(repo: Repo, commit: str, *events: Any) -> None:
    """Note lines as versions before 7db7742 wrote them: no `id`."""
    text = "".join(json.dumps(e, sort_keys=True) + "\n" for e in events)
    repo.git("notes", f"--ref={notes.NOTES_REF}", "add", "-f", "-m", text.rstrip("\n"), commit)


def test_old_lines_without_id_mixed_with_new_ones(repo: Repo) -> None:
    repo.cp("save", "-m", "one")
    commit = repo.git("rev-parse", "refs/checkpoints/main/cp_001").strip()
    at = "2026-01-01T00:00:00Z"
    verifier = {"at": at, "event": "verifier", "name": "unit", "status": "failed",
                "exit_code": 1, "duration_s": 0.5, "where": "here", "required": True,
                "command": "false", "output_tail": ""}  # fmt: skip
    _old_lines(repo, commit, verifier, {"at": at, "event": "rejected", "reason": "old"})
    record = notes.append_event(
        GitRepo.discover(repo.path), commit, {"event": "promoted", "rule": "manual"}
    )
    assert len(record["id"]) == 12
    events = notes.read_events(GitRepo.discover(repo.path), commit)
    assert [e.get("event") for e in events] == ["verifier", "rejected", "promoted"]
    assert notes.derive_status(events) == "promoted"
    assert notes.verifier_summary(events) == {"unit": "failed"}
    shown = repo.cp_json("show", "cp_001")
    assert shown["status"] == "promoted"
    listed = repo.cp_json("list")["checkpoints"]
    assert [c["status"] for c in listed] == ["promoted"]
    human = repo.cp("show", "cp_001").stdout + repo.cp("list").stdout
    human += repo.cp("review", expect=None).stdout + repo.cp("status", expect=None).stdout
    assert record["id"] not in human


def test_old_and_new_lines_survive_a_push_and_fetch(repo: Repo, tmp_path: Path) -> None:
    origin = tmp_path / "origin.git"
    subprocess.run([REAL_GIT, "init", "-q", "--bare", str(origin)], check=True)
    repo.git("remote", "add", "origin", str(origin))
    repo.cp("save", "-m", "one")
    commit = repo.git("rev-parse", "refs/checkpoints/main/cp_001").strip()
    old = {"at": "2026-01-01T00:00:00Z", "event": "rejected", "reason": "old"}
    _old_lines(repo, commit, old)
    repo.cp("push", "origin", expect=None)
    new = notes.append_event(GitRepo.discover(repo.path), commit, {"event": "promoted"})
    repo.cp("push", "origin", expect=None)
    repo.cp("fetch", "origin", expect=None)
    repo.cp("push", "origin", expect=None)  # twice round: nothing doubles
    text = repo.git("notes", f"--ref={notes.NOTES_REF}", "show", commit)
    lines = [json.loads(x) for x in text.splitlines() if x.strip()]
    assert old in lines and new in lines
    assert len(lines) == len({json.dumps(x, sort_keys=True) for x in lines})


# --- 4d452f8: the hook's import thread ----------------------------------------------------


def hook(repo: Repo, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The hook, with Ctrl-C at its default: a pytest started in the background by a
    shell (`pytest &`) ignores SIGINT, and its children would inherit that."""
    import signal

    data = json.dumps({"cwd": str(repo.path), "prompt": "go", "session_id": "s"})
    return subprocess.run(
        ["git-checkpoint-hook", "claude-code", "UserPromptSubmit"], input=data,
        cwd=repo.path, capture_output=True, text=True, timeout=60,
        env={**os.environ, **(env or {})}, check=False, start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip


def _refs(repo: Repo) -> list[str]:
    return repo.git("for-each-ref", "--format=%(refname)", "refs/checkpoints/").split()


def test_ctrl_c_while_the_quick_scan_and_the_imports_run(
    saved: Repo,  # noqa: F811
    tmp_path: Path,
) -> None:
    """BREAK (likely older than 4d452f8): Ctrl-C to the hook alone while the quick
    check's three git children run. check() spawns status, config and the include
    listing, then waits on each in turn; the KeyboardInterrupt raised in the first wait
    lets Spawned.finish wait for that child only. The hook says 'interrupted' and exits
    while `git config` (here slowed to 0.5 s) still runs: a git child left behind.
    Nothing around the Spawned objects in check() waits for the others on the way out."""
    saved.write("src/app.py", "print('changed')\n")
    before = _refs(saved)
    mark = tmp_path / "config-done"
    body = (
        'case " $* " in *" config -z "*) kill -INT $PPID; sleep 0.5; "$REAL" "$@"; rc=$?;'
        ' touch "$MARK"; exit $rc;; esac'
    )
    env = wrapper_env(tmp_path, body, REAL=REAL_GIT, MARK=str(mark))
    proc = hook(saved, env)
    assert (proc.returncode, proc.stderr) == (
        0,
        "git-checkpoint: interrupted; no checkpoint saved\n",
    )
    left = not mark.exists()
    time.sleep(1)
    assert _refs(saved) == before
    assert scratch(saved) == []
    assert not left, "the hook left while its git config still ran"


def test_save_path_imports_that_fail(saved: Repo, tmp_path: Path) -> None:  # noqa: F811
    """A broken module on PYTHONPATH: the thread's import fails (swallowed), the save's
    own import fails again and says so in one line."""
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "yaml.py").write_text("raise RuntimeError('broken yaml on PYTHONPATH')\n")
    (bad / "pygit2.py").write_text("raise RuntimeError('broken pygit2 on PYTHONPATH')\n")
    saved.write("src/app.py", "print('changed')\n")
    before = _refs(saved)
    proc = hook(saved, {"PYTHONPATH": str(bad)})
    assert proc.returncode == 0
    assert "Traceback" not in proc.stderr and len(proc.stderr.splitlines()) == 1, proc.stderr
    assert "broken" in proc.stderr
    assert _refs(saved) == before and scratch(saved) == []
    proc = hook(saved)  # and without them it saves
    assert proc.returncode == 0 and "checkpoint saved" in proc.stderr, proc.stderr


def test_a_broken_config_file_with_the_thread(saved: Repo) -> None:  # noqa: F811
    saved.write(".checkpoint.yaml", "verifiers: [\n  {name: : :\n")
    saved.write("src/app.py", "print('changed')\n")
    proc = hook(saved)
    assert proc.returncode == 0
    assert "Traceback" not in proc.stderr and len(proc.stderr.splitlines()) <= 1, proc.stderr


def test_concurrent_hooks_on_one_repository(saved: Repo) -> None:  # noqa: F811
    saved.write("src/app.py", "print('changed')\n")
    before = len(_refs(saved))
    data = json.dumps({"cwd": str(saved.path), "prompt": "go", "session_id": "s"})
    procs = [
        subprocess.Popen(
            ["git-checkpoint-hook", "claude-code", "UserPromptSubmit"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=saved.path,
            text=True,
        )
        for _ in range(4)
    ]
    outs = [p.communicate(data, timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0] * 4
    for _, err in outs:
        assert "Traceback" not in err and len(err.splitlines()) <= 1, err
    assert len(_refs(saved)) == before + 1  # one save; the others found it unchanged
    assert scratch(saved) == []


def test_the_guard_check_starts_no_thread(saved: Repo) -> None:  # noqa: F811
    code = (
        "import sys\nfrom git_checkpoint.core import preload\n"
        "from git_checkpoint.fast import quickcheck\n"
        "print(quickcheck.quick_unchanged('.'), preload._LOADING,"
        " 'git_checkpoint.storage.refs' in sys.modules)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=saved.path, capture_output=True, text=True,
        check=False, timeout=60,
    )  # fmt: skip
    assert proc.stdout.split() == ["True", "[]", "False"], proc.stderr


def test_save_auto_and_the_hook_agree(saved: Repo) -> None:  # noqa: F811
    assert hook(saved).stderr == ""  # unchanged: nothing said, nothing saved
    saved.write("src/app.py", "print('changed')\n")
    saved.cp("save", "--auto", "-m", "by hand")
    before = _refs(saved)
    assert hook(saved).stderr == ""
    assert _refs(saved) == before
