"""The hook's auto-save imports the save path on a thread of its own while the quick
check's git children scan (core/preload), when a change is already in sight (a file the
last save found changed, or kept untracked, changed again): the save waits for that
thread before it imports anything itself, an unchanged workspace leaves at once without
it, and the thread changes nothing about Ctrl-C, broken imports or configs, concurrent
hooks and `save --auto`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from ..conftest import Repo
from ..launcher import REAL_GIT, scratch, wrapper_env

PROBE = """
import sys
from git_checkpoint.core import preload
from git_checkpoint.entry.hook import SAVE_MODULES
from git_checkpoint.fast import quickcheck
found = quickcheck.check('.', while_scanning=lambda: preload.start(*SAVE_MODULES))
preload.wait()
print(found is not None and found.unchanged)
print(all(m in sys.modules for m in SAVE_MODULES))
"""


def probe(repo: Repo) -> list[str]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=repo.path, capture_output=True, text=True,
        env=dict(os.environ), check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.split()


def test_the_save_path_is_imported_while_git_scans_when_a_change_is_in_sight(
    saved: Repo,
) -> None:
    assert probe(saved) == ["True", "False"]  # unchanged: nothing loaded for a save
    saved.write("src/app.py", "print('again')\n")  # changed at the last save, and again
    assert probe(saved) == ["False", "True"]


def test_a_kept_untracked_file_changed_again_is_a_change_in_sight(saved: Repo) -> None:
    saved.write("notes/todo.txt", "more untracked work\n")
    assert probe(saved) == ["False", "True"]


def test_a_change_out_of_sight_is_found_by_the_scan_alone(saved: Repo) -> None:
    """A file the last save did not see changed: the scan finds it, and the save imports
    its modules after it (nothing was loaded early)."""
    saved.write("notes/new.txt", "new work\n")
    assert probe(saved) == ["False", "False"]


def test_a_changed_workspace_saves_after_the_imports(saved: Repo) -> None:
    from .conftest import auto

    saved.write("src/app.py", "print('again')\n")
    name = auto(saved)
    assert name is not None and name.endswith("cp_002")
    assert auto(saved) is None


# --- the thread changes nothing around it -------------------------------------------------


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
    saved: Repo,
    tmp_path: Path,
) -> None:
    """Ctrl-C to the hook alone while the quick check's three git children run (status,
    config and the include listing, waited for in turn; `git config` here slowed to
    0.5 s): the hook says 'interrupted', saves nothing, and exits only once every one of
    its git children is done, the one still running too, not only the one it was
    waiting for when the Ctrl-C came."""
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


def test_save_path_imports_that_fail(saved: Repo, tmp_path: Path) -> None:
    """A broken module on PYTHONPATH: the thread's import fails (swallowed), the save's
    own import fails again and says so in one line. (The save imports neither PyYAML nor
    pygit2 when it writes its own kind of manifest; it always imports dataclasses.)"""
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "dataclasses.py").write_text("raise RuntimeError('broken dataclasses on PYTHONPATH')\n")
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


def test_a_broken_config_file_with_the_thread(saved: Repo) -> None:
    saved.write(".checkpoint.yaml", "verifiers: [\n  {name: : :\n")
    saved.write("src/app.py", "print('changed')\n")
    proc = hook(saved)
    assert proc.returncode == 0
    assert "Traceback" not in proc.stderr, proc.stderr
    warning, saved_line = proc.stderr.splitlines()  # the problem once, then the save
    assert ".checkpoint.yaml" in warning and "default settings" in warning
    assert saved_line.startswith("git-checkpoint: checkpoint saved: ")


def test_concurrent_hooks_on_one_repository(saved: Repo) -> None:
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


def test_the_guard_check_starts_no_thread(saved: Repo) -> None:
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


def test_save_auto_and_the_hook_agree(saved: Repo) -> None:
    assert hook(saved).stderr == ""  # unchanged: nothing said, nothing saved
    saved.write("src/app.py", "print('changed')\n")
    saved.cp("save", "--auto", "-m", "by hand")
    before = _refs(saved)
    assert hook(saved).stderr == ""
    assert _refs(saved) == before
