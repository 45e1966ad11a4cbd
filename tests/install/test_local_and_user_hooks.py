"""Agent hooks in a settings file of this clone only (`hooks install --local`) or in the
user's own (`--user`): `hooks status` and `doctor` see them, and the local file stays out
of git's sight (`.git/info/exclude`), so checkpoints neither capture nor remove it."""

from __future__ import annotations

import os
from pathlib import Path

from ..conftest import Repo

LOCAL = ".claude/settings.local.json"


LINE = "/" + LOCAL


def exclude_lines(repo: Repo) -> list[str]:
    path = repo.path / ".git/info/exclude"
    return path.read_text().splitlines() if path.exists() else []


def overlay_files(repo: Repo, ref: str) -> list[str]:
    parents = repo.git("log", "-1", "--format=%P", ref).split()
    if len(parents) < 3:
        return []
    return repo.git("ls-tree", "-r", "--name-only", parents[2]).splitlines()


def doctor_hooks(repo: Repo, expect: int = 0) -> dict[str, str]:
    checks = repo.cp_json("doctor", expect=expect)["checks"]
    found: dict[str, str] = next(c for c in checks if c["name"] == "hooks")
    return found


def test_plain_status_lists_a_local_install(repo: Repo) -> None:
    repo.cp("hooks", "install", "--agent", "claude-code", "--local")
    rows = repo.cp_json("hooks", "status")["agents"]
    seen = {(a["agent"], a["scope"]): a["state"] for a in rows}
    assert seen[("claude-code", "local")] == "installed"
    assert seen[("claude-code", "project")] == "not installed"
    assert ("claude-code", "user") not in seen  # only the scopes where ours are
    local = next(a for a in rows if a["scope"] == "local")
    assert local["path"] == LOCAL and local["ignored"] is True
    text = repo.cp("hooks", "status").stdout
    assert f"claude-code  installed          {LOCAL} (local)" in text.splitlines()


def test_plain_status_lists_a_user_install(repo: Repo) -> None:
    home = Path(os.environ["HOME"])
    repo.cp("hooks", "install", "--agent", "codex", "--user")
    rows = repo.cp_json("hooks", "status")["agents"]
    user = [a for a in rows if a["scope"] == "user"]
    assert [(a["agent"], a["state"]) for a in user] == [("codex", "installed")]
    assert user[0]["path"] == str(home / ".codex/hooks.json")
    # A scoped status still shows that scope alone.
    assert [a["scope"] for a in repo.cp_json("hooks", "status", "--local")["agents"]] == ["local"]


def test_doctor_sees_local_and_user_installs(repo: Repo) -> None:
    assert doctor_hooks(repo)["status"] == "note"
    repo.cp("hooks", "install", "--agent", "claude-code", "--local")
    found = doctor_hooks(repo)
    assert found["status"] == "ok", found
    assert found["detail"] == "installed and current: claude-code (local)"
    repo.cp("hooks", "uninstall", "--agent", "claude-code", "--local")
    assert doctor_hooks(repo)["status"] == "note"
    repo.cp("hooks", "install", "--agent", "gemini-cli", "--user")
    found = doctor_hooks(repo)
    assert found["status"] == "ok" and "gemini-cli (user)" in found["detail"]


def test_local_install_adds_the_file_to_info_exclude_once(repo: Repo) -> None:
    assert not (repo.path / ".git/info").exists()  # the hermetic template has none
    out = repo.cp("hooks", "install", "--agent", "claude-code", "--local").stdout
    assert "added to .git/info/exclude" in out
    assert exclude_lines(repo).count(LINE) == 1
    assert repo.git("status", "--porcelain", "--untracked-files=all") == ""
    again = repo.cp("hooks", "install", "--agent", "claude-code", "--local").stdout
    assert "already installed" in again and "exclude" not in again
    repo.cp("hooks", "uninstall", "--agent", "claude-code", "--local")
    assert not (repo.path / LOCAL).exists()
    assert exclude_lines(repo).count(LINE) == 1  # uninstall leaves the line; harmless
    repo.cp("hooks", "install", "--agent", "claude-code", "--local")
    assert exclude_lines(repo).count(LINE) == 1


def test_existing_exclude_file_is_kept_and_not_duplicated(repo: Repo) -> None:
    info = repo.path / ".git/info"
    info.mkdir()
    (info / "exclude").write_text("# mine\n*.swp")  # no final newline
    repo.cp("hooks", "install", "--agent", "claude-code", "--local")
    lines = exclude_lines(repo)
    assert lines[:2] == ["# mine", "*.swp"] and lines[-1] == LINE
    # The same path written without the leading slash counts as there already.
    (info / "exclude").write_text(f"{LOCAL}\n")
    repo.cp("hooks", "uninstall", "--agent", "claude-code", "--local")
    repo.cp("hooks", "install", "--agent", "claude-code", "--local")
    assert (info / "exclude").read_text() == f"{LOCAL}\n"


def test_checkpoints_neither_capture_nor_remove_the_local_settings(repo: Repo) -> None:
    repo.write("notes.txt", "an untracked file, captured\n")
    repo.cp("save", "-m", "before the hooks")
    repo.cp("hooks", "install", "--agent", "claude-code", "--local")
    settings = (repo.path / LOCAL).read_bytes()
    repo.write("notes.txt", "changed\n")
    repo.cp("save", "-m", "after the hooks")
    assert overlay_files(repo, "refs/checkpoints/main/cp_002") == ["notes.txt"]
    repo.cp("restore", "cp_001")
    assert (repo.path / LOCAL).read_bytes() == settings  # still installed
    assert repo.cp_json("hooks", "status", "--local")["agents"][0]["state"] == "installed"
    repo.cp("undo")
    assert (repo.path / LOCAL).read_bytes() == settings


def test_linked_worktree_uses_the_common_exclude_file(repo: Repo, tmp_path: Path) -> None:
    linked = tmp_path / "linked"
    repo.git("worktree", "add", "-q", "--detach", str(linked))
    wt = Repo(linked)
    out = wt.cp("hooks", "install", "--agent", "claude-code", "--local").stdout
    assert str(repo.path / ".git/info/exclude") in out
    assert exclude_lines(repo).count(LINE) == 1
    assert not list((repo.path / ".git/worktrees").glob("*/info/exclude"))
    assert (linked / LOCAL).exists()
    assert wt.git("status", "--porcelain", "--untracked-files=all") == ""
    # The main worktree is covered by the same line when it gets its own.
    repo.cp("hooks", "install", "--agent", "claude-code", "--local")
    assert exclude_lines(repo).count(LINE) == 1
    assert repo.git("status", "--porcelain", "--untracked-files=all") == ""


def test_a_local_install_git_does_not_ignore_is_reported(repo: Repo) -> None:
    # As an install before this fix left it: the file there, no exclude line.
    repo.cp("hooks", "install", "--agent", "claude-code", "--local")
    (repo.path / ".git/info/exclude").write_text("")
    rows = repo.cp_json("hooks", "status")["agents"]
    assert next(a for a in rows if a["scope"] == "local")["ignored"] is False
    assert "installed, not ignored by git" in repo.cp("hooks", "status").stdout
    found = doctor_hooks(repo, expect=1)
    assert found["status"] == "fail" and "not ignored by git" in found["detail"]
    assert found["fix"].startswith("git checkpoint hooks install --agent claude-code --local")
    repo.cp("hooks", "install", "--agent", "claude-code", "--local")  # the fix it names
    assert doctor_hooks(repo)["status"] == "ok"


def test_a_tracked_local_file_is_said_to_be_shared(repo: Repo) -> None:
    repo.write(LOCAL, "{}\n")
    repo.commit_all("someone committed their local settings")
    out = repo.cp("hooks", "install", "--agent", "claude-code", "--local").stdout
    assert f"tracked by git all the same (git rm --cached {LOCAL})" in out
    assert exclude_lines(repo) == []  # a line there would hide nothing
