"""Naming checkpoints (design.md §7): an id in the current task, task/id, a full ref, a
commit id or its prefix, `@` and `@~N` (never a safety checkpoint), and the unknown or
ambiguous names refused with the names that are close."""

from __future__ import annotations

import json

from ..conftest import Repo
from ..helpers import checkpoint_refs, configure, one_line_error, rev, verifier
from .conftest import shown_commit

# --- the accepted forms ---------------------------------------------------------------------------


def test_id_in_current_task(three: Repo) -> None:
    for n in (1, 2, 3):
        assert shown_commit(three, f"cp_00{n}") == rev(three, f"refs/checkpoints/main/cp_00{n}")


def test_task_slash_id(three: Repo) -> None:
    assert shown_commit(three, "other/cp_001") == rev(three, "refs/checkpoints/other/cp_001")
    assert shown_commit(three, "main/cp_002") == rev(three, "refs/checkpoints/main/cp_002")


def test_full_ref(three: Repo) -> None:
    ref = "refs/checkpoints/other/cp_001"
    data = three.cp_json("show", ref)
    assert data["commit"] == rev(three, ref)
    assert data["task"] == "other"


def test_commit_id_prefix(three: Repo) -> None:
    commit = rev(three, "refs/checkpoints/main/cp_002")
    for length in (7, 12, 40):
        assert three.cp_json("show", commit[:length])["checkpoint_id"] == "cp_002"
    assert three.cp_json("show", commit[:8].upper())["checkpoint_id"] == "cp_002"


def test_commit_id_of_another_task(three: Repo) -> None:
    commit = rev(three, "refs/checkpoints/other/cp_001")
    data = three.cp_json("show", commit[:10])
    assert (data["task"], data["checkpoint_id"]) == ("other", "cp_001")


def test_at_and_at_tilde(three: Repo) -> None:
    assert shown_commit(three, "@") == rev(three, "refs/checkpoints/main/cp_003")
    assert shown_commit(three, "@~1") == rev(three, "refs/checkpoints/main/cp_002")
    assert shown_commit(three, "@~2") == rev(three, "refs/checkpoints/main/cp_001")
    # show's default is the latest
    assert three.cp_json("show")["checkpoint_id"] == "cp_003"
    proc = three.cp("show", "@~3", expect=2)
    one_line_error(proc.stderr)


def test_at_follows_the_task(three: Repo) -> None:
    three.git("checkout", "-q", "-b", "other")
    assert three.cp_json("show", "@")["ref"] == "refs/checkpoints/other/cp_001"
    assert three.cp_json("show", "cp_001")["task"] == "other"
    three.cp("show", "@~1", expect=2)


def test_slashed_task_names(repo: Repo) -> None:
    repo.write("README.md", "x\n")
    repo.cp("save", "--task", "team/fix-card")
    ref = "refs/checkpoints/team/fix-card/cp_001"
    assert shown_commit(repo, "team/fix-card/cp_001") == rev(repo, ref)
    assert shown_commit(repo, ref) == rev(repo, ref)
    repo.git("checkout", "-q", "-b", "team/fix-card")
    assert shown_commit(repo, "cp_001") == rev(repo, ref)
    assert shown_commit(repo, "@") == rev(repo, ref)


def test_ids_past_999_sort_by_number(repo: Repo) -> None:
    repo.write("README.md", "1\n")
    repo.cp("save")
    first = rev(repo, "refs/checkpoints/main/cp_001")
    repo.git("update-ref", "refs/checkpoints/main/cp_999", first)
    repo.write("README.md", "2\n")
    data = json.loads(repo.cp("save", "--json").stdout)
    assert data["checkpoint_id"] == "cp_1000"
    assert shown_commit(repo, "@") == data["commit"]
    assert shown_commit(repo, "@~1") == first
    assert repo.cp_json("show", "cp_1000")["commit"] == data["commit"]
    ids = [c["id"] for c in repo.cp_json("list")["checkpoints"]]
    assert ids == ["cp_001", "cp_999", "cp_1000"]


def test_at_skips_safety_checkpoints(repo: Repo) -> None:
    """A safety checkpoint made with plumbing, in the stored format (§3, §5)."""
    repo.write("README.md", "1\n")
    repo.cp("save")
    repo.write("README.md", "2\n")
    repo.cp("save")
    second = rev(repo, "refs/checkpoints/main/cp_002")
    message = repo.git("cat-file", "commit", second).split("\n\n", 1)[1]
    message = message.replace("cp_002", "cp_003").replace("auto: false", "auto: pre-restore")
    assert "auto: pre-restore" in message
    tree = rev(repo, f"{second}^{{tree}}")
    parent_args = []
    for p in repo.git("rev-list", "--no-walk", "--parents", "-n", "1", second).split()[1:]:
        parent_args += ["-p", p]
    safety = repo.git("commit-tree", tree, *parent_args, input=message.encode()).strip()
    repo.git("update-ref", "refs/checkpoints/main/cp_003", safety)
    assert shown_commit(repo, "@") == second
    assert shown_commit(repo, "@~1") == rev(repo, "refs/checkpoints/main/cp_001")
    assert shown_commit(repo, "cp_003") == safety
    assert repo.cp_json("show", "cp_003")["safety"] is True
    rows = repo.cp_json("list")["checkpoints"]
    assert [r["safety"] for r in rows] == [False, False, True]


# --- unknown names --------------------------------------------------------------------------------


CLOSE = [
    ("cp_01", "cp_001"),
    ("cp_004", "cp_00"),
    ("mian/cp_002", "main/cp_002"),
    ("othr/cp_001", "other/cp_001"),
]


def test_unknown_name_suggests_close_names(three: Repo) -> None:
    for name, suggestion in CLOSE:
        for command in ("show", "diff", "drop"):
            proc = three.cp(command, name, expect=2)
            line = one_line_error(proc.stderr)
            assert name in line
            assert suggestion in line, (command, name)
            assert proc.stdout == ""
    assert len(checkpoint_refs(three)) == 4


def test_other_unknown_names(three: Repo) -> None:
    names = ["refs/checkpoints/main/cp_009", "deadbeef", "abc", "@~", "@~x", "HEAD", "main", ""]
    for name in names:
        proc = three.cp("show", name, expect=2)
        one_line_error(proc.stderr)


def test_ambiguous_commit_prefix(repo: Repo) -> None:
    """Two checkpoint commits made to share a 6-hex prefix (a pair searched for offline)."""
    import hashlib

    repo.write("README.md", "1\n")
    repo.cp("save")
    raw = repo.git("cat-file", "commit", "refs/checkpoints/main/cp_001")
    header, _, message = raw.partition("\n\n")
    seen: dict[str, str] = {}
    pair: tuple[str, str] | None = None
    for nonce in range(200_000):
        body = f"{header}\n\n{message.replace('notes: []', f'notes: [n{nonce}]')}"
        data = body.encode()
        oid = hashlib.sha1(b"commit %d\0" % len(data) + data).hexdigest()
        if oid[:6] in seen:
            pair = (seen[oid[:6]], body)
            break
        seen[oid[:6]] = body
    assert pair is not None
    oids = []
    for n, body in enumerate(pair, start=2):
        oid = repo.git("hash-object", "-t", "commit", "-w", "--stdin", input=body.encode()).strip()
        repo.git("update-ref", f"refs/checkpoints/main/cp_00{n}", oid)
        oids.append(oid)
    assert oids[0][:6] == oids[1][:6] and oids[0] != oids[1]
    proc = repo.cp("show", oids[0][:6], expect=2)
    assert "ambiguous" in one_line_error(proc.stderr)
    assert repo.cp_json("show", oids[1])["checkpoint_id"] == "cp_003"


def test_base_commit_id_is_not_a_checkpoint(three: Repo) -> None:
    base = rev(three, "HEAD")
    proc = three.cp("show", base[:10], expect=2)
    one_line_error(proc.stderr)


def test_no_checkpoints_yet(repo: Repo) -> None:
    for args in (["show"], ["show", "cp_001"], ["diff"], ["drop", "@"]):
        proc = repo.cp(*args, expect=2)
        one_line_error(proc.stderr)


def test_id_of_other_task_is_not_current(three: Repo) -> None:
    three.git("checkout", "-q", "-b", "fresh")
    proc = three.cp("show", "cp_002", expect=2)
    assert "main/cp_002" in one_line_error(proc.stderr)


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
