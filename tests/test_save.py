"""`git checkpoint save` (and list/log/--json/errors) against real repositories.

Every assertion reads what git itself stored: trees, modes, blobs, parents, refs and
reflogs, so a wrong snapshot cannot hide behind the tool's own output.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path

import pytest

from tests.conftest import Repo, make_repo
from tests.helpers import workspace_files

REF1 = "refs/checkpoints/main/cp_001"
REF2 = "refs/checkpoints/main/cp_002"


# --- helpers --------------------------------------------------------------------------------------


def git_bytes(path: Path, *args: str) -> bytes:
    proc = subprocess.run(["git", *args], cwd=path, capture_output=True, check=False)
    assert proc.returncode == 0, f"git {args}: {proc.stderr.decode()}"
    return proc.stdout


def tree(repo: Repo, rev: str) -> dict[str, tuple[str, str]]:
    """path -> (mode, object id) of every entry under rev (recursive, no submodule descent)."""
    out = git_bytes(repo.path, "ls-tree", "-r", "-z", "--full-tree", rev)
    entries: dict[str, tuple[str, str]] = {}
    for item in out.split(b"\0"):
        if not item:
            continue
        meta, _, name = item.partition(b"\t")
        mode, _kind, oid = meta.decode().split()
        entries[os.fsdecode(name)] = (mode, oid)
    return entries


def blob(repo: Repo, rev: str, path: str) -> bytes:
    return git_bytes(repo.path, "cat-file", "blob", f"{rev}:{path}")


def parents(repo: Repo, rev: str) -> list[str]:
    return repo.git("rev-list", "--no-walk", "--parents", "-n", "1", rev).split()[1:]


def checkpoint_refs(repo: Repo) -> list[str]:
    return repo.git("for-each-ref", "--format=%(refname)", "refs/checkpoints/").split()


def save_json(repo: Repo, *args: str, cwd: Path | None = None) -> dict:
    proc = repo.cp("save", "--json", *args, cwd=cwd)
    return json.loads(proc.stdout)


def one_line_error(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, f"wanted one line on stderr, got: {stderr!r}"
    assert "Traceback" not in stderr
    return lines[0]


def write_config(repo: Repo, text: str) -> None:
    repo.write(".checkpoint.yaml", text)


# --- shape of the checkpoint ----------------------------------------------------------------------


def test_save_writes_stash_shaped_commit(repo: Repo) -> None:
    base = repo.git("rev-parse", "HEAD").strip()
    repo.write("src/app.py", "print('changed')\n")
    proc = repo.cp("save", "-m", "first try")
    assert proc.stdout.strip() == "checkpoint saved: cp_001"
    assert checkpoint_refs(repo) == [REF1]
    ps = parents(repo, REF1)
    assert len(ps) == 2, "no untracked files: W has exactly B and I"
    assert ps[0] == base
    assert parents(repo, ps[1]) == [base], "I has parent B"
    msg = repo.git("log", "-1", "--format=%B", REF1)
    assert msg.splitlines()[0] == "checkpoint cp_001 on main: first try"
    assert msg.splitlines()[1] == ""
    assert blob(repo, REF1, "src/app.py") == b"print('changed')\n"
    # git diff B W is the reviewable change
    assert repo.git("diff", "--name-only", base, REF1).split() == ["src/app.py"]


def test_multiline_message_is_one_summary_line(repo: Repo) -> None:
    repo.write("README.md", "x\n")
    repo.cp("save", "-m", "line one\nline two")
    first = repo.git("log", "-1", "--format=%s", REF1).strip()
    assert first == "checkpoint cp_001 on main: line one line two"


def test_tracked_file_kinds(repo: Repo) -> None:
    binary = bytes(range(256)) * 4 + b"\0\r\n\xff"
    uni = "données/résumé ü 日本.txt"
    deep = "a/b/c/d/e/f/g/h/i/j/deep.txt"
    repo.write("bin.dat", binary)
    repo.write("empty.txt", b"")
    repo.write("run.sh", "#!/bin/sh\necho hi\n", mode=0o755)
    os.symlink("src/app.py", repo.path / "link")
    repo.write(uni, "unicode\n")
    repo.write(deep, "deep\n")
    repo.git("add", "-A")
    # then change each of them in the work tree only
    repo.write("bin.dat", binary[::-1])
    repo.write("empty.txt", b"")
    (repo.path / "README.md").chmod(0o755)
    (repo.path / "link").unlink()
    os.symlink("README.md", repo.path / "link")
    repo.write(uni, "unicode 2\n")
    repo.write(deep, "deeper\n")
    repo.cp("save")

    w = tree(repo, REF1)
    i = tree(repo, f"{REF1}^2")
    assert blob(repo, REF1, "bin.dat") == binary[::-1]
    assert blob(repo, f"{REF1}^2", "bin.dat") == binary
    assert blob(repo, REF1, "empty.txt") == b""
    assert w["run.sh"][0] == "100755"
    assert w["README.md"][0] == "100755", "a chmod +x in the work tree is captured"
    assert i["README.md"][0] == "100644"
    assert w["link"][0] == "120000"
    assert blob(repo, REF1, "link") == b"README.md"
    assert blob(repo, f"{REF1}^2", "link") == b"src/app.py"
    assert blob(repo, REF1, uni) == b"unicode 2\n"
    assert blob(repo, REF1, deep) == b"deeper\n"
    assert blob(repo, f"{REF1}^2", deep) == b"deep\n"


def test_deleted_tracked_files(repo: Repo) -> None:
    repo.write("gone.txt", "bye\n")
    repo.write("staged-gone.txt", "bye\n")
    repo.commit_all("more")
    (repo.path / "gone.txt").unlink()  # unstaged deletion
    repo.git("rm", "-q", "staged-gone.txt")  # staged deletion
    repo.cp("save")
    w, i = tree(repo, REF1), tree(repo, f"{REF1}^2")
    assert "gone.txt" not in w
    assert "gone.txt" in i
    assert "staged-gone.txt" not in w
    assert "staged-gone.txt" not in i


def test_staged_and_unstaged_come_apart(repo: Repo) -> None:
    repo.write("src/app.py", "staged\n")
    repo.write("new.py", "new staged\n")
    repo.git("add", "src/app.py", "new.py")
    repo.write("src/app.py", "unstaged\n")
    repo.write("new.py", "new unstaged\n")
    repo.cp("save")
    assert blob(repo, f"{REF1}^2", "src/app.py") == b"staged\n"
    assert blob(repo, REF1, "src/app.py") == b"unstaged\n"
    assert blob(repo, f"{REF1}^2", "new.py") == b"new staged\n"
    assert blob(repo, REF1, "new.py") == b"new unstaged\n"
    assert len(parents(repo, REF1)) == 2, "staged new files are tracked, not overlay"


def test_intent_to_add_file_is_captured(repo: Repo) -> None:
    repo.write("ita.py", "agent wrote this\n")
    repo.git("add", "-N", "ita.py")
    repo.cp("save")
    assert blob(repo, REF1, "ita.py") == b"agent wrote this\n"


def test_force_added_ignored_file_is_tracked_and_captured(repo: Repo) -> None:
    repo.write("keep.log", "tracked although ignored\n")
    repo.git("add", "-f", "keep.log")
    repo.write("keep.log", "changed\n")
    repo.cp("save")
    assert blob(repo, REF1, "keep.log") == b"changed\n"


# --- the overlay ----------------------------------------------------------------------------------


def test_untracked_files_go_to_parentless_overlay(repo: Repo) -> None:
    binary = os.urandom(300)
    repo.write("notes/todo.md", "todo\n")
    repo.write("notes/raw.bin", binary)
    repo.write("tool.sh", "#!/bin/sh\n", mode=0o755)
    repo.write("empty", b"")
    repo.write("ünï/çødé.txt", "u\n")
    repo.write("x/y/z/w/v/u/deep.txt", "d\n")
    os.symlink("../README.md", repo.path / "notes" / "readme-link")
    repo.write("debug.log", "ignored\n")  # *.log is ignored
    data = save_json(repo)
    assert data["created"] is True
    ps = parents(repo, REF1)
    assert len(ps) == 3
    overlay = ps[2]
    assert parents(repo, overlay) == [], "U is parentless"
    u = tree(repo, overlay)
    assert set(u) == {
        "notes/todo.md",
        "notes/raw.bin",
        "tool.sh",
        "empty",
        "ünï/çødé.txt",
        "x/y/z/w/v/u/deep.txt",
        "notes/readme-link",
    }
    assert blob(repo, overlay, "notes/raw.bin") == binary
    assert u["tool.sh"][0] == "100755"
    assert u["notes/todo.md"][0] == "100644"
    assert u["notes/readme-link"][0] == "120000"
    assert blob(repo, overlay, "notes/readme-link") == b"../README.md"
    assert "debug.log" not in tree(repo, REF1)
    assert data["overlay_files"] == 7
    assert data["overlay_bytes"] >= 300


def test_ignored_files_not_captured(repo: Repo) -> None:
    repo.write("app.log", "ignored\n")
    repo.write("node_modules/pkg/index.js", "ignored\n")
    repo.write("kept.txt", "kept\n")
    repo.cp("save")
    u = tree(repo, f"{REF1}^3")
    assert set(u) == {"kept.txt"}


def test_default_excludes_apply_even_when_not_gitignored(repo: Repo) -> None:
    for d in (".venv", "venv", "__pycache__", ".tox", ".mypy_cache", ".pytest_cache"):
        repo.write(f"{d}/x.py", "x\n")
    for d in ("target", "dist", "build"):
        repo.write(f"{d}/out.bin", "x\n")
    repo.write("sub/node_modules/m.js", "x\n")
    repo.write("sub/__pycache__/m.pyc", "x\n")
    repo.write("kept.txt", "kept\n")
    repo.cp("save")
    assert set(tree(repo, f"{REF1}^3")) == {"kept.txt"}


def test_config_include_captures_ignored_path(repo: Repo) -> None:
    repo.write(".gitignore", "*.log\nnode_modules/\ntmp/\n.agent-state/\n")
    repo.commit_all("ignore tmp")
    write_config(repo, "untracked:\n  include: [tmp/test-fixtures/, .agent-state/]\n")
    repo.write("tmp/test-fixtures/a.json", "{}\n")
    repo.write("tmp/other/b.json", "{}\n")
    repo.write(".agent-state/s.json", "{}\n")
    repo.cp("save")
    u = tree(repo, f"{REF1}^3")
    assert "tmp/test-fixtures/a.json" in u
    assert ".agent-state/s.json" in u
    assert "tmp/other/b.json" not in u
    assert ".checkpoint.yaml" in u, "the uncommitted config file itself is untracked work"


def test_include_flag_captures_ignored_path(repo: Repo) -> None:
    repo.write("trace.log", "wanted\n")
    repo.write("other.log", "not wanted\n")
    data = save_json(repo, "--include", "trace.log")
    assert data["overlay_files"] == 1
    assert set(tree(repo, f"{REF1}^3")) == {"trace.log"}
    assert blob(repo, f"{REF1}^3", "trace.log") == b"wanted\n"


def test_exclude_wins_over_include(repo: Repo) -> None:
    write_config(
        repo,
        "untracked:\n  include: [node_modules/, gen/]\n  exclude: [gen/private/]\n",
    )
    repo.git("add", ".checkpoint.yaml")
    repo.git("commit", "-q", "-m", "config")
    repo.write("node_modules/dep/index.js", "x\n")
    repo.write("gen/public/a.txt", "a\n")
    repo.write("gen/private/b.txt", "b\n")
    repo.write("build/out.o", "o\n")
    repo.cp("save", "--include", "build/", "--include", "gen/private/b.txt")
    u = tree(repo, f"{REF1}^3")
    assert set(u) == {"gen/public/a.txt"}


def test_config_exclude_keeps_untracked_out(repo: Repo) -> None:
    write_config(repo, "untracked:\n  exclude: [scratch/, '*.tmp']\n")
    repo.git("add", ".checkpoint.yaml")
    repo.git("commit", "-q", "-m", "config")
    repo.write("scratch/a.txt", "x\n")
    repo.write("deep/er/file.tmp", "x\n")
    repo.write("keep.txt", "x\n")
    repo.cp("save")
    assert set(tree(repo, f"{REF1}^3")) == {"keep.txt"}


SECRETS = [".env", ".env.local", "conf/server.pem", "id_rsa", "keys/id_ed25519", "tls.key"]


def test_secret_named_files_left_out_and_reported(repo: Repo) -> None:
    for name in SECRETS:
        repo.write(name, "SECRET=1\n")
    repo.write("ok.txt", "fine\n")
    proc = repo.cp("save")
    assert proc.stdout.strip() == "checkpoint saved: cp_001"
    assert "warning" in proc.stderr
    for name in (".env", "server.pem", "id_rsa"):
        assert name in proc.stderr
    assert "SECRET" not in proc.stderr
    assert set(tree(repo, f"{REF1}^3")) == {"ok.txt"}
    for name in SECRETS:
        assert name not in tree(repo, REF1)


def test_secrets_left_out_in_json(repo: Repo) -> None:
    for name in SECRETS:
        repo.write(name, "SECRET=1\n")
    data = save_json(repo)
    assert sorted(data["secrets_left_out"]) == sorted(SECRETS)
    assert data["overlay_files"] == 0
    assert len(parents(repo, REF1)) == 2, "nothing but secrets: no overlay commit"


def test_every_dot_env_star_name_is_a_secret(repo: Repo) -> None:
    for name in (".envrc", ".env-production", ".env_local"):
        repo.write(name, "TOKEN=1\n")
    data = save_json(repo)
    assert sorted(data["secrets_left_out"]) == [".env-production", ".env_local", ".envrc"]


def test_secrets_allow_lets_a_file_in(repo: Repo) -> None:
    write_config(repo, "secrets:\n  allow: [.env.example]\n")
    repo.write(".env.example", "SECRET=\n")
    repo.write(".env", "SECRET=1\n")
    data = save_json(repo)
    assert data["secrets_left_out"] == [".env"]
    assert ".env.example" in tree(repo, f"{REF1}^3")


def test_secrets_block_refuses(repo: Repo) -> None:
    write_config(repo, "secrets:\n  on_save: block\n")
    repo.write(".env", "SECRET=1\n")
    proc = repo.cp("save", expect=3)
    assert ".env" in one_line_error(proc.stderr)
    assert checkpoint_refs(repo) == []


def test_untracked_nested_repository_left_out_with_warning(repo: Repo) -> None:
    nested = make_repo(repo.path / "vendor" / "lib")
    nested.write("lib.c", "int x;\n")
    nested.commit_all("lib")
    repo.write("mine.txt", "x\n")
    proc = repo.cp("save")
    assert "vendor/lib" in proc.stderr
    u = tree(repo, f"{REF1}^3")
    assert set(u) == {"mine.txt"}


# --- unusual repositories -------------------------------------------------------------------------


def test_unborn_head(empty_repo: Repo) -> None:
    r = empty_repo
    r.write("staged.txt", "staged\n")
    r.git("add", "staged.txt")
    r.write("staged.txt", "work\n")
    r.write("untracked.txt", "u\n")
    proc = r.cp("save", "-m", "first")
    assert proc.stdout.strip() == "checkpoint saved: cp_001"
    show = r.cp_json("show", "cp_001", "--manifest")
    assert show["manifest"]["base_commit"] is None
    assert show["base_commit"] is None
    assert show["manifest"]["branch"] == "main"
    ps = parents(r, REF1)
    assert len(ps) == 2, "W has parents I and U only"
    index_commit, overlay = ps
    assert parents(r, index_commit) == []
    assert parents(r, overlay) == []
    assert blob(r, index_commit, "staged.txt") == b"staged\n"
    assert blob(r, REF1, "staged.txt") == b"work\n"
    assert set(tree(r, overlay)) == {"untracked.txt"}
    # the other commands cope with the missing base
    assert r.cp("save").stdout.strip() == "unchanged since cp_001"
    listed = r.cp_json("list")
    assert [c["id"] for c in listed["checkpoints"]] == ["cp_001"]
    r.cp("show", "cp_001")
    r.cp("show", "cp_001", "--patch")
    r.cp("diff")


def test_unborn_head_without_overlay(empty_repo: Repo) -> None:
    r = empty_repo
    r.write("a.txt", "a\n")
    r.git("add", "a.txt")
    r.cp("save")
    ps = parents(r, REF1)
    assert len(ps) == 1
    assert set(tree(r, ps[0])) == {"a.txt"}
    assert r.cp_json("show", "@")["base_commit"] is None


def test_empty_unborn_repository(empty_repo: Repo) -> None:
    proc = empty_repo.cp("save")
    assert proc.stdout.strip() == "checkpoint saved: cp_001"
    assert tree(empty_repo, REF1) == {}


def test_detached_head_task(repo: Repo) -> None:
    repo.git("checkout", "-q", "--detach", "HEAD")
    repo.write("README.md", "detached\n")
    data = save_json(repo)
    assert data["task"] == "detached"
    assert data["ref"] == "refs/checkpoints/detached/cp_001"
    manifest = repo.cp_json("show", "@", "--manifest")["manifest"]
    assert manifest["branch"] is None


def test_save_from_subdirectory(repo: Repo) -> None:
    repo.write("src/app.py", "from a subdir\n")
    repo.write("top.txt", "untracked at top\n")
    save_json(repo, cwd=repo.path / "src")
    assert blob(repo, REF1, "src/app.py") == b"from a subdir\n"
    assert "top.txt" in tree(repo, f"{REF1}^3")


def test_linked_worktree(repo: Repo, tmp_path: Path) -> None:
    wt = tmp_path / "wt"
    repo.git("worktree", "add", "-q", "-b", "feature/login", str(wt))
    (wt / "src" / "app.py").write_text("in the worktree\n")
    (wt / "wt-new.txt").write_text("new\n")
    repo.write("src/app.py", "in the main work tree\n")
    data = save_json(repo, cwd=wt)
    assert data["task"] == "feature/login"
    assert data["ref"] == "refs/checkpoints/feature/login/cp_001"
    # visible from the main worktree
    assert checkpoint_refs(repo) == ["refs/checkpoints/feature/login/cp_001"]
    ref = data["ref"]
    assert blob(repo, ref, "src/app.py") == b"in the worktree\n"
    assert set(tree(repo, f"{ref}^3")) == {"wt-new.txt"}
    listed = repo.cp_json("list", "--task", "feature/login")
    assert [c["id"] for c in listed["checkpoints"]] == ["cp_001"]
    assert repo.cp_json("list")["checkpoints"] == [], "main's task has none"
    # the main work tree and its index were left alone
    assert (repo.path / "src" / "app.py").read_text() == "in the main work tree\n"
    assert repo.git("diff", "--cached", "--name-only") == ""
    # and the worktree's index too
    assert (
        subprocess.run(["git", "diff", "--cached", "--quiet"], cwd=wt, check=False).returncode == 0
    )


def test_submodule_recorded_as_gitlink(repo: Repo, tmp_path: Path) -> None:
    other = make_repo(tmp_path / "other")
    other.write("lib.txt", "v1\n")
    first = other.commit_all("v1")
    repo.git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(other.path), "sub")
    repo.git("commit", "-q", "-m", "add submodule")
    sub = Repo(repo.path / "sub")
    sub.write("lib.txt", "v2\n")
    second = sub.commit_all("v2")
    sub.write("dirty.txt", "untracked inside the submodule\n")
    repo.cp("save")
    w, i = tree(repo, REF1), tree(repo, f"{REF1}^2")
    assert w["sub"] == ("160000", second)
    assert i["sub"] == ("160000", first)
    assert not any(p.startswith("sub/") for p in w)
    overlay = parents(repo, REF1)[2:]
    if overlay:
        assert not any(p.startswith("sub/") for p in tree(repo, overlay[0]))


def test_autocrlf_stores_lf(repo: Repo) -> None:
    repo.write("text.txt", "one\ntwo\n")
    repo.commit_all("text")
    repo.git("config", "core.autocrlf", "true")
    repo.write("text.txt", b"one\r\ntwo\r\nthree\r\n")
    repo.write("new.txt", b"alpha\r\nbeta\r\n")
    repo.cp("save")
    assert blob(repo, REF1, "text.txt") == b"one\ntwo\nthree\n"
    assert blob(repo, f"{REF1}^3", "new.txt") == b"alpha\nbeta\n"
    # exactly what git add would store
    expected = git_bytes(repo.path, "hash-object", "text.txt").strip().decode()
    assert tree(repo, REF1)["text.txt"][1] == expected


def test_gitattributes_eol_crlf_stores_lf(repo: Repo) -> None:
    repo.write(".gitattributes", "*.txt text eol=crlf\n")
    repo.commit_all("attrs")
    repo.write("w.txt", b"a\r\nb\r\n")
    repo.git("add", "w.txt")
    repo.write("w.txt", b"a\r\nb\r\nc\r\n")
    repo.cp("save")
    assert blob(repo, f"{REF1}^2", "w.txt") == b"a\nb\n"
    assert blob(repo, REF1, "w.txt") == b"a\nb\nc\n"


def test_clean_filter_applies_to_tracked_and_overlay(repo: Repo) -> None:
    repo.git("config", "filter.up.clean", "tr a-z A-Z")
    repo.git("config", "filter.up.smudge", "cat")
    repo.write(".gitattributes", "*.up filter=up\n")
    repo.write("t.up", "tracked\n")
    repo.commit_all("filter")
    repo.write("t.up", "tracked again\n")
    repo.write("u.up", "untracked\n")
    repo.cp("save")
    assert blob(repo, REF1, "t.up") == b"TRACKED AGAIN\n"
    assert blob(repo, f"{REF1}^3", "u.up") == b"UNTRACKED\n"


def test_tracked_files_under_excluded_folders_are_still_captured(repo: Repo) -> None:
    repo.write("build/keep.txt", "v1\n")
    repo.git("add", "-f", "build/keep.txt")
    repo.git("commit", "-q", "-m", "tracked build file")
    repo.write("build/keep.txt", "v2\n")
    repo.write("build/new.txt", "excluded\n")
    repo.cp("save")
    assert blob(repo, REF1, "build/keep.txt") == b"v2\n"
    assert "build/new.txt" not in tree(repo, REF1)
    assert len(parents(repo, REF1)) == 2


def test_core_filemode_false_keeps_index_mode(repo: Repo) -> None:
    repo.git("config", "core.fileMode", "false")
    (repo.path / "src" / "app.py").chmod(0o755)
    repo.write("src/app.py", "changed\n", mode=0o755)
    repo.cp("save")
    assert tree(repo, REF1)["src/app.py"][0] == "100644"
    assert blob(repo, REF1, "src/app.py") == b"changed\n"


def test_awkward_message_round_trips(repo: Repo) -> None:
    message = "fix: a # b --- 'q' \"d\" ü {x: [1]} *"
    repo.cp("save", "-m", message)
    row = repo.cp_json("list")["checkpoints"][0]
    assert row["message"] == message
    m = repo.cp_json("show", "@", "--manifest")["manifest"]
    assert m["notes"] == [message]
    assert m["checkpoint_id"] == "cp_001"


def test_untracked_awkward_names(repo: Repo) -> None:
    names = ["-n.txt", "a\nb.txt", "back\\slash", '"quote"', "*star", "[abc]", " lead space"]
    for name in names:
        repo.write(name, name)
    repo.cp("save")
    overlay = parents(repo, REF1)[2]
    assert set(tree(repo, overlay)) == set(names)
    for name in names:
        assert blob(repo, overlay, name) == name.encode()


def test_include_flag_outside_repository_is_bad_usage(repo: Repo) -> None:
    outside = repo.path.parent / "outside.txt"
    outside.write_text("not ours\n")
    proc = repo.cp("save", "--include", str(outside), expect=2)
    one_line_error(proc.stderr)
    assert checkpoint_refs(repo) == []


def test_sparse_checkout_keeps_files_outside_the_cone(repo: Repo) -> None:
    repo.write("docs/guide.md", "guide\n")
    repo.commit_all("docs")
    repo.git("sparse-checkout", "set", "src")
    assert not (repo.path / "docs" / "guide.md").exists()
    repo.write("src/app.py", "edited\n")
    repo.cp("save")
    assert blob(repo, REF1, "docs/guide.md") == b"guide\n", "not-checked-out is not deleted"
    assert blob(repo, REF1, "src/app.py") == b"edited\n"


@pytest.mark.parametrize("bad", [".git/config", ".GIT", "a/../../x", "../x", "/etc/passwd"])
def test_include_flag_must_stay_in_the_work_tree(repo: Repo, bad: str) -> None:
    proc = repo.cp("save", "--include", bad, expect=2)
    one_line_error(proc.stderr)
    assert checkpoint_refs(repo) == []


def test_empty_include_flag_is_bad_usage(repo: Repo) -> None:
    proc = repo.cp("save", "--include", "", expect=2)
    one_line_error(proc.stderr)


def test_unmerged_index_refused(repo: Repo) -> None:
    repo.git("checkout", "-q", "-b", "side")
    repo.write("README.md", "side\n")
    repo.commit_all("side")
    repo.git("checkout", "-q", "main")
    repo.write("README.md", "main\n")
    repo.commit_all("main")
    repo.git("merge", "-q", "side", check=False)
    proc = repo.cp("save", expect=3)
    assert "unmerged" in one_line_error(proc.stderr)
    assert checkpoint_refs(repo) == []


def test_save_while_index_lock_is_held(repo: Repo) -> None:
    lock = repo.path / ".git" / "index.lock"
    lock.write_bytes(b"")
    repo.write("README.md", "edited\n")
    repo.cp("save")
    assert lock.exists(), "someone else's index.lock is theirs"
    assert blob(repo, REF1, "README.md") == b"edited\n"


def test_split_index(repo: Repo) -> None:
    repo.git("config", "core.splitIndex", "true")
    repo.git("update-index", "--split-index")
    repo.write("src/app.py", "staged\n")
    repo.git("add", "src/app.py")
    repo.write("src/app.py", "work\n")
    repo.cp("save")
    assert blob(repo, f"{REF1}^2", "src/app.py") == b"staged\n"
    assert blob(repo, REF1, "src/app.py") == b"work\n"
    assert set(tree(repo, f"{REF1}^2")) == {".gitignore", "README.md", "src/app.py"}


# --- stash compatibility --------------------------------------------------------------------------


def apply_in_clone(repo: Repo, tmp_path: Path, ref: str) -> Repo:
    clone = tmp_path / "clone"
    subprocess.run(
        ["git", "clone", "-q", "--no-local", str(repo.path), str(clone)],
        check=True,
        capture_output=True,
    )
    c = Repo(clone)
    c.git("fetch", "-q", "origin", f"+{ref}:{ref}")
    c.git("stash", "apply", "--index", ref)
    return c


def test_stash_apply_round_trip(repo: Repo, tmp_path: Path) -> None:
    repo.write("bin.dat", os.urandom(500))
    repo.write("run.sh", "#!/bin/sh\n", mode=0o755)
    repo.write("old.txt", "old\n")
    repo.write("dir/deleted-staged.txt", "x\n")
    os.symlink("README.md", repo.path / "link")
    repo.commit_all("base")
    repo.write("bin.dat", os.urandom(400))
    repo.git("add", "bin.dat")
    repo.write("src/app.py", "staged\n")
    repo.git("add", "src/app.py")
    repo.write("src/app.py", "unstaged\n")
    repo.write("README.md", "readme\n", mode=0o755)
    (repo.path / "old.txt").unlink()
    repo.git("rm", "-q", "dir/deleted-staged.txt")
    (repo.path / "link").unlink()
    os.symlink("src/app.py", repo.path / "link")
    repo.write("added.txt", "added\n")
    repo.git("add", "added.txt")
    repo.write("ünïcode dir/fïle.txt", "u\n")
    repo.write("untracked/deep/a/b/c.sh", "#!/bin/sh\n", mode=0o755)
    repo.write("untracked/empty", b"")
    os.symlink("../README.md", repo.path / "untracked" / "ln")
    repo.cp("save")

    want_files = workspace_files(repo.path)
    want_index = repo.git("ls-files", "-s", "-z")
    want_cached = repo.git("diff", "--cached", "--binary")
    want_status = repo.git("status", "--porcelain=v1", "-z", "--untracked-files=all")

    c = apply_in_clone(repo, tmp_path, REF1)
    assert workspace_files(c.path) == want_files
    assert c.git("ls-files", "-s", "-z") == want_index
    assert c.git("diff", "--cached", "--binary") == want_cached
    assert c.git("status", "--porcelain=v1", "-z", "--untracked-files=all") == want_status


def test_stash_apply_in_reset_clone(repo: Repo, tmp_path: Path) -> None:
    """The other route: a clone that moved on, reset hard to the base and cleaned."""
    base = repo.git("rev-parse", "HEAD").strip()
    repo.write("src/app.py", "work\n")
    repo.write("u.txt", "u\n")
    repo.cp("save")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(repo.path), str(clone)], check=True)
    c = Repo(clone)
    c.write("junk.txt", "junk\n")
    c.write("src/app.py", "junk\n")
    c.git("fetch", "-q", "origin", f"+{REF1}:{REF1}")
    c.git("reset", "-q", "--hard", base)
    c.git("clean", "-fdxq")
    c.git("stash", "apply", "--index", REF1)
    assert (clone / "src" / "app.py").read_text() == "work\n"
    assert (clone / "u.txt").read_text() == "u\n"
    assert not (clone / "junk.txt").exists()


# --- dedupe and ids -------------------------------------------------------------------------------


def test_dedupe_then_change(repo: Repo) -> None:
    repo.write("README.md", "one\n")
    assert repo.cp("save").stdout.strip() == "checkpoint saved: cp_001"
    proc = repo.cp("save", "-m", "again")
    assert proc.stdout.strip() == "unchanged since cp_001"
    data = save_json(repo)
    assert data["created"] is False
    assert data["checkpoint_id"] == "cp_001"
    assert checkpoint_refs(repo) == [REF1]
    repo.write("README.md", "two\n")
    assert repo.cp("save").stdout.strip() == "checkpoint saved: cp_002"
    assert checkpoint_refs(repo) == [REF1, REF2]


@pytest.mark.parametrize("change", ["stage", "untracked", "commit", "chmod"])
def test_any_kind_of_change_is_a_new_checkpoint(repo: Repo, change: str) -> None:
    repo.write("README.md", "edited\n")
    repo.cp("save")
    if change == "stage":
        repo.git("add", "README.md")  # same work tree, different index
    elif change == "untracked":
        repo.write("new.txt", "n\n")
    elif change == "commit":
        repo.git("commit", "-q", "-am", "c")  # same files, different base
    else:
        (repo.path / "src" / "app.py").chmod(0o755)
    assert repo.cp("save").stdout.strip() == "checkpoint saved: cp_002"


def test_untracked_content_change_is_a_new_checkpoint(repo: Repo) -> None:
    repo.write("new.txt", "one\n")
    repo.cp("save")
    repo.write("new.txt", "two\n")
    assert repo.cp("save").stdout.strip() == "checkpoint saved: cp_002"


def test_ids_never_reused_after_drop(repo: Repo) -> None:
    repo.write("README.md", "1\n")
    repo.cp("save")
    repo.write("README.md", "2\n")
    repo.cp("save")
    repo.cp("drop", "cp_002")
    assert checkpoint_refs(repo) == [REF1]
    repo.write("README.md", "3\n")
    assert repo.cp("save").stdout.strip() == "checkpoint saved: cp_003"
    repo.cp("drop", "cp_003", "cp_001")
    assert checkpoint_refs(repo) == []
    repo.write("README.md", "4\n")
    assert repo.cp("save").stdout.strip() == "checkpoint saved: cp_004"


def test_ids_are_per_task(repo: Repo) -> None:
    repo.write("README.md", "1\n")
    assert save_json(repo, "--task", "alpha")["checkpoint_id"] == "cp_001"
    assert save_json(repo, "--task", "beta")["checkpoint_id"] == "cp_001"
    repo.write("README.md", "2\n")
    assert save_json(repo, "--task", "alpha")["checkpoint_id"] == "cp_002"
    assert save_json(repo, "--task", "team/beta")["ref"] == "refs/checkpoints/team/beta/cp_001"


@pytest.mark.parametrize("bad", ["bad name", "remotes/x", "cp_001", "a/../b", "x.lock", "-x"])
def test_bad_task_name(repo: Repo, bad: str) -> None:
    proc = repo.cp("save", f"--task={bad}", expect=2)
    one_line_error(proc.stderr)
    assert checkpoint_refs(repo) == []


# --- racy git and leaving the user's files alone --------------------------------------------------


def test_racy_git_same_size_rewrite(repo: Repo) -> None:
    """`git add` then a same-size rewrite in the same second: the index entry looks clean
    by stat alone; only the index's own mtime tells git to look at the content."""
    target = repo.path / "src" / "app.py"
    for _attempt in range(5):
        now = time.time()
        if now - int(now) > 0.5:
            time.sleep(1 - (now - int(now)) + 0.02)
        target.write_text("AAAA\n")
        repo.git("add", "src/app.py")
        target.write_text("BBBB\n")
        index_sec = int((repo.path / ".git" / "index").stat().st_mtime)
        if int(target.stat().st_mtime) == index_sec:
            break
    else:
        pytest.skip("could not rewrite within the same second")
    time.sleep(1.1)  # a copy of the index made now would look newer than the file
    repo.cp("save")
    assert blob(repo, f"{REF1}^2", "src/app.py") == b"AAAA\n"
    assert blob(repo, REF1, "src/app.py") == b"BBBB\n"


def work_tree_state(root: Path) -> dict[str, tuple[int, int, bytes]]:
    return {
        p.relative_to(root).as_posix(): (p.lstat().st_mtime_ns, p.lstat().st_mode, p.read_bytes())
        for p in root.rglob("*")
        if p.is_file() and not p.is_symlink() and ".git" not in p.relative_to(root).parts
    }


def test_save_leaves_index_and_work_tree_alone(repo: Repo) -> None:
    repo.write("src/app.py", "staged\n")
    repo.git("add", "src/app.py")
    repo.write("src/app.py", "unstaged\n")
    repo.write("README.md", "mod\n")
    repo.write("new.txt", "n\n")
    repo.write("x.log", "ignored\n")
    repo.write(".env", "S=1\n")
    repo.git("status", "--porcelain")  # let git refresh its own index first
    index = repo.path / ".git" / "index"
    status_before = repo.git("status", "--porcelain", "--ignored")
    before_bytes, before_mtime = index.read_bytes(), index.stat().st_mtime_ns
    files_before = work_tree_state(repo.path)
    git_dir_before = sorted(p.name for p in (repo.path / ".git").iterdir())

    repo.cp("save")
    repo.cp("save")  # the unchanged path too
    repo.cp("save", "--task", "other", "--include", "x.log")

    assert index.read_bytes() == before_bytes
    assert index.stat().st_mtime_ns == before_mtime
    assert work_tree_state(repo.path) == files_before
    assert repo.git("status", "--porcelain", "--ignored") == status_before
    git_dir_after = sorted(p.name for p in (repo.path / ".git").iterdir())
    assert [n for n in git_dir_after if n not in git_dir_before] == ["checkpoint"]
    assert not (repo.path / ".git" / "index.lock").exists()


# --- concurrency ----------------------------------------------------------------------------------


def run_parallel(jobs: list[tuple[list[str], Path]]) -> list[subprocess.CompletedProcess[str]]:
    procs = [
        subprocess.Popen(
            ["git", "checkpoint", *argv],
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for argv, cwd in jobs
    ]
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=120)
        out.append(subprocess.CompletedProcess(p.args, p.returncode, stdout, stderr))
    return out


def assert_fsck_clean(repo: Repo) -> None:
    proc = subprocess.run(
        ["git", "fsck", "--strict", "--no-progress"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "error" not in proc.stdout + proc.stderr


def test_concurrent_saves_from_eight_worktrees_same_task(repo: Repo, tmp_path: Path) -> None:
    worktrees = []
    for n in range(8):
        wt = tmp_path / f"wt{n}"
        repo.git("worktree", "add", "-q", "-b", f"b{n}", str(wt))
        (wt / "src" / "app.py").write_text(f"change {n}\n")
        (wt / f"only-{n}.txt").write_text(f"{n}\n")
        worktrees.append(wt)
    results = run_parallel([(["save", "--json", "--task", "shared"], wt) for wt in worktrees])
    for r in results:
        assert r.returncode == 0, r.stderr
    datas = [json.loads(r.stdout) for r in results]
    ids = [d["checkpoint_id"] for d in datas]
    assert sorted(ids) == [f"cp_{n:03d}" for n in range(1, 9)]
    assert all(d["created"] for d in datas)
    for n, d in enumerate(datas):
        assert blob(repo, d["ref"], "src/app.py") == f"change {n}\n".encode()
        assert set(tree(repo, f"{d['ref']}^3")) == {f"only-{n}.txt"}
    assert len(checkpoint_refs(repo)) == 8
    assert_fsck_clean(repo)


def test_concurrent_saves_distinct_tasks(repo: Repo) -> None:
    repo.write("src/app.py", "shared change\n")
    repo.write("u.txt", "u\n")
    results = run_parallel([(["save", "--json", "--task", f"t{n}"], repo.path) for n in range(8)])
    for r in results:
        assert r.returncode == 0, r.stderr
    refs = sorted(json.loads(r.stdout)["ref"] for r in results)
    assert refs == [f"refs/checkpoints/t{n}/cp_001" for n in range(8)]
    assert sorted(checkpoint_refs(repo)) == refs
    assert_fsck_clean(repo)


def test_concurrent_saves_same_task_same_state(repo: Repo) -> None:
    repo.write("src/app.py", "shared change\n")
    results = run_parallel([(["save", "--json"], repo.path) for _ in range(8)])
    for r in results:
        assert r.returncode == 0, r.stderr
    datas = [json.loads(r.stdout) for r in results]
    assert sum(d["created"] for d in datas) == 1
    assert {d["checkpoint_id"] for d in datas} == {"cp_001"}
    assert checkpoint_refs(repo) == [REF1]
    assert_fsck_clean(repo)


def test_lock_held_past_its_wait_is_refused(repo: Repo) -> None:
    import fcntl

    repo.cp("save")
    repo.git("config", "checkpoint.lockTimeout", "0.5")
    repo.write("README.md", "changed\n")
    lock = repo.path / ".git" / "checkpoint" / "lock"
    with lock.open("a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        started = time.monotonic()
        proc = repo.cp("save", expect=3)
        assert time.monotonic() - started < 20
        assert "lock" in one_line_error(proc.stderr).lower() or "running" in proc.stderr
    assert checkpoint_refs(repo) == [REF1]
    repo.cp("save")  # and once it is free, the save goes through
    assert checkpoint_refs(repo) == [REF1, REF2]


# --- guards ---------------------------------------------------------------------------------------


def test_overlay_file_limit(repo: Repo) -> None:
    write_config(repo, "limits: {overlay_max_files: 10}\n")
    repo.git("add", ".checkpoint.yaml")
    repo.git("commit", "-q", "-m", "config")
    for n in range(12):
        repo.write(f"generated/out/f{n}.txt", f"{n}\n")
    repo.write("one.txt", "1\n")
    proc = repo.cp("save", expect=3)
    line = one_line_error(proc.stderr)
    assert "generated/" in line
    assert "untracked.exclude" in line
    assert proc.stdout == ""
    assert checkpoint_refs(repo) == []
    assert repo.cp_json("log")["events"] == []
    # the suggested exclude makes it fit
    write_config(repo, "limits: {overlay_max_files: 10}\nuntracked: {exclude: [generated/]}\n")
    repo.cp("save")
    assert set(tree(repo, f"{REF1}^3")) == {"one.txt"}


def test_overlay_byte_limit(repo: Repo) -> None:
    write_config(repo, "limits: {overlay_max_bytes: 1KiB}\n")
    repo.git("add", ".checkpoint.yaml")
    repo.git("commit", "-q", "-m", "config")
    repo.write("data/big/blob.bin", os.urandom(2048))
    repo.write("small.txt", "s\n")
    proc = repo.cp("save", "--json", expect=3)
    line = one_line_error(proc.stderr)
    assert "data/big/" in line
    assert "untracked.exclude" in line
    if proc.stdout.strip():  # an error under --json may be one JSON object, nothing else
        assert isinstance(json.loads(proc.stdout), dict)
    assert checkpoint_refs(repo) == []


def test_overlay_limit_exactly_at_limit_is_fine(repo: Repo) -> None:
    write_config(repo, "limits: {overlay_max_files: 3}\n")
    repo.write("a/1", "1\n")
    repo.write("a/2", "2\n")
    assert save_json(repo)["overlay_files"] == 3


# --- manifest, message, reflog --------------------------------------------------------------------

MANIFEST_KEYS = {
    "run_id",
    "repo",
    "task",
    "checkpoint_id",
    "base_commit",
    "branch",
    "created_at",
    "restore_strategy",
    "tracked_files",
    "untracked",
    "verifiers",
    "expected_clean_after_restore",
    "notes",
    "hypothesis",
    "next_move",
    "auto",
}


def test_manifest_fields(repo: Repo) -> None:
    import yaml

    repo.git("remote", "add", "origin", "https://github.com/owner/name.git")
    write_config(
        repo,
        "untracked:\n  include: [tmp/fixtures/]\n  exclude: [scratch/]\n"
        "verifiers:\n  - {name: unit, command: pytest -q, required: true}\n"
        "  - {name: smoke, command: make smoke, required: false}\n",
    )
    base = repo.git("rev-parse", "HEAD").strip()
    repo.write("README.md", "edited\n")
    repo.cp(
        "save",
        "-m",
        "before_html_template_edit",
        "--hypothesis",
        "the card URL is dropped",
        "--next",
        "rerun the link check",
    )
    shown = repo.cp_json("show", "cp_001", "--manifest")
    m = shown["manifest"]
    assert set(m) >= MANIFEST_KEYS
    assert m["repo"] == "owner/name"
    assert m["task"] == "main"
    assert m["checkpoint_id"] == "cp_001"
    assert m["base_commit"] == base
    assert re.fullmatch(r"[0-9a-f]{40}", m["base_commit"])
    assert m["branch"] == "main"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", str(m["created_at"]))
    assert m["restore_strategy"] == "git_plus_overlay"
    assert m["tracked_files"] == {"from_git": True}
    assert "tmp/fixtures/" in m["untracked"]["include"]
    assert "scratch/" in m["untracked"]["exclude"]
    assert "node_modules/" in m["untracked"]["exclude"]
    assert m["verifiers"] == [
        {"name": "unit", "command": "pytest -q", "required": True},
        {"name": "smoke", "command": "make smoke", "required": False},
    ]
    assert m["expected_clean_after_restore"] is True
    assert m["notes"] == ["before_html_template_edit"]
    assert m["hypothesis"] == "the card URL is dropped"
    assert m["next_move"] == "rerun the link check"
    assert m["auto"] is False
    assert str(m["run_id"]).startswith("run_")
    # the same manifest is plain YAML in the commit message, after a blank line
    raw = repo.git("cat-file", "-p", REF1)
    message = raw.split("\n\n", 1)[1]
    summary, _, body = message.partition("\n\n")
    assert summary == "checkpoint cp_001 on main: before_html_template_edit"
    assert yaml.safe_load(body) == m


def test_manifest_repo_from_scp_url_and_auto_flag(repo: Repo) -> None:
    repo.git("remote", "add", "origin", "git@github.com:acme/widgets.git")
    repo.write("README.md", "x\n")
    repo.cp("save", "--auto")
    m = repo.cp_json("show", "@", "--manifest")["manifest"]
    assert m["repo"] == "acme/widgets"
    assert m["auto"] is True
    assert m["notes"] == []
    listed = repo.cp_json("list")["checkpoints"]
    assert listed[0]["auto"] is True


def test_no_message_summary(repo: Repo) -> None:
    repo.cp("save")
    first = repo.git("log", "-1", "--format=%s", REF1).strip()
    assert first.startswith("checkpoint cp_001 on main:")
    assert repo.cp_json("list")["checkpoints"][0]["message"] == ""


def test_seed_verifier_form_in_manifest(repo: Repo) -> None:
    write_config(repo, "verifier: {command: python3 check.py}\n")
    repo.cp("save")
    m = repo.cp_json("show", "@", "--manifest")["manifest"]
    assert len(m["verifiers"]) == 1
    assert m["verifiers"][0]["command"] == "python3 check.py"
    assert m["verifiers"][0]["required"] is True


def test_ref_has_reflog(repo: Repo) -> None:
    repo.cp("save")
    log = repo.git("reflog", "show", "--format=%H %gs", REF1).strip().splitlines()
    assert len(log) == 1
    oid, _, reason = log[0].partition(" ")
    assert oid == repo.git("rev-parse", REF1).strip()
    assert "cp_001" in reason


def test_checkpoints_survive_gc(repo: Repo) -> None:
    repo.write("src/app.py", "work\n")
    repo.write("u.txt", "u\n")
    repo.cp("save")
    repo.git("gc", "-q", "--prune=now")
    assert blob(repo, f"{REF1}^3", "u.txt") == b"u\n"
    assert blob(repo, REF1, "src/app.py") == b"work\n"
    assert_fsck_clean(repo)


def test_origin_credentials_never_reach_the_manifest(repo: Repo) -> None:
    repo.git("remote", "add", "origin", "https://bob:s3cr3t-token@github.com/owner/name.git")
    repo.cp("save")
    raw = repo.git("cat-file", "commit", REF1)
    assert "s3cr3t" not in raw
    assert repo.cp_json("show", "@", "--manifest")["manifest"]["repo"] == "owner/name"


# --- list and log ---------------------------------------------------------------------------------


def test_list(repo: Repo) -> None:
    assert repo.cp("list").stdout.strip() == "no checkpoints in task 'main'"
    repo.write("README.md", "1\n")
    repo.cp("save", "-m", "first")
    repo.write("u1.txt", "u\n")
    repo.write("u2.txt", "uu\n")
    repo.cp("save", "-m", "second")
    repo.cp("save", "--task", "other", "-m", "elsewhere")
    data = repo.cp_json("list")
    assert data["task"] == "main"
    rows = data["checkpoints"]
    assert [r["id"] for r in rows] == ["cp_001", "cp_002"]
    assert [r["message"] for r in rows] == ["first", "second"]
    assert [r["overlay_files"] for r in rows] == [0, 2]
    assert rows[1]["overlay_bytes"] == 5
    assert all(r["status"] == "candidate" for r in rows)
    assert rows[0]["commit"] == repo.git("rev-parse", REF1).strip()
    human = repo.cp("list").stdout.splitlines()
    assert len(human) == 2
    assert human[0].startswith("cp_001") and "first" in human[0]
    assert "+2 untracked" in human[1]
    every = repo.cp_json("list", "--all")["checkpoints"]
    assert sorted(r["name"] for r in every) == ["main/cp_001", "main/cp_002", "other/cp_001"]
    other = repo.cp_json("list", "--task", "other")["checkpoints"]
    assert [r["name"] for r in other] == ["other/cp_001"]


def test_log_newest_first(repo: Repo) -> None:
    assert repo.cp_json("log")["events"] == []
    repo.write("README.md", "1\n")
    repo.cp("save")
    repo.cp("save")  # unchanged: not an operation
    repo.write("README.md", "2\n")
    repo.cp("save")
    repo.cp("drop", "cp_001")
    events = repo.cp_json("log")["events"]
    assert [(e["op"], e["checkpoint"]) for e in events] == [
        ("drop", "cp_001"),
        ("save", "cp_002"),
        ("save", "cp_001"),
    ]
    for e in events:
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", e["at"])
    assert [e["op"] for e in repo.cp_json("log", "-n", "1")["events"]] == ["drop"]
    human = repo.cp("log").stdout.splitlines()
    assert len(human) == 3
    assert "drop" in human[0] and "cp_001" in human[0]
    assert "save" in human[2] and "cp_001" in human[2]


def test_log_skips_a_damaged_line(repo: Repo) -> None:
    repo.cp("save")
    log_file = repo.path / ".git" / "checkpoint" / "events.jsonl"
    with log_file.open("a") as fh:
        fh.write("{not json\n")
    repo.write("README.md", "2\n")
    repo.cp("save")
    events = repo.cp_json("log")["events"]
    assert [e["checkpoint"] for e in events] == ["cp_002", "cp_001"]


# --- --json everywhere, and errors ----------------------------------------------------------------


def test_every_command_prints_one_json_object(repo: Repo) -> None:
    def check(*args: str) -> dict:
        proc = repo.cp(*args, "--json")
        data = json.loads(proc.stdout)  # the whole of stdout is one JSON value
        assert isinstance(data, dict)
        assert proc.stdout.count("\n") == 1 and proc.stdout.endswith("\n")
        return data

    check("list")
    check("log")
    repo.write("README.md", "a\n")
    repo.write(".env", "S=1\n")
    repo.write("new.txt", "n\n")
    assert check("save", "-m", "x")["created"] is True
    assert check("save")["created"] is False
    repo.write("README.md", "b\n")
    check("save")
    check("list")
    check("list", "--all")
    check("show")
    check("show", "cp_001", "--manifest")
    check("show", "cp_001", "--patch")
    check("diff")
    check("diff", "cp_001", "cp_002")
    check("diff", "cp_002", "cp_002")
    check("log")
    check("drop", "cp_002")


def test_outside_a_repository(tmp_path: Path) -> None:
    outside = tmp_path / "nowhere"
    outside.mkdir()
    env = {"GIT_CEILING_DIRECTORIES": str(tmp_path)}
    probe = Repo(outside)
    for args in (["save"], ["list"], ["log", "--json"], ["show", "cp_001"]):
        proc = probe.cp(*args, expect=2, env=env)
        assert "not" in one_line_error(proc.stderr).lower()
        if "--json" in args:  # the error is one JSON object on stdout too (design §7)
            assert json.loads(proc.stdout)["exit_code"] == 2
        else:
            assert proc.stdout == ""


@pytest.mark.parametrize("where", ["bare", "git-dir"])
def test_no_work_tree_is_bad_usage(repo: Repo, tmp_path: Path, where: str) -> None:
    if where == "bare":
        cwd = tmp_path / "bare.git"
        subprocess.run(["git", "init", "-q", "--bare", str(cwd)], check=True)
    else:
        cwd = repo.path / ".git"
    proc = repo.cp("list", expect=2, cwd=cwd)
    assert "work tree" in one_line_error(proc.stderr)


def test_debug_shows_traceback(tmp_path: Path) -> None:
    outside = tmp_path / "nowhere"
    outside.mkdir()
    env = {"GIT_CEILING_DIRECTORIES": str(tmp_path), "GIT_CHECKPOINT_DEBUG": "1"}
    proc = Repo(outside).cp("list", expect=None, env=env)
    assert proc.returncode != 0
    assert "Traceback" in proc.stderr


def test_bad_option_is_usage_error(repo: Repo) -> None:
    proc = repo.cp("save", "--no-such-flag", expect=2)
    assert "Traceback" not in proc.stderr
    proc = repo.cp("log", "-n", "0", expect=2)
    assert "Traceback" not in proc.stderr
