"""`git checkpoint mcp`: which repository a tool works in. `repo` names it (a folder of its
work tree); without it, a client that declares roots is asked for them, and the one root
that is a git work tree is the default, in both ways the protocol asks (a `roots/list`
request during the call, or the call answered "input required" and made again); with
none or several, the folder the server was started in."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..conftest import Repo, make_repo

mcp = pytest.importorskip("mcp", reason="the mcp extra is not installed")

from .mcp_session import payload, session  # noqa: E402


def saved_in(repo: Repo) -> list[str]:
    return [c["message"] for c in repo.cp_json("list", "--all")["checkpoints"]]


def test_repo_names_the_repository_a_tool_works_in(tmp_path: Path) -> None:
    plain = tmp_path / "plain"  # the server's folder: no repository
    plain.mkdir()
    one, other = make_repo(tmp_path / "one"), make_repo(tmp_path / "other")
    (one.path / "src").mkdir()
    _, results = session(
        plain,
        [
            ("status", {}),
            ("save", {"message": "by path", "repo": str(one.path / "src")}),
            ("save", {"message": "relative", "repo": "../other"}),
            ("status", {"repo": str(tmp_path / "missing")}),
        ],
    )
    nowhere, by_path, relative, missing = results
    assert nowhere.is_error and payload(nowhere)["exit_code"] == 2
    assert "not inside a git work tree" in payload(nowhere)["error"]
    assert not by_path.is_error and not relative.is_error
    assert saved_in(one) == ["by path"] and saved_in(other) == ["relative"]
    assert missing.is_error and payload(missing)["exit_code"] == 2
    assert payload(missing)["error"] == f"repo {str(tmp_path / 'missing')!r}: no such folder"


@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_the_one_root_that_is_a_work_tree_is_the_default(tmp_path: Path, mode: str) -> None:
    plain, docs = tmp_path / "plain", tmp_path / "docs"
    plain.mkdir()
    docs.mkdir()
    rooted, named = make_repo(tmp_path / "rooted"), make_repo(tmp_path / "named")
    asked: list[int] = []
    _, results = session(
        plain,
        [("save", {"message": "from the root"}), ("save", {"message": "x", "repo": "../named"})],
        roots=[docs, rooted.path],
        asked=asked,
        mode=mode,
    )
    assert not any(r.is_error for r in results), [r.content for r in results]
    assert saved_in(rooted) == ["from the root"]
    assert saved_in(named) == ["x"]  # `repo` wins over the roots, and they are not asked for
    assert len(asked) == 1


def test_with_several_work_trees_among_the_roots_the_server_folder_is_the_default(
    tmp_path: Path,
) -> None:
    server, first, second = (make_repo(tmp_path / name) for name in ("server", "a", "b"))
    _, (result,) = session(
        server.path, [("save", {"message": "here"})], roots=[first.path, second.path]
    )
    assert not result.is_error, result.content
    assert saved_in(server) == ["here"]
    assert saved_in(first) == [] and saved_in(second) == []


def test_roots_in_one_repository_are_one_work_tree(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    repo = make_repo(tmp_path / "work")
    for folder in ("api", "web"):
        (repo.path / folder).mkdir()
    _, (result,) = session(
        plain, [("save", {"message": "one"})], roots=[repo.path / "api", repo.path / "web"]
    )
    assert not result.is_error, result.content
    assert saved_in(repo) == ["one"]
