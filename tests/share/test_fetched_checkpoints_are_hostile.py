"""Fetched checkpoints are hostile until checked (design.md §9): a malicious clone pushes
hand-made refs, trees and manifests; the victim fetches them. Nothing may be written
outside `refs/checkpoints/remotes/<remote>/`, and restore and verify refuse with nothing
written anywhere."""

from __future__ import annotations

import os
from pathlib import Path

from ..conftest import Repo
from ..helpers import blob, forge_checkpoint, mktree, state
from ..servers import bare_repo, clone, publish


def malicious_clone(url: str, path: Path) -> Repo:
    evil = clone(url, path)
    evil.git("config", "user.name", "mallory")
    return evil


def push_raw(evil: Repo, *refspecs: str) -> None:
    evil.git("push", "-q", "origin", *refspecs)


def refs(repo: Repo) -> list[str]:
    return repo.git("for-each-ref", "--format=%(refname) %(objectname)").splitlines()


def test_fetch_never_writes_outside_the_remote_namespace(repo: Repo, tmp_path: Path) -> None:
    url = bare_repo(tmp_path / "server.git").as_uri()
    victim = publish(repo, url)
    victim.write("x.txt", "mine\n")
    victim.cp("save", "-m", "my own")
    evil = malicious_clone(url, tmp_path / "evil")
    head = evil.git("rev-parse", "HEAD").strip()
    tree = evil.git("rev-parse", "HEAD^{tree}").strip()
    good = forge_checkpoint(evil, tree, task="fine")
    a_blob = blob(evil, b"not a commit\n")
    hostile = {
        "refs/checkpoints/remotes/origin/main/cp_001": good,  # their remotes namespace
        "refs/checkpoints/remotes/x/cp_001": good,
        "refs/checkpoints/main/cp_1": good,  # not an id
        "refs/checkpoints/main/cp_001/cp_002": good,  # a task part named like an id
        "refs/checkpoints/cp_001": good,  # no task
        "refs/checkpoints/-x/cp_001": good,
        "refs/checkpoints/blobby/cp_001": a_blob,  # not a commit
        "refs/heads/evil": head,
        "refs/tags/evil": head,
        "refs/notes/commits": good,
    }
    for ref, oid in hostile.items():
        evil.git("update-ref", ref, oid)
    push_raw(evil, *(f"{ref}:{ref}" for ref in hostile), "refs/checkpoints/fine/cp_099")
    before = refs(victim)
    proc = victim.cp("fetch")
    assert "left out" in proc.stderr
    after = refs(victim)
    added = sorted(set(after) - set(before))
    assert [line.split()[0] for line in added] == ["refs/checkpoints/remotes/origin/fine/cp_099"], (
        added
    )
    assert set(before) <= set(after)  # nothing of ours changed
    assert victim.git("tag").strip() == ""
    names = [c["name"] for c in victim.cp_json("list", "--remote", "origin")["checkpoints"]]
    assert names == ["origin/fine/cp_099"]
    assert [c["name"] for c in victim.cp_json("list")["checkpoints"]] == ["main/cp_001"]


def _hostile_trees(evil: Repo, outside: Path) -> dict[str, tuple[str, str | None]]:
    payload = blob(evil, b"#!/bin/sh\necho pwned > /tmp/pwned\n")
    head_tree = evil.git("rev-parse", "HEAD^{tree}").strip()
    rows = [tuple(line.split(None, 3)) for line in evil.git("ls-tree", head_tree).splitlines()]
    base = [(m, t, o, n) for m, t, o, n in rows]  # type: ignore[misc]
    hooks = mktree(evil, [("100755", "blob", payload, "post-checkout")])
    inner = mktree(evil, [("100644", "blob", payload, "x")])
    link = blob(evil, str(outside).encode())
    return {
        ".git/hooks": (
            mktree(
                evil,
                [
                    *base,
                    ("040000", "tree", mktree(evil, [("040000", "tree", hooks, "hooks")]), ".git"),
                ],
            ),
            None,
        ),
        ".GIT": (mktree(evil, [*base, ("040000", "tree", inner, ".GIT")]), None),
        "..": (mktree(evil, [*base, ("040000", "tree", inner, "..")]), None),
        "symlink then file": (
            mktree(evil, [*base, ("120000", "blob", link, "esc")]),
            mktree(evil, [("040000", "tree", inner, "esc")]),
        ),
        "overlay .git": (
            head_tree,
            mktree(
                evil,
                [("040000", "tree", mktree(evil, [("040000", "tree", hooks, "hooks")]), ".git")],
            ),
        ),
    }


def test_hostile_trees_pushed_and_fetched_are_refused(repo: Repo, tmp_path: Path) -> None:
    url = bare_repo(tmp_path / "server.git").as_uri()
    victim = publish(repo, url)
    victim.write("work.txt", "uncommitted work\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    evil = malicious_clone(url, tmp_path / "evil")
    trees = _hostile_trees(evil, outside)
    for i, (tree, overlay) in enumerate(trees.values()):
        forge_checkpoint(evil, tree, overlay, cp_id=f"cp_{900 + i}", task="evil")
    push_raw(evil, "refs/checkpoints/*:refs/checkpoints/*")
    unsafe = " ".join(victim.cp_json("fetch")["unsafe"])
    git_dir_before = sorted(os.listdir(victim.path / ".git"))
    at_fetch = 0
    for i, label in enumerate(trees):
        name = f"origin/evil/cp_{900 + i}"
        if f"evil/cp_{900 + i} (" in unsafe:  # git's object check refused it: never written
            assert not victim.git("for-each-ref", f"refs/checkpoints/remotes/{name}"), label
            victim.cp("restore", name, expect=2)
            at_fetch += 1
            continue
        before = state(victim)
        refs_before = refs(victim)
        for argv in (["restore", name], ["verify", name]):
            proc = victim.cp(*argv, expect=3)
            assert "unsafe" in proc.stderr, (label, argv, proc.stderr)
            assert "Traceback" not in proc.stderr
            assert state(victim) == before, (label, argv)
            assert refs(victim) == refs_before, (label, argv)
        victim.cp("show", name)  # reading is fine; nothing is written
        victim.cp("review", "origin/evil")
    assert 0 < at_fetch < len(trees)  # some stopped by git's check, the rest by restore's
    assert not victim.git("fsck", "--strict", "--no-dangling").strip()
    assert list(outside.iterdir()) == []
    assert not (victim.path / ".git" / "hooks").exists() or not any(
        (victim.path / ".git" / "hooks").iterdir()
    )
    assert set(os.listdir(victim.path / ".git")) - set(git_dir_before) <= {"checkpoint"}


def _forge_with_manifest(evil: Repo, manifest: str, task: str, cp_id: str) -> None:
    head = evil.git("rev-parse", "HEAD").strip()
    tree = evil.git("rev-parse", "HEAD^{tree}").strip()
    index = evil.git("commit-tree", tree, "-p", head, "-m", "index").strip()
    body = f"checkpoint {cp_id} on {task}: forged\n\nbase_commit: {head}\n{manifest}"
    commit = evil.git("commit-tree", tree, "-p", head, "-p", index, "-m", body).strip()
    evil.git("update-ref", f"refs/checkpoints/{task}/{cp_id}", commit)


def test_fetched_manifest_is_read_like_config(repo: Repo, tmp_path: Path) -> None:
    url = bare_repo(tmp_path / "server.git").as_uri()
    victim = publish(repo, url)
    evil = malicious_clone(url, tmp_path / "evil")
    cases = {
        "cp_001": "task: t\nrun_hook: rm -rf /\n",  # unknown field
        "cp_002": "task: [1, 2]\n",  # wrong type
        "cp_003": "verifiers: [{name: x, command: y, shell: z}]\n",  # unknown nested
        "cp_004": "auto: false\noverlay: {files: many}\n",
    }
    for cp_id, manifest in cases.items():
        _forge_with_manifest(evil, manifest, "t", cp_id)
    push_raw(evil, "refs/checkpoints/*:refs/checkpoints/*")
    victim.cp("fetch")
    for cp_id in cases:
        before = state(victim)
        for argv in (["show"], ["restore"], ["verify"], ["diff"], ["scan"]):
            proc = victim.cp(*argv, f"origin/t/{cp_id}", expect=2)
            assert "malformed" in proc.stderr, (cp_id, argv, proc.stderr)
        assert state(victim) == before
    timeline = victim.cp_json("review", "origin/t")["timeline"]["entries"]
    assert all(e["malformed"] for e in timeline)


def test_verifier_commands_in_a_fetched_manifest_are_never_run(repo: Repo, tmp_path: Path) -> None:
    url = bare_repo(tmp_path / "server.git").as_uri()
    victim = publish(repo, url)  # local config: verifier `unit` = test -f src/app.py
    marker = tmp_path / "ran-the-remote-command"
    evil = malicious_clone(url, tmp_path / "evil")
    manifest = (
        f"task: t\nverifiers:\n  - {{name: unit, command: touch {marker}, required: true}}\n"
        f"  - {{name: extra, command: touch {marker}, required: true}}\n"
    )
    _forge_with_manifest(evil, manifest, "t", "cp_001")
    push_raw(evil, "refs/checkpoints/*:refs/checkpoints/*")
    victim.cp("fetch")
    result = victim.cp_json("verify", "origin/t/cp_001")
    assert [r["command"] for r in result["results"]] == ["test -f src/app.py"]
    assert not marker.exists()
    victim.write(".checkpoint.yaml", "")  # no local verifiers: nothing runs at all
    proc = victim.cp("verify", "origin/t/cp_001", expect=2)
    assert "no verifiers configured" in proc.stderr
    assert not marker.exists()


def test_printed_text_from_a_fetched_checkpoint_has_no_terminal_escapes(
    repo: Repo, tmp_path: Path
) -> None:
    url = bare_repo(tmp_path / "server.git").as_uri()
    victim = publish(repo, url)
    evil = malicious_clone(url, tmp_path / "evil")
    head = evil.git("rev-parse", "HEAD").strip()
    tree = evil.git("rev-parse", "HEAD^{tree}").strip()
    index = evil.git("commit-tree", tree, "-p", head, "-m", "index").strip()
    body = f"checkpoint cp_001 on t: \x1b]0;owned\x07\x1b[2J\n\nbase_commit: {head}\ntask: t\n"
    commit = evil.git("commit-tree", tree, "-p", head, "-p", index, "-m", body).strip()
    evil.git("update-ref", "refs/checkpoints/t/cp_001", commit)
    push_raw(evil, "refs/checkpoints/*:refs/checkpoints/*")
    victim.cp("fetch")
    for argv in (["list", "--remote", "origin"], ["review", "origin/t"]):
        out = victim.cp(*argv).stdout
        assert "\x1b" not in out and "\x07" not in out, argv


def test_hand_made_trees_with_slashed_names_are_refused(repo: Repo, tmp_path: Path) -> None:
    """Names git's own tools never write (`/tmp/x`, `a/../../x`), in raw tree
    objects pushed from a malicious clone: unreadable, so unsafe, nothing written.
    """
    url = bare_repo(tmp_path / "server.git").as_uri()
    victim = publish(repo, url)
    evil = malicious_clone(url, tmp_path / "evil")
    payload = bytes.fromhex(blob(evil, b"pwned\n"))
    head_tree = evil.git("rev-parse", "HEAD^{tree}").strip()
    entries = evil.git("ls-tree", head_tree).splitlines()
    base = b"".join(
        f"{mode} {name}".encode() + b"\0" + bytes.fromhex(oid)
        for mode, _, oid, name in (e.replace("\t", " ").split(" ", 3) for e in entries)
    )
    for i, name in enumerate([b"/tmp/pwned-by-checkpoint", b"a/../../x"]):
        raw = base + b"100644 " + name + b"\0" + payload
        tree = evil.git(
            "hash-object", "-t", "tree", "--literally", "-w", "--stdin", input=raw
        ).strip()
        forge_checkpoint(evil, tree, cp_id=f"cp_{800 + i}", task="raw")
    push_raw(evil, "refs/checkpoints/*:refs/checkpoints/*")
    before = state(victim)
    fetched = victim.cp("fetch").stdout
    assert "refused 2 checkpoints that fail git's object check" in fetched
    for i in range(2):
        assert f"raw/cp_{800 + i} (" in fetched
        for argv in (["restore"], ["verify"]):
            proc = victim.cp(*argv, f"origin/raw/cp_{800 + i}", expect=2)
            assert "Traceback" not in proc.stderr, proc.stderr
            assert state(victim) == before
    assert not victim.git("fsck", "--strict", "--no-dangling").strip()
    assert not Path("/tmp/pwned-by-checkpoint").exists()
    assert not (tmp_path / "x").exists()
