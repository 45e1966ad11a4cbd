"""What a checkpoint says of itself (its name, made of a prompt or a command line, a
`-m` message, a hypothesis, a next move, a promotion's reason) holds no secret the scan
finds: it is redacted before anything is written, and the save says so. `scan` reads
messages and manifests as it reads files, and a push blocks on what it finds there.
And what a save writes, every reader accepts: text is cleaned and cut on the way in
(said), and a save at each limit restores."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from git_checkpoint.storage.commits import MESSAGE_MAX, NOTE_MAX

from ..conftest import Repo
from ..servers import bare_repo

AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Lm3Nx7Q"
GITHUB_TOKEN = "ghp_" + "A1b2C3d4E5f6G7h8I9j0" + "K1l2M3n4O5p6Q7r8"  # (split: not a real one)
LATEST = "refs/checkpoints/main/cp_001"


def hook(agent_payload: dict[str, object], event: str = "PreToolUse") -> str:
    proc = subprocess.run(
        ["git-checkpoint-hook", "claude-code", event],
        input=json.dumps(agent_payload),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0
    assert "Traceback" not in proc.stderr
    return proc.stderr


def everything_written(repo: Repo) -> str:
    """Every checkpoint commit's message, the notes, the operation log, the records."""
    out = repo.git("log", "--all", "--format=%B")
    state = repo.path / ".git" / "checkpoint"
    for path in state.rglob("*"):
        if path.is_file():
            out += path.read_text(errors="replace")
    return out


def test_a_prompt_with_a_secret_names_its_turn_checkpoint_without_it(repo: Repo) -> None:
    repo.write("src/app.py", "print('changed')\n")
    prompt = f"deploy with AWS_SECRET_ACCESS_KEY={AWS_SECRET} please"
    said = hook(
        {"session_id": "s", "cwd": str(repo.path), "prompt": prompt},
        event="UserPromptSubmit",
    )
    subject = repo.git("log", "-1", "--format=%s", LATEST)
    assert "AWS_SECRET_ACCESS_KEY=[redacted]" in subject
    assert AWS_SECRET not in everything_written(repo)
    assert "note: message: secret redacted (Secret Keyword)" in said
    assert AWS_SECRET not in said


def test_a_command_line_with_a_token_names_its_automatic_checkpoint_without_it(
    repo: Repo,
) -> None:
    repo.write("src/app.py", "print('changed')\n")
    command = f"TOKEN={GITHUB_TOKEN} ./deploy.sh"
    said = hook(
        {
            "session_id": "s",
            "cwd": str(repo.path),
            "hook_event_name": "PreToolUse",
            "tool_name": "Bash",
            "tool_input": {"command": command},
        }
    )
    assert "checkpoint saved: cp_001 (before: TOKEN=[redacted] ./deploy.sh)" in said
    assert GITHUB_TOKEN not in everything_written(repo)


def test_save_m_hypothesis_and_next_are_redacted_and_said(repo: Repo) -> None:
    repo.write("src/app.py", "print('changed')\n")
    proc = repo.cp(
        "save",
        "-m",
        f"try with password={AWS_SECRET}",
        "--hypothesis",
        f"the key AKIAIOSFODNN7EXAMPLE is {GITHUB_TOKEN}",
        "--next",
        "rotate it",
    )
    assert "note: message: secret redacted" in proc.stdout
    assert "note: hypothesis: secret redacted" in proc.stdout
    written = everything_written(repo)
    for secret in (AWS_SECRET, GITHUB_TOKEN, "AKIAIOSFODNN7EXAMPLE"):
        assert secret not in written
        assert secret not in proc.stdout + proc.stderr
    assert "rotate it" in written


def test_task_set_and_a_forced_promotion_keep_no_secret(repo: Repo) -> None:
    repo.cp("save", "-m", "first")
    proc = repo.cp("task", "set", "--hypothesis", f"TOKEN={GITHUB_TOKEN} fails")
    assert "note: hypothesis: secret redacted" in proc.stdout
    proc = repo.cp("promote", "cp_001", "--force", "--reason", f"ok, key {GITHUB_TOKEN}")
    assert "note: reason: secret redacted" in proc.stdout
    assert GITHUB_TOKEN not in everything_written(repo)
    notes = repo.git("notes", "--ref=refs/notes/checkpoints", "show", LATEST)
    assert "[redacted]" in notes


def test_words_that_only_look_like_secrets_are_kept(repo: Repo) -> None:
    repo.write("src/app.py", "print('changed')\n")
    message = "fix the auth token refresh in src/components/login_form_v2.tsx"
    proc = repo.cp("save", "-m", message)
    assert "note:" not in proc.stdout
    assert message in repo.git("log", "-1", "--format=%s", LATEST)


def crafted_with_message(repo: Repo, message: str) -> str:
    """A checkpoint whose commit message holds `message`, as an older version (or
    another machine) could have written it."""
    repo.write("src/app.py", "print('changed')\n")
    repo.cp("save", "-m", "plain")
    parents = repo.git("rev-list", "--parents", "-n", "1", LATEST).split()[1:]
    tree = repo.git("rev-parse", f"{LATEST}^{{tree}}").strip()
    body = repo.git("log", "-1", "--format=%B", LATEST).replace("plain", message)
    args = [a for p in parents for a in ("-p", p)]
    commit = repo.git("commit-tree", tree, *args, input=body.encode()).strip()
    repo.git("update-ref", LATEST, commit)
    return commit


def test_scan_reads_messages_and_manifests(repo: Repo) -> None:
    crafted_with_message(repo, f"deploy TOKEN={GITHUB_TOKEN}")
    proc = repo.cp("scan", "cp_001", expect=1)
    assert "(message):1: GitHub Token" in proc.stdout
    assert GITHUB_TOKEN not in proc.stdout


def test_a_push_blocks_on_a_secret_in_a_message(repo: Repo, tmp_path: Path) -> None:
    crafted_with_message(repo, f"deploy TOKEN={GITHUB_TOKEN}")
    remote = bare_repo(tmp_path / "remote.git")
    repo.git("remote", "add", "origin", str(remote))
    proc = repo.cp("push", "origin", expect=3)
    assert "(message)" in proc.stderr
    assert (
        subprocess.run(
            ["git", "-C", str(remote), "for-each-ref", "refs/checkpoints/"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        == ""
    )


# -- what a save writes, every reader accepts -------------------------------------------


def readable(repo: Repo, name: str = "cp_001") -> None:
    """Every reader of the checkpoint takes it: list, show, diff, restore, fsck."""
    listed = repo.cp_json("list")
    assert all("malformed" not in json.dumps(c) for c in listed["checkpoints"]), listed
    repo.cp("show", name)
    repo.cp("diff", name)
    repo.cp("restore", name)
    subprocess.run(
        ["git", "-C", str(repo.path), "fsck", "--strict", "--no-dangling"],
        check=True,
        capture_output=True,
    )


@pytest.mark.parametrize("length", [MESSAGE_MAX, MESSAGE_MAX + 1, 100_000])
def test_a_message_at_and_over_its_limit_is_saved_and_restores(repo: Repo, length: int) -> None:
    repo.write("src/app.py", "print('changed')\n")
    proc = repo.cp("save", "-m", "m" * length)
    cut = f"note: message: cut to {MESSAGE_MAX:,} characters"
    assert (cut in proc.stdout) == (length > MESSAGE_MAX)
    readable(repo)


@pytest.mark.parametrize("length", [NOTE_MAX, NOTE_MAX + 1, 100_000])
def test_a_hypothesis_at_and_over_its_limit_spoils_no_later_save(repo: Repo, length: int) -> None:
    """The task record's hypothesis is copied into every later save."""
    repo.write("src/app.py", "print('changed')\n")
    proc = repo.cp("save", "--hypothesis", "h" * length, "--next", "n" * length)
    assert (f"hypothesis: cut to {NOTE_MAX:,}" in proc.stdout) == (length > NOTE_MAX)
    repo.write("src/app.py", "print('changed again')\n")
    repo.cp("save", "-m", "later")
    readable(repo, "cp_002")
    readable(repo, "cp_001")


def test_a_nul_and_control_characters_in_a_prompt_make_a_sound_commit(repo: Repo) -> None:
    repo.write("src/app.py", "print('changed')\n")
    said = hook(
        {"session_id": "s", "cwd": str(repo.path), "prompt": "fix\u0000 it\u001b[2K now"},
        event="UserPromptSubmit",
    )
    assert "checkpoint saved: cp_001" in said
    assert "\0" not in repo.git("log", "-1", "--format=%B", LATEST)
    readable(repo)
    refs = repo.git(
        "for-each-ref", "--format=%(refname)%00%(contents:subject)", "refs/checkpoints/"
    )
    assert refs.count("\0") == len(refs.splitlines()) == 2  # (and the restore's safety one)


def test_thousands_of_intent_to_add_paths_save_and_restore(repo: Repo) -> None:
    for n in range(3000):
        repo.write(f"new/{n:04d}/a_rather_long_file_name_{n:04d}.py", f"x = {n}\n")
    repo.git("add", "-N", "new")
    repo.cp("save", "-m", "many marks")
    readable(repo)
    marked = repo.git("diff", "--name-only").split()  # intent-to-add files show as changes
    assert len(marked) == 3000


def test_a_manifest_over_its_limit_lists_the_first_marks_and_counts_them_all() -> None:
    from git_checkpoint.storage.commits import fit_manifest
    from git_checkpoint.storage.manifest import parse_manifest

    marks = [f"new/{n:05d}/file.py" for n in range(5000)]
    patterns = [f"vendor/{n}/" for n in range(5000)]
    manifest = {"task": "main", "intent_to_add": marks, "untracked": {"exclude": patterns}}
    said = fit_manifest(manifest, limit=64 * 1024)
    body = json.dumps(manifest)  # (YAML is longer; fit_manifest measured that)
    assert len(body) < 64 * 1024
    assert manifest["intent_to_add_total"] == 5000
    assert manifest["intent_to_add"] == marks[: len(manifest["intent_to_add"])]
    assert said and "intent-to-add" in said[0]
    import yaml

    text = yaml.safe_dump(manifest, sort_keys=False)
    assert len(text) <= 64 * 1024
    assert parse_manifest(f"checkpoint cp_001 on main: x\n\n{text}")[1] is None
