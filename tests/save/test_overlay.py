"""The overlay (U): untracked files in a parentless commit, ignored ones left out unless
included, the default excludes, includes and excludes from the configuration and from
`--include`, which must stay in the work tree."""

from __future__ import annotations

import os

import pytest

from ..conftest import Repo, make_repo
from ..helpers import REF1, checkpoint_refs, one_line_error
from .conftest import blob, parents, save_json, tree, write_config


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
    """What is recognised as a dependency tree or a cache stays out, ignored or not;
    source below a folder named like build output is saved."""
    repo.write(".gitignore", "*.log\n")  # (the fixture's ignores node_modules/)
    repo.commit_all("ignore logs only")
    for d in (".tox", ".mypy_cache", ".pytest_cache"):
        repo.write(f"{d}/x.py", "x\n")
    repo.write(".venv/pyvenv.cfg", "home = /usr/bin\n")
    repo.write(".venv/lib/site.py", "x\n")
    repo.write("sub/node_modules/m.js", "x\n")
    repo.write("sub/__pycache__/m.cpython-311.pyc", "x\n")
    for d in ("target", "dist", "build"):
        repo.write(f"{d}/out.txt", "x\n")
    repo.write("kept.txt", "kept\n")
    proc = repo.cp("save")
    assert set(tree(repo, f"{REF1}^3")) == {
        "kept.txt",
        "target/out.txt",
        "dist/out.txt",
        "build/out.txt",
    }
    assert proc.stdout.splitlines()[1].startswith("left out: ")
    left_out = {o["path"]: o["why"] for o in repo.cp_json("show", "@")["left_out"]}
    assert left_out == {
        ".mypy_cache/": "a dependency tree or cache (a default exclude)",
        ".pytest_cache/": "a dependency tree or cache (a default exclude)",
        ".tox/": "a dependency tree or cache (a default exclude)",
        "sub/node_modules/": "a dependency tree or cache (a default exclude)",
        ".venv/": "a virtualenv (pyvenv.cfg)",
        "sub/__pycache__/": "compiled Python",
    }


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
    repo.write("node_modules/.cache/x", "o\n")
    repo.cp("save", "--include", "node_modules/.cache/", "--include", "gen/private/b.txt")
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


def test_untracked_nested_repository_left_out_with_warning(repo: Repo) -> None:
    nested = make_repo(repo.path / "vendor" / "lib")
    nested.write("lib.c", "int x;\n")
    nested.commit_all("lib")
    repo.write("mine.txt", "x\n")
    proc = repo.cp("save")
    assert "left out: vendor/lib/ (a repository of its own)" in proc.stdout
    u = tree(repo, f"{REF1}^3")
    assert set(u) == {"mine.txt"}


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


@pytest.mark.parametrize("bad", [".git/config", ".GIT", "a/../../x", "../x", "/etc/passwd"])
def test_include_flag_must_stay_in_the_work_tree(repo: Repo, bad: str) -> None:
    proc = repo.cp("save", "--include", bad, expect=2)
    one_line_error(proc.stderr)
    assert checkpoint_refs(repo) == []


def test_empty_include_flag_is_bad_usage(repo: Repo) -> None:
    proc = repo.cp("save", "--include", "", expect=2)
    one_line_error(proc.stderr)
