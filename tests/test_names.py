"""Naming checkpoints (design.md §7) and the commands that take names: show, diff, drop."""

from __future__ import annotations

import json
import shlex
import subprocess

import pytest

from tests.conftest import Repo


def rev(repo: Repo, name: str) -> str:
    return repo.git("rev-parse", name).strip()


def checkpoint_refs(repo: Repo) -> list[str]:
    return repo.git("for-each-ref", "--format=%(refname)", "refs/checkpoints/").split()


def shown_commit(repo: Repo, name: str) -> str:
    return repo.cp_json("show", name)["commit"]


def one_line_error(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, f"wanted one line on stderr, got {stderr!r}"
    assert "Traceback" not in stderr
    return lines[0]


@pytest.fixture
def three(repo: Repo) -> Repo:
    """Task main with cp_001..cp_003 and task other with cp_001."""
    for n in (1, 2, 3):
        repo.write("README.md", f"version {n}\n")
        repo.cp("save", "-m", f"save {n}")
    repo.write("README.md", "other\n")
    repo.cp("save", "--task", "other", "-m", "other task")
    return repo


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
    """Two checkpoint commits made to share a 6-hex prefix (found by hashing offline)."""
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


# --- show -----------------------------------------------------------------------------------------


def test_show_human_output(repo: Repo) -> None:
    base = rev(repo, "HEAD")
    repo.write("src/app.py", "print('changed')\n")
    repo.write("notes.md", "n\n")
    repo.cp("save", "-m", "try one", "--hypothesis", "h1", "--next", "n1")
    out = repo.cp("show", "cp_001").stdout
    assert "main/cp_001" in out
    assert rev(repo, "refs/checkpoints/main/cp_001") in out
    assert base in out
    assert "candidate" in out
    assert "try one" in out
    assert "src/app.py" in out
    assert "notes.md" in out
    assert "h1" in out and "n1" in out
    patch = repo.cp("show", "cp_001", "--patch").stdout
    assert "+print('changed')" in patch
    data = repo.cp_json("show", "cp_001", "--patch")
    assert data["overlay_files"] == ["notes.md"]
    assert data["status"] == "candidate"
    assert data["base_commit"] == base
    assert "+print('changed')" in data["patch"]
    manifest_text = repo.cp("show", "cp_001", "--manifest").stdout
    assert "checkpoint_id: cp_001" in manifest_text
    assert "base_commit: " + base in manifest_text


# --- diff -----------------------------------------------------------------------------------------


def test_diff_against_workspace(repo: Repo) -> None:
    repo.write("gone.txt", "g\n")
    repo.commit_all("more")
    repo.write("tmp-note.txt", "was untracked\n")
    repo.cp("save")
    assert "no differences" in repo.cp("diff").stdout
    assert repo.cp_json("diff")["files"] == []
    repo.write("src/app.py", "print('edited')\n")
    repo.write("brand-new.py", "x = 1\n")
    (repo.path / "gone.txt").unlink()
    (repo.path / "tmp-note.txt").unlink()
    repo.write("ignored.log", "never\n")
    out = repo.cp("diff").stdout
    assert "src/app.py" in out
    assert "+print('edited')" in out
    assert "brand-new.py" in out
    assert "ignored.log" not in out
    data = repo.cp_json("diff")
    assert data["target"] == "workspace"
    got = {f["path"]: f["status"] for f in data["files"]}
    assert got == {
        "src/app.py": "M",
        "brand-new.py": "A",
        "gone.txt": "D",
        "tmp-note.txt": "D",
    }


def test_diff_two_checkpoints(repo: Repo) -> None:
    repo.write("README.md", "one\n")
    repo.write("u.txt", "u\n")
    repo.cp("save")
    repo.write("README.md", "two\n")
    (repo.path / "u.txt").unlink()
    repo.write("v.txt", "v\n")
    repo.cp("save")
    os_link = repo.path / "src" / "app.py"
    os_link.unlink()
    os_link.symlink_to("../README.md")
    out = repo.cp("diff", "cp_001", "cp_002").stdout
    assert "-one" in out and "+two" in out
    data = repo.cp_json("diff", "cp_001", "cp_002")
    assert {f["path"]: f["status"] for f in data["files"]} == {
        "README.md": "M",
        "u.txt": "D",
        "v.txt": "A",
    }
    reverse = repo.cp_json("diff", "@", "@~1")
    assert {f["path"]: f["status"] for f in reverse["files"]} == {
        "README.md": "M",
        "u.txt": "A",
        "v.txt": "D",
    }
    # a tracked file that became a symlink is a type change
    ws = repo.cp_json("diff")
    assert {f["path"]: f["status"] for f in ws["files"]} == {"src/app.py": "T"}


def test_diff_mode_change(repo: Repo) -> None:
    repo.cp("save")
    (repo.path / "src" / "app.py").chmod(0o755)
    data = repo.cp_json("diff")
    assert {f["path"]: f["status"] for f in data["files"]} == {"src/app.py": "M"}
    assert "new mode 100755" in repo.cp("diff").stdout


def test_diff_does_not_touch_the_index(repo: Repo) -> None:
    repo.write("README.md", "x\n")
    repo.git("add", "README.md")
    repo.cp("save")
    repo.write("new.txt", "n\n")
    index = repo.path / ".git" / "index"
    before = index.read_bytes(), index.stat().st_mtime_ns
    repo.cp("diff")
    assert (index.read_bytes(), index.stat().st_mtime_ns) == before


# --- drop -----------------------------------------------------------------------------------------


def test_drop_prints_the_undo_command(three: Repo) -> None:
    ref = "refs/checkpoints/main/cp_002"
    commit = rev(three, ref)
    out = three.cp("drop", "cp_002").stdout
    assert ref not in checkpoint_refs(three)
    assert f"git update-ref {ref} {commit}" in out
    undo = next(line for line in out.splitlines() if "git update-ref" in line)
    argv = shlex.split(undo[undo.index("git update-ref") :])
    subprocess.run(argv, cwd=three.path, check=True)
    assert rev(three, ref) == commit
    assert three.cp_json("show", "cp_002")["commit"] == commit


def test_drop_json_and_several_names(three: Repo) -> None:
    other = rev(three, "refs/checkpoints/other/cp_001")
    first = rev(three, "refs/checkpoints/main/cp_001")
    data = three.cp_json("drop", "other/cp_001", first[:9], "@")
    dropped = {d["ref"]: d["commit"] for d in data["dropped"]}
    assert set(dropped) == {
        "refs/checkpoints/other/cp_001",
        "refs/checkpoints/main/cp_001",
        "refs/checkpoints/main/cp_003",
    }
    assert dropped["refs/checkpoints/other/cp_001"] == other
    assert dropped["refs/checkpoints/main/cp_001"] == first
    assert checkpoint_refs(three) == ["refs/checkpoints/main/cp_002"]


def test_drop_with_an_unknown_name_drops_nothing(three: Repo) -> None:
    before = checkpoint_refs(three)
    proc = three.cp("drop", "cp_001", "cp_042", "cp_002", expect=2)
    assert "cp_042" in one_line_error(proc.stderr)
    assert checkpoint_refs(three) == before
    assert three.cp_json("log")["events"][0]["op"] == "save"


def test_drop_same_checkpoint_twice_in_one_call(three: Repo) -> None:
    data = three.cp_json("drop", "cp_001", "main/cp_001")
    assert len(data["dropped"]) == 1
    three.cp("drop", "cp_001", expect=2)


def test_drop_is_logged(three: Repo) -> None:
    commit = rev(three, "refs/checkpoints/main/cp_003")
    three.cp("drop", "@")
    event = three.cp_json("log")["events"][0]
    assert event["op"] == "drop"
    assert event["checkpoint"] == "cp_003"
    assert event["commit"] == commit
    assert three.cp_json("show", "@")["checkpoint_id"] == "cp_002"
