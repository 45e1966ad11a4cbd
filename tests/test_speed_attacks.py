"""Attacks on the fast restore and exit paths (commits 180239d..8802c9c): trees read
through one `cat-file --batch` child, `diff-tree` for the changed paths, the flat
staging folder with raw blobs when no attribute converts, and os._exit after flushing.

Each restore is compared with what `git checkout` of the same checkpoint writes (a fresh
detached worktree of the checkpoint commit, same repository config). Passing tests
document what holds; `xfail(strict=True)` tests are findings.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from .conftest import Repo
from .helpers import blob, fingerprint, forge_checkpoint, mktree

# --- helpers -------------------------------------------------------------------------


def _raw_tree(repo: Repo, entries: list[tuple[str, str, str]]) -> str:
    """A tree written byte for byte from (mode, name, id) rows: nothing is checked."""
    data = b"".join(
        m.encode() + b" " + os.fsencode(n) + b"\0" + bytes.fromhex(o) for m, n, o in entries
    )
    return subprocess.run(
        ["git", "hash-object", "-t", "tree", "-w", "--literally", "--stdin"],
        cwd=repo.path, input=data, capture_output=True, check=True,
    ).stdout.decode().strip()  # fmt: skip


def _checkout(repo: Repo, commit: str, where: Path) -> dict[str, tuple[str, bytes, bool]]:
    """What `git checkout` of `commit` writes: a fresh detached worktree's files."""
    repo.git("worktree", "add", "-q", "--detach", str(where), commit)
    try:
        return fingerprint(where)
    finally:
        repo.git("worktree", "remove", "--force", str(where))


def _cp_commit(repo: Repo, name: str) -> str:
    return repo.git("rev-parse", f"refs/checkpoints/main/{name}").strip()


def _same_as_checkout(repo: Repo, name: str, tmp_path: Path, only: list[str] | None = None) -> None:
    """Every file of checkpoint `name`'s tracked tree (or those in `only`: what the
    restore wrote) is on disk as git writes it."""
    wanted = _checkout(repo, _cp_commit(repo, name), tmp_path / "oracle")
    wanted.pop(".git", None)
    if only is not None:
        wanted = {p: wanted[p] for p in only}
    got = fingerprint(repo.path)
    assert {p: got.get(p) for p in wanted} == wanted


def _staging_empty(repo: Repo) -> None:
    stage = repo.path / ".git" / "checkpoint" / "staging"
    assert not stage.exists() or list(stage.iterdir()) == []
    assert not [p for p in (repo.path / ".git").iterdir() if p.name.startswith("checkpoint-")]
    assert not [p for p in repo.path.rglob(".checkpoint-*")]


def _forge(repo: Repo, entries: list[tuple[str, str, str]]) -> str:
    """A checkpoint whose tracked tree is HEAD's tree plus `entries` (raw rows)."""
    keyed = sorted(_head_rows(repo) + entries, key=_key)
    return forge_checkpoint(repo, _raw_tree(repo, keyed))


# --- attributes, eol, filters: restore writes what git checkout writes ----------------

TEXT = "one\ntwo\n$Id$\nMixed Case\n"


def _attr_setup(repo: Repo, how: str) -> None:
    git_dir = repo.path / ".git"
    if how == "root-eol-crlf":
        repo.write(".gitattributes", "*.txt eol=crlf\n")
    elif how == "sub-eol-crlf":
        repo.write("sub/.gitattributes", "*.txt text eol=crlf\n")
    elif how == "info-attributes":
        (git_dir / "info").mkdir(exist_ok=True)
        (git_dir / "info" / "attributes").write_text("*.txt eol=crlf\n")
    elif how == "core-attributesfile":
        rules = repo.path.parent / "global-attributes"
        rules.write_text("*.txt eol=crlf ident\n")
        repo.git("config", "core.attributesFile", str(rules))
    elif how == "ident":
        repo.write("sub/.gitattributes", "*.txt ident\n")
    elif how == "filter":
        repo.git("config", "filter.up.smudge", "tr a-z A-Z")
        repo.git("config", "filter.up.clean", "tr A-Z a-z")
        repo.write(".gitattributes", "*.txt filter=up\n")
    elif how == "text-auto-core-eol":
        repo.git("config", "core.eol", "crlf")
        repo.write(".gitattributes", "* text=auto\n")
    elif how == "macro":
        repo.write(".gitattributes", "[attr]windows text eol=crlf\n*.txt windows\n")
    elif how in ("autocrlf-true", "autocrlf-input"):
        repo.git("config", "core.autocrlf", how.removeprefix("autocrlf-"))


@pytest.mark.parametrize(
    "how",
    [
        "root-eol-crlf",
        "sub-eol-crlf",
        "info-attributes",
        "core-attributesfile",
        "ident",
        "filter",
        "text-auto-core-eol",
        "macro",
        "autocrlf-true",
        "autocrlf-input",
        "none",
    ],
)
def test_a_converting_rule_gives_the_bytes_git_checkout_gives(
    repo: Repo, tmp_path: Path, how: str
) -> None:
    _attr_setup(repo, how)
    for path in ("a.txt", "sub/b.txt", "sub/deep/c.txt", "plain.bin"):
        repo.write(path, TEXT)
    repo.write("run.sh", "#!/bin/sh\necho hi\n", mode=0o755)
    repo.commit_all("files")
    repo.cp("save", "-m", "base")
    written = ["a.txt", "sub/b.txt", "sub/deep/c.txt", "plain.bin", "run.sh"]
    for path in written:
        (repo.path / path).unlink()
    repo.write("a.txt", "changed\n")
    repo.cp("restore", "cp_001")
    _same_as_checkout(repo, "cp_001", tmp_path, written)
    _staging_empty(repo)


def test_working_tree_encoding_is_applied_on_the_raw_path_check(repo: Repo, tmp_path: Path) -> None:
    repo.write(".gitattributes", "*.u16 working-tree-encoding=UTF-16LE eol=lf\n")
    repo.write("w.u16", "héllo\n".encode("utf-16-le"))
    repo.commit_all("utf16")
    repo.cp("save", "-m", "base")
    (repo.path / "w.u16").unlink()
    repo.cp("restore", "cp_001")
    assert (repo.path / "w.u16").read_bytes() == "héllo\n".encode("utf-16-le")
    _same_as_checkout(repo, "cp_001", tmp_path)


def test_a_rule_file_the_restore_brings_back_applies_to_the_files_it_writes(
    repo: Repo, tmp_path: Path
) -> None:
    repo.write(".gitattributes", "*.txt eol=crlf\n")
    repo.write("sub/.gitattributes", "*.txt -text\n")
    repo.write("t.txt", "one\n")
    repo.write("sub/u.txt", "two\n")
    repo.commit_all("rules")
    repo.cp("save", "-m", "with rules")
    for path in (".gitattributes", "sub/.gitattributes", "t.txt", "sub/u.txt"):
        (repo.path / path).unlink()
    repo.cp("restore", "cp_001")
    assert (repo.path / "t.txt").read_bytes() == b"one\r\n"
    _same_as_checkout(repo, "cp_001", tmp_path)


def test_a_rule_file_the_restore_removes_no_longer_applies(repo: Repo, tmp_path: Path) -> None:
    repo.write("t.txt", "one\n")
    repo.commit_all("no rules")
    repo.cp("save", "-m", "no rules")
    repo.write(".gitattributes", "*.txt eol=crlf\n")
    repo.write("t.txt", "two\n")
    repo.git("add", ".gitattributes", "t.txt")
    repo.cp("restore", "cp_001")
    assert not (repo.path / ".gitattributes").exists()
    assert (repo.path / "t.txt").read_bytes() == b"one\n"  # git checkout: LF
    _staging_empty(repo)


def test_a_removed_rule_file_leaves_the_rules_that_stay(repo: Repo, tmp_path: Path) -> None:
    """The restore removes sub/.gitattributes (it turned conversion off there): the
    root's rule, which the target keeps, converts sub/a.txt again, as git's checkout."""
    repo.write(".gitattributes", "*.txt eol=crlf\n")
    repo.write("sub/a.txt", "one\n")
    repo.commit_all("root rule")
    repo.cp("save", "-m", "root rule only")
    repo.write("sub/.gitattributes", "*.txt -text\n")
    repo.write("sub/a.txt", "two\n")
    repo.git("add", "sub")
    repo.cp("restore", "cp_001")
    assert not (repo.path / "sub/.gitattributes").exists()
    assert (repo.path / "sub/a.txt").read_bytes() == b"one\r\n"
    _same_as_checkout(repo, "cp_001", tmp_path)
    assert repo.git("status", "--porcelain") == ""
    repo.cp("undo")
    assert (repo.path / "sub/.gitattributes").read_text() == "*.txt -text\n"
    assert (repo.path / "sub/a.txt").read_bytes() == b"two\n"


def test_an_untracked_rule_file_the_target_holds_still_applies(repo: Repo) -> None:
    """The target's own untracked .gitattributes (its overlay) is among the rules that
    stay, while a tracked one the restore removes is not."""
    repo.write("a.txt", "one\n")
    repo.commit_all("a")
    repo.write("sub/.gitattributes", "*.txt eol=crlf\n")  # untracked, in the overlay
    repo.write("sub/b.txt", "bee\n")  # untracked too
    repo.cp("save", "-m", "with an untracked rule")
    repo.write(".gitattributes", "*.txt -text\n")
    repo.git("add", ".gitattributes")
    repo.write("sub/b.txt", "changed\n")
    repo.cp("restore", "cp_001")
    assert not (repo.path / ".gitattributes").exists()
    assert (repo.path / "sub/b.txt").read_bytes() == b"bee\r\n"


# --- names, modes, symlinks on the raw path --------------------------------------------

NAMES = [
    "with space.txt",
    "new\nline.txt",
    "ünï cødé.txt",
    "-leading-dash.txt",
    "--all",
    ":(glob)*",
    "tab\there",
    "deep/er/-x",
]


def test_awkward_names_modes_and_symlinks_come_back_as_git_writes_them(
    repo: Repo, tmp_path: Path
) -> None:
    for n, name in enumerate(NAMES):
        repo.write(name, f"content {n}\n", mode=0o755 if n % 2 else 0o644)
    os.symlink("README.md", repo.path / "link to readme")
    os.symlink("../nowhere/at all", repo.path / "dangling")
    os.symlink("ünï cødé.txt", repo.path / "-link")
    repo.commit_all("awkward")
    repo.cp("save", "-m", "awkward")
    for name in [*NAMES, "link to readme", "dangling", "-link"]:
        os.unlink(repo.path / name)
    repo.write("with space.txt", "edited\n")
    repo.cp("restore", "cp_001")
    _same_as_checkout(repo, "cp_001", tmp_path)
    assert repo.git("status", "--porcelain") == ""
    _staging_empty(repo)


def test_exec_bit_flips_both_ways(repo: Repo, tmp_path: Path) -> None:
    repo.write("x.sh", "x\n", mode=0o755)
    repo.write("y.sh", "y\n", mode=0o644)
    repo.commit_all("modes")
    repo.cp("save", "-m", "modes")
    os.chmod(repo.path / "x.sh", 0o644)
    os.chmod(repo.path / "y.sh", 0o755)
    repo.cp("restore", "cp_001")
    assert os.stat(repo.path / "x.sh").st_mode & 0o111
    assert not os.stat(repo.path / "y.sh").st_mode & 0o111
    _same_as_checkout(repo, "cp_001", tmp_path)


def test_core_symlinks_false_writes_links_as_files(repo: Repo, tmp_path: Path) -> None:
    os.symlink("README.md", repo.path / "l")
    repo.commit_all("link")
    repo.cp("save", "-m", "link")
    repo.git("config", "core.symlinks", "false")
    os.unlink(repo.path / "l")
    repo.cp("restore", "cp_001")
    assert not (repo.path / "l").is_symlink()
    _same_as_checkout(repo, "cp_001", tmp_path)


# --- crafted trees: objects.py's parser and the raw symlink path ------------------------


@pytest.mark.parametrize(
    "data",
    [
        b"100644 \0" + b"\x11" * 20,  # empty name
        b"100644 a/b\0" + b"\x11" * 20,  # slash in a name
        b"10064x a\0" + b"\x11" * 20,  # not a number
        b"100689 a\0" + b"\x11" * 20,  # not octal
        b" a\0" + b"\x11" * 20,  # no mode
        b"100644 a\0" + b"\x11" * 19,  # truncated id
        b"100644 a",  # no NUL at all
        b"100644a\0" + b"\x11" * 20,  # no space
    ],
)
def test_a_malformed_tree_is_an_unsafe_checkpoint(repo: Repo, data: bytes) -> None:
    tree = subprocess.run(
        ["git", "hash-object", "-t", "tree", "-w", "--literally", "--stdin"],
        cwd=repo.path, input=data, capture_output=True, check=True,
    ).stdout.decode().strip()  # fmt: skip
    outer = mktree(repo, [("040000", "tree", tree, "evil")])
    forge_checkpoint(repo, outer)
    before = fingerprint(repo.path)
    proc = repo.cp("restore", "cp_099", expect=3)
    assert "unsafe checkpoint" in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert fingerprint(repo.path) == before
    _staging_empty(repo)


def test_a_folder_with_a_non_canonical_mode_is_still_a_folder(repo: Repo, tmp_path: Path) -> None:
    src = repo.git("rev-parse", "HEAD:src").strip()
    base = [(m, n, o) for m, n, o in _head_rows(repo) if n != "src"]
    forge_checkpoint(repo, _raw_tree(repo, sorted([*base, ("40755", "src", src)], key=_key)))
    repo.write("src/app.py", "edited\n")
    repo.cp("restore", "cp_099")
    assert (repo.path / "src" / "app.py").read_text() == "print('hello')\n"


def test_a_group_writable_exec_mode_is_executable(repo: Repo, tmp_path: Path) -> None:
    script = blob(repo, b"#!/bin/sh\necho hi\n")
    _forge(repo, [("100775", "run.sh", script)])
    repo.cp("restore", "cp_099")
    assert os.stat(repo.path / "run.sh").st_mode & 0o100
    _same_as_checkout(repo, "cp_099", tmp_path)


def test_a_symlink_with_a_non_canonical_mode_is_a_symlink(repo: Repo, tmp_path: Path) -> None:
    _forge(repo, [("120777", "l", blob(repo, b"README.md"))])
    repo.cp("restore", "cp_099")
    assert (repo.path / "l").is_symlink()
    _same_as_checkout(repo, "cp_099", tmp_path)


def test_a_zero_padded_mode_is_read_as_git_reads_it(repo: Repo, tmp_path: Path) -> None:
    _forge(repo, [("0100644", "z.txt", blob(repo, b"zero padded\n"))])
    repo.cp("restore", "cp_099")
    assert (repo.path / "z.txt").read_bytes() == b"zero padded\n"


def test_a_symlink_entry_naming_a_commit_is_refused(repo: Repo) -> None:
    head = repo.git("rev-parse", "HEAD").strip()
    _forge(repo, [("120000", "l", head)])
    before = fingerprint(repo.path)
    proc = repo.cp("restore", "cp_099", expect=None)
    assert proc.returncode in (3, 4) and "internal error" not in proc.stderr
    assert fingerprint(repo.path) == before


@pytest.mark.parametrize("what", ["tree", "missing"])
def test_a_symlink_entry_naming_no_blob_is_a_plain_error(repo: Repo, what: str) -> None:
    oid = repo.git("rev-parse", "HEAD:src").strip() if what == "tree" else "12" * 20
    _forge(repo, [("120000", "l", oid)])
    before = fingerprint(repo.path)
    proc = repo.cp("restore", "cp_099", expect=None)
    assert proc.returncode in (3, 4), proc.stderr
    assert "internal error" not in proc.stderr, proc.stderr
    assert fingerprint(repo.path) == before


def test_a_symlink_blob_with_a_nul_is_no_internal_error(repo: Repo) -> None:
    _forge(repo, [("120000", "l", blob(repo, b"README.md\0junk"))])
    proc = repo.cp("restore", "cp_099", expect=None)
    assert "internal error" not in proc.stderr, proc.stderr


@pytest.mark.parametrize("what", ["tree", "commit", "missing"])
def test_a_file_entry_naming_no_blob_stops_before_anything_changes(repo: Repo, what: str) -> None:
    oid = {
        "tree": repo.git("rev-parse", "HEAD:src").strip(),
        "commit": repo.git("rev-parse", "HEAD").strip(),
        "missing": "12" * 20,
    }[what]
    _forge(repo, [("100644", "f.txt", oid)])
    repo.write("README.md", "edited\n")
    before = fingerprint(repo.path)
    proc = repo.cp("restore", "cp_099", expect=None)
    assert proc.returncode in (3, 4) and "Traceback" not in proc.stderr
    assert "internal error" not in proc.stderr
    assert fingerprint(repo.path) == before
    _staging_empty(repo)


def test_a_failing_smudge_filter_leaves_no_staged_files(repo: Repo) -> None:
    repo.write(".gitattributes", "*.txt filter=bad\n")
    repo.write("a.txt", "a\n")
    repo.write("b.bin", "b\n")
    repo.commit_all("filtered")
    repo.cp("save", "-m", "base")
    repo.git("config", "filter.bad.smudge", "false")
    repo.git("config", "filter.bad.required", "true")
    (repo.path / "a.txt").unlink()
    (repo.path / "b.bin").unlink()
    before = fingerprint(repo.path)
    repo.cp("restore", "cp_001", expect=4)
    assert fingerprint(repo.path) == before
    _staging_empty(repo)


def test_leftovers_of_a_killed_restore_are_cleared_and_never_restored(repo: Repo) -> None:
    stage = repo.path / ".git" / "checkpoint" / "staging"
    stage.mkdir(parents=True)
    (stage / "0").write_text("stale\n")
    (stage / "tree" / "src").mkdir(parents=True)
    (stage / "tree" / "src" / "app.py").write_text("stale\n")
    os.symlink("/etc/passwd", stage / "1")
    repo.cp("save", "-m", "base")
    repo.write("src/app.py", "edited\n")
    repo.write("README.md", "edited\n")
    repo.cp("restore", "cp_001")
    assert (repo.path / "src" / "app.py").read_text() == "print('hello')\n"
    assert (repo.path / "README.md").read_text() == "# project\n"
    _staging_empty(repo)


# --- diff-tree for the changed paths ----------------------------------------------------


def test_a_submodule_marked_ignore_all_is_still_restored_in_the_index(
    repo: Repo, tmp_path: Path
) -> None:
    sub = tmp_path / "subrepo"
    subprocess.run(["git", "init", "-q", str(sub)], check=True)
    for n in (1, 2):
        subprocess.run(["git", "-C", str(sub), "commit", "-q", "--allow-empty", "-m", f"s{n}"])
    repo.git("submodule", "add", "-q", str(sub), "sub")
    repo.git("config", "-f", ".gitmodules", "submodule.sub.ignore", "all")
    repo.commit_all("submodule")
    first = repo.git("ls-files", "-s", "sub")
    repo.cp("save", "-m", "one")
    subprocess.run(["git", "-C", str(repo.path / "sub"), "checkout", "-q", "HEAD~1"], check=True)
    repo.git("add", "sub")
    assert repo.git("ls-files", "-s", "sub") != first
    repo.cp("restore", "cp_001")
    assert repo.git("ls-files", "-s", "sub") == first


# --- exits without teardown --------------------------------------------------------------


@pytest.mark.parametrize("args", [("list", "--json"), ("save", "-m", "x", "--json")])
def test_json_into_a_full_disk_is_not_a_success(repo: Repo, args: tuple[str, ...]) -> None:
    repo.write("n.txt", "new\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # as users run it
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            ["git", "checkpoint", *args], cwd=repo.path, stdout=full, stderr=subprocess.PIPE,
            env=env,
        )  # fmt: skip
    assert proc.returncode != 0


def test_json_into_a_full_disk_unbuffered_gives_no_traceback(repo: Repo) -> None:
    """Unbuffered stdout (PYTHONUNBUFFERED=1, honoured by the venv's console script)
    that cannot be written under --json: the error object fail() writes to the same
    stdout fails too, and the exit code is the answer (once a traceback, exit 1)."""
    with open("/dev/full", "w") as full:
        proc = subprocess.run(
            ["git", "checkpoint", "list", "--json"], cwd=repo.path, stdout=full,
            stderr=subprocess.PIPE, env={**os.environ, "PYTHONUNBUFFERED": "1"}, text=True,
        )  # fmt: skip
    assert proc.returncode == 4 and "Traceback" not in proc.stderr, proc.stderr


def test_output_into_a_file_and_a_pipe_is_complete(repo: Repo, tmp_path: Path) -> None:
    for n in range(5):
        repo.write(f"f{n}.txt", f"{n}\n")
        repo.cp("save", "-m", f"save {n}")
    out = tmp_path / "out.json"
    with open(out, "w") as fh:
        subprocess.run(["git", "checkpoint", "list", "--json"], cwd=repo.path, stdout=fh)
    import json

    assert len(json.loads(out.read_text())["checkpoints"]) == 5
    piped = subprocess.run(
        "git checkpoint log | cat", shell=True, cwd=repo.path, capture_output=True, text=True
    )
    assert piped.stdout.count("\n") >= 5 and piped.returncode == 0


@pytest.mark.parametrize("args", [("log",), ("list",), ("list", "--json")])
def test_a_reader_that_stops_early_gets_no_traceback(repo: Repo, args: tuple[str, ...]) -> None:
    for n in range(3):
        repo.write(f"f{n}.txt", f"{n}\n")
        repo.cp("save", "-m", f"save {n}")
    proc = subprocess.Popen(
        ["git", "checkpoint", *args], cwd=repo.path, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # gone before the first line
    err = proc.stderr.read().decode()
    proc.wait(timeout=60)
    assert "Traceback" not in err and "Exception ignored" not in err


@pytest.mark.parametrize("argv", [["log"], ["-h"], ["--version"], ["save", "-h"], ["list"]])
def test_a_closed_pipe_is_not_a_no_answer(repo: Repo, argv: list[str]) -> None:
    """`| head` gone before the output: click's own EPIPE handler exits 1, which says
    "no" here (verify, diff): the command ends as git's would, not with an answer."""
    repo.write("n.txt", "new\n")
    repo.cp("save", "-m", "one")
    proc = subprocess.Popen(
        ["git", "checkpoint", *argv], cwd=repo.path, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert proc.stdout is not None
    proc.stdout.close()
    _, err = proc.communicate(timeout=60)
    assert proc.returncode in (0, 141), err
    assert b"Traceback" not in err


def test_warnings_reach_stderr_and_errors_keep_their_exit_code(repo: Repo) -> None:
    proc = repo.cp("restore", "cp_404", expect=2)
    assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr
    got = repo.cp_json("restore", "cp_404", expect=2)
    assert got["exit_code"] == 2
    proc = repo.cp("restore", "--bogus", expect=2)
    assert "Traceback" not in proc.stderr


def test_the_hook_answers_and_saves_in_a_pipe(repo: Repo) -> None:
    repo.write("n.txt", "new\n")
    payload = f'{{"prompt": "go", "cwd": "{repo.path}"}}'
    proc = subprocess.run(
        ["git-checkpoint-hook", "gemini-cli", "BeforeAgent"],
        cwd=repo.path, input=payload, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode == 0 and proc.stdout == "{}\n"
    assert "checkpoint saved" in proc.stderr


# --- small helpers for the forged trees above ---------------------------------------------


def _head_rows(repo: Repo) -> list[tuple[str, str, str]]:
    out = []
    for line in repo.git("ls-tree", "HEAD").splitlines():
        meta, name = line.split("\t", 1)
        mode, _, oid = meta.split()
        out.append((mode.lstrip("0") or "0", name, oid))
    return out


def _key(row: tuple[str, str, str]) -> str:
    return row[1] + ("/" if row[0].startswith("40") else "")


def test_an_edit_while_files_are_staged_again_is_left_alone(repo: Repo) -> None:
    """Files below a .gitattributes the restore changes are checked before the rules
    change, then staged again under the new rules; one edited meanwhile (here by the
    smudge filter, which runs once the rules have changed) is left as it is."""
    script = repo.path.parent / "smudge.sh"
    count = repo.path.parent / "count"
    script.write_text(
        f"n=$(cat '{count}' 2>/dev/null || echo 0); n=$((n + 1)); echo $n > '{count}'\n"
        '[ "$n" -ge 1 ] && echo concurrent >> sub/b.txt\ncat\n'
    )
    repo.git("config", "filter.x.smudge", f"sh '{script}'")
    repo.git("config", "filter.x.clean", "cat")
    repo.write(".gitattributes", "a.txt filter=x\n")
    repo.write("sub/a.txt", "one\n")
    repo.write("sub/b.txt", "bee\n")
    repo.commit_all("rules")
    repo.cp("save", "-m", "target")
    repo.write("sub/.gitattributes", "*.txt -text\n")
    repo.write("sub/a.txt", "two\n")
    repo.write("sub/b.txt", "attempt\n")
    repo.git("add", "-A")
    count.unlink(missing_ok=True)
    proc = repo.cp("restore", "cp_001", expect=3)
    assert "sub/b.txt (changed during the restore)" in proc.stderr
    assert (repo.path / "sub/b.txt").read_text() == "attempt\nconcurrent\n"
    assert int(count.read_text()) == 1  # once: staged raw first, converted after the rules
