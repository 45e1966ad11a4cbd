"""Regressions for what an adversarial review found: each of these once lost work,
crashed, or said `clean` when it was not.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import Repo, make_repo
from .helpers import blob, forge_checkpoint, mktree, state
from .test_verify import configure, verifier


@pytest.mark.parametrize("mark", ["--skip-worktree", "--assume-unchanged"])
def test_marked_entries_are_captured_and_keep_their_mark(repo: Repo, mark: str) -> None:
    repo.write("conf", "v1\n")
    repo.commit_all("conf")
    repo.cp("save", "-m", "one")
    repo.git("update-index", mark, "conf")
    repo.write("conf", "MY PRECIOUS LOCAL EDIT\n")
    repo.cp("save", "-m", "edit")  # not "unchanged": the edit is work
    assert repo.git("show", "refs/checkpoints/main/cp_002:conf") == "MY PRECIOUS LOCAL EDIT\n"
    before = state(repo)
    flags = repo.git("ls-files", "-v", "conf")
    repo.cp("restore", "cp_001")
    assert (repo.path / "conf").read_text() == "v1\n"
    repo.cp("undo")
    assert state(repo) == before
    assert repo.git("ls-files", "-v", "conf") == flags


def test_residue_uncovered_by_restored_ignore_rules_is_swept_and_undoable(repo: Repo) -> None:
    repo.cp("save", "-m", "A")
    good = state(repo)
    repo.write(".gitignore", "*.log\nnode_modules/\n*.tmp\n")  # the attempt ignores its junk
    repo.write("junk.tmp", "residue\n")
    repo.write("keep.log", "ignored before and after\n")
    messy = state(repo)
    out = repo.cp("restore").stdout
    assert "removed: junk.tmp" in out and "workspace matches" in out
    after = state(repo)
    assert {k: v for k, v in after[0].items() if k != "keep.log"} == good[0]
    assert after[1] == good[1]
    repo.cp("status", "--exit-code")  # no drift left behind
    repo.cp("undo")
    assert state(repo) == messy


def test_run_loop_sweeps_residue_hidden_by_the_attempts_own_ignore_rule(repo: Repo) -> None:
    configure(repo, verifier("unit", "false"))
    before = state(repo)
    agent = repo.path.parent / "agent.sh"
    agent.write_text("echo '*.tmp' >> .gitignore; echo junk > junk.tmp\n")
    repo.cp("run", "--attempts", "1", "--", "sh", str(agent), expect=1)
    assert state(repo) == before


def test_replacing_a_submodule_with_a_file_is_refused_before_writing(
    repo: Repo, tmp_path: Path
) -> None:
    sub = make_repo(tmp_path / "sub")
    sub.write("s", "s\n")
    sub.commit_all("s")
    repo.write("sub", "a file\n")
    repo.commit_all("file")
    repo.cp("save")
    repo.git("rm", "-q", "sub")
    repo.git("commit", "-qm", "rm")
    repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub.path), "sub")
    repo.git("commit", "-qm", "submodule")
    repo.write("sub/w.txt", "work in the submodule\n")
    before = state(repo)
    proc = repo.cp("restore", "cp_001", "--keep-head", expect=3)
    assert "submodule 'sub'" in proc.stderr
    assert state(repo) == before
    assert not (repo.path / ".git/checkpoint/restore-journal.json").exists()


def test_undo_asks_before_moving_a_head_that_moved_since(repo: Repo) -> None:
    repo.write("src/app.py", "work\n")
    repo.cp("save")
    repo.cp("restore")
    repo.write("src/app.py", "committed after the restore\n")
    later = repo.commit_all("c3")
    proc = repo.cp("undo", expect=3)
    assert "--move-head" in proc.stderr
    assert repo.git("rev-parse", "HEAD").strip() == later
    repo.cp("undo", "--keep-head")
    assert repo.git("rev-parse", "HEAD").strip() == later


@pytest.mark.parametrize(
    "manifest",
    [
        "x: " + "[" * 30000 + "]" * 30000 + "\n",
        "created_at: 2026-13-45T00:00:00Z\n",
        "- just\n- a list\n",
        "base_commit: [1, 2]\n",
        "auto: 12\n",
    ],
)
def test_malformed_manifests_are_refused_and_harm_nothing_else(repo: Repo, manifest: str) -> None:
    repo.cp("save", "-m", "good")
    head = repo.git("rev-parse", "HEAD").strip()
    index = repo.git("commit-tree", "HEAD^{tree}", "-p", "HEAD", "-m", "i").strip()
    message = f"checkpoint cp_001 on evil: x\n\n{manifest}".encode()
    bad = repo.git("commit-tree", "HEAD^{tree}", "-p", head, "-p", index, input=message).strip()
    repo.git("update-ref", "refs/checkpoints/evil/cp_001", bad)
    repo.cp("restore", "main/cp_001")  # a bad checkpoint elsewhere blocks nothing
    repo.cp("list", "--all")
    before = state(repo)
    proc = repo.cp("restore", "evil/cp_001", expect=None)
    if "created_at" in manifest:  # a bad date is only a string: the checkpoint is usable
        assert proc.returncode == 0, proc.stderr
    else:
        assert proc.returncode == 2 and "malformed" in proc.stderr
        assert state(repo) == before
    assert "Traceback" not in proc.stderr


def test_unreadable_tree_is_unsafe_not_a_crash(repo: Repo) -> None:
    # git mktree refuses an empty name; a hand-written tree object does not.
    content = b"100644 \0" + bytes.fromhex(blob(repo, b"x\n"))
    tree = repo.git("hash-object", "-t", "tree", "-w", "--literally", "--stdin", input=content)
    forge_checkpoint(repo, tree.strip())
    proc = repo.cp("restore", "cp_099", expect=3)
    assert "unsafe" in proc.stderr and proc.stderr.count("\n") == 1


def test_verify_refuses_a_hostile_checkpoint_like_restore(repo: Repo, tmp_path: Path) -> None:
    configure(repo, verifier("unit", "true"))
    evil = blob(repo, b"pwned\n")
    base_rows = [
        tuple(line.split(None, 3))
        for line in repo.git("ls-tree", "HEAD").splitlines()  # (mode, type, id, name)
    ]
    link = blob(repo, str(tmp_path).encode())
    tree = mktree(repo, [*base_rows, ("120000", "blob", link, "esc")])  # type: ignore[list-item]
    overlay = mktree(
        repo, [("040000", "tree", mktree(repo, [("100644", "blob", evil, "x")]), "esc")]
    )
    forge_checkpoint(repo, tree, overlay)
    proc = repo.cp("verify", "cp_099", expect=3)
    assert "unsafe" in proc.stderr
    assert "promoted" not in repo.cp("list").stdout
    assert not (tmp_path / "x").exists()


def test_sigterm_stops_the_agent_too(repo: Repo) -> None:
    configure(repo, verifier("unit", "true"))
    marker = repo.path.parent / "agent-alive"
    agent = repo.path.parent / "slow.py"
    agent.write_text(
        "import pathlib, time\n"
        f"for _ in range(600):\n    pathlib.Path({str(marker)!r}).touch(); time.sleep(0.05)\n"
    )
    proc = subprocess.Popen(
        ["git-checkpoint", "run", "--", sys.executable, str(agent)],
        cwd=repo.path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while not marker.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=30)
    assert "interrupted during attempt 1" in out
    marker.unlink()
    time.sleep(0.5)
    assert not marker.exists(), "the agent kept running after git checkpoint stopped"


def test_empty_task_name_is_bad_usage(repo: Repo) -> None:
    repo.cp("list", "--task", "", expect=2)


# --- second round -----------------------------------------------------------------------


def test_promoted_checkpoint_holds_what_the_verifiers_saw(repo: Repo) -> None:
    configure(repo, verifier("c", "grep -q good src/app.py && echo generated > src/app.py"))
    out = repo.cp("run", "--attempts", "1", "--", "sh", "-c", "echo good > src/app.py").stdout
    assert "warning: the verifiers changed the workspace" in out
    promoted = next(line for line in out.splitlines() if line.startswith("promoted: "))
    cp_id = promoted.split()[-1]
    assert repo.git("show", f"refs/checkpoints/main/{cp_id}:src/app.py") == "good\n"


def test_safety_checkpoints_are_never_the_latest(repo: Repo) -> None:
    configure(repo, verifier("a", "true"))
    repo.cp("save", "-m", "one")
    repo.cp("restore", "cp_001")  # safety cp_002 equals the workspace
    assert "unchanged since cp_001" in repo.cp("save").stdout
    out = repo.cp("verify").stdout
    assert "main/cp_001 promoted" in out
    repo.write("src/app.py", "drift\n")
    repo.cp("restore")  # safety cp_003 holds the drift
    assert "unchanged since cp_001" in repo.cp("save").stdout


def test_run_json_keeps_stdout_for_the_json(repo: Repo) -> None:
    configure(repo, verifier("a", "true"))
    proc = repo.cp("run", "--json", "--attempts", "1", "--", "echo", "agent talking")
    data = json.loads(proc.stdout)
    assert data["promoted"] and "agent talking" in proc.stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_signals_stop_verify_and_its_verifier(repo: Repo, sig: signal.Signals) -> None:
    pidfile = repo.path.parent / "verifier.pid"
    configure(repo, verifier("slow", f"echo $$ > {pidfile}; exec sleep 60"))
    proc = subprocess.Popen(
        ["git-checkpoint", "verify"],
        cwd=repo.path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 30
    while not pidfile.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.2)
    proc.send_signal(sig)
    proc.communicate(timeout=30)
    pid = int(pidfile.read_text())
    time.sleep(0.3)
    status = Path(f"/proc/{pid}/status")
    assert not status.exists() or "zombie" in status.read_text()


def test_all_pass_rejects_on_an_optional_failure(repo: Repo) -> None:
    repo.write(
        ".checkpoint.yaml",
        "promotion_rule: all_pass\nverifiers:\n  - {name: a, command: 'true'}\n"
        "  - {name: o, command: 'false', required: false}\n",
    )
    repo.commit_all("all_pass")
    repo.cp("verify", expect=1)
    assert repo.cp_json("show", "@")["status"] == "rejected"


def test_last_good_follows_promotion_and_rejection(repo: Repo) -> None:
    configure(repo, verifier("a", "test ! -f broken"))
    repo.cp("save")
    repo.cp("promote", "cp_001", "--force", "--reason", "checked by hand")
    assert repo.cp_json("status")["last_good"] == "cp_001"
    repo.write("broken", "x\n")
    repo.git("add", "broken")
    repo.git("commit", "-qm", "break")
    repo.cp("verify", "cp_001", expect=0)  # verified in a worktree of cp_001: still good
    assert repo.cp_json("status")["last_good"] == "cp_001"
    repo.cp("save")
    repo.cp("verify", "cp_002", expect=1)
    assert repo.cp_json("promote", "cp_002", expect=1)["status"] == "rejected"


def test_overlay_limit_mid_run_says_where_the_workspace_stands(repo: Repo) -> None:
    repo.write(
        ".checkpoint.yaml",
        "verifiers:\n  - {name: a, command: 'test -f fixed'}\nlimits: {overlay_max_files: 5}\n",
    )
    repo.commit_all("limits")
    agent = "for i in 1 2 3 4 5 6 7 8; do echo $i > g$i; done"
    proc = repo.cp("run", "--attempts", "2", "--", "sh", "-c", agent, expect=3)
    assert "stopped at attempt 1" in proc.stdout and "rollback point: cp_001" in proc.stdout
    assert "overlay too large" in proc.stderr


def test_an_agent_saving_inside_run_saves_into_the_loops_task(repo: Repo) -> None:
    configure(repo, verifier("a", "true"))
    agent = "echo x > new.txt; git checkpoint save --hypothesis 'from the agent'"
    repo.cp("run", "--task", "feat/x", "--attempts", "1", "--", "sh", "-c", agent)
    assert repo.cp_json("resume", "--task", "feat/x")["hypothesis"] == "from the agent"
    assert repo.cp_json("list")["checkpoints"] == []  # nothing landed in task main


@pytest.mark.parametrize("bad", ["a..b", "a.", "remotes/x", ""])
def test_bad_task_names_are_exit_2(repo: Repo, bad: str) -> None:
    proc = repo.cp("save", "--task", bad, expect=2)
    assert proc.stderr.count("\n") == 1


def test_a_broken_notes_ref_is_one_line(repo: Repo) -> None:
    repo.cp("save")
    junk = repo.git("hash-object", "-w", "--stdin", input=b"not a notes commit\n").strip()
    repo.git("update-ref", "refs/notes/checkpoints", junk)
    proc = repo.cp("list", expect=4)
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr


# --- third round: a reading of the code ------------------------------------------------


def test_continue_never_drops_a_commit_made_after_the_interruption(repo: Repo) -> None:
    repo.cp("save")
    repo.write("src/app.py", "later\n")
    repo.commit_all("B")
    repo.cp("restore", "cp_001", "--move-head")  # fine; now fake an interruption after it
    journal = repo.path / ".git/checkpoint/restore-journal.json"
    b = repo.git("rev-parse", "HEAD@{1}").strip()
    a = repo.git("rev-parse", "HEAD").strip()
    journal.write_text(
        json.dumps(
            {
                "target": repo.git("rev-parse", "refs/checkpoints/main/cp_001").strip(),
                "target_name": "main/cp_001",
                "safety": repo.git("rev-parse", "refs/checkpoints/main/cp_002").strip(),
                "safety_name": "main/cp_002",
                "head_from": b,
                "head_to": a,
                "move_head": True,
                "started_at": "2026-01-01T00:00:00Z",
                "pid": 1,
            }
        )
    )
    repo.write("c.txt", "new work\n")
    c = repo.commit_all("C, committed after the interruption")
    proc = repo.cp("restore", "--continue", expect=3)
    assert "--move-head" in proc.stderr
    assert repo.git("rev-parse", "HEAD").strip() == c


def test_git_dir_in_the_environment_does_not_redirect_us(repo: Repo) -> None:
    configure(repo, verifier("unit", "true"))
    repo.write("b.txt", "staged\n")
    repo.git("add", "b.txt")
    repo.cp("save")
    repo.write("b.txt", "staged, then more\n")
    repo.git("add", "b.txt")
    index_before = repo.git("ls-files", "-s")
    env = {"GIT_DIR": str(repo.path / ".git"), "GIT_INDEX_FILE": str(repo.path / ".git/index")}
    repo.cp("verify", "cp_001", env=env)
    assert repo.git("ls-files", "-s") == index_before


def test_an_unreadable_journal_warns_and_undo_sets_it_aside(repo: Repo) -> None:
    repo.cp("save")
    repo.write("src/app.py", "work\n")
    repo.cp("restore")
    journal = repo.path / ".git/checkpoint/restore-journal.json"
    journal.write_text("[1]")
    listed = repo.cp("list")
    assert "unreadable" in listed.stderr
    repo.cp("undo")
    assert (repo.path / "src/app.py").read_text() == "work\n"
    assert not journal.exists()


def test_a_task_record_that_is_not_utf8_is_not_a_crash(repo: Repo) -> None:
    repo.cp("save")
    (repo.path / ".git/checkpoint/tasks").mkdir(parents=True, exist_ok=True)
    (repo.path / ".git/checkpoint/tasks/main.yaml").write_bytes(b"\xff\xfe hypothesis: x\n")
    repo.cp("status")


def test_secrets_on_save_ignore_is_quiet(repo: Repo) -> None:
    repo.write(".checkpoint.yaml", "secrets: {on_save: ignore}\n")
    repo.commit_all("quiet")
    repo.write(".env.local", "TOKEN=1\n")
    proc = repo.cp("save")
    assert proc.stderr == ""
    assert repo.cp_json("show", "@")["overlay_files"] == []


def test_both_marks_survive(repo: Repo) -> None:
    repo.write("conf", "v1\n")
    repo.commit_all("conf")
    repo.cp("save")
    repo.git("update-index", "--skip-worktree", "conf")
    repo.git("update-index", "--assume-unchanged", "conf")
    repo.write("conf", "local\n")
    marks = repo.git("ls-files", "-v", "conf")
    repo.cp("restore")
    repo.cp("undo")
    assert (repo.path / "conf").read_text() == "local\n"
    assert repo.git("ls-files", "-v", "conf") == marks


def test_fractional_file_limit_is_bad_config(repo: Repo) -> None:
    repo.git("config", "checkpoint.overlayMaxFiles", "0.5")
    proc = repo.cp("save", expect=2)
    assert "whole number" in proc.stderr


@pytest.mark.parametrize("index_version", ["2", "4"])
def test_intent_to_add_entries_come_back_as_they_were(repo: Repo, index_version: str) -> None:
    repo.git("config", "index.version", index_version)
    repo.cp("save")
    repo.write("n.txt", "new\n")
    repo.git("add", "-N", "n.txt")
    marked = state(repo)
    assert " A n.txt" in repo.git("status", "--short")
    repo.cp("restore", "cp_001")
    assert "n.txt" not in repo.git("status", "--short")  # neither on disk nor in the index
    repo.cp("undo")
    assert state(repo) == marked
    assert " A n.txt" in repo.git("status", "--short")
    repo.cp("save", "-m", "with an intent-to-add entry")
    repo.git("rm", "-q", "--cached", "n.txt")
    repo.cp("restore")
    assert state(repo) == marked
