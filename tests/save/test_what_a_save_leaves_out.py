"""A file git does not ignore is work: a save captures it unless a rule it can name
keeps it out, and then it says so on its normal output, once, until it changes; the
manifest, `show` and `--json` list what was left out. The tracked files and the index
are saved whatever the overlay's limits say."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from ..conftest import Repo

CACHEDIR_TAG = "Signature: 8a477f597d28d172789f06886806bc55\n# a cache\n"


def stored(repo: Repo, rev: str = "refs/checkpoints/main/cp_001") -> set[str]:
    """Every path a checkpoint stores: its tracked files and its overlay."""
    names = set(repo.git("ls-tree", "-r", "--name-only", rev).split())
    parents = repo.git("rev-list", "--parents", "-n", "1", rev).split()
    if len(parents) == 4:  # W, B, I, U
        names |= set(repo.git("ls-tree", "-r", "--name-only", parents[3]).split())
    return names


def not_ignored(repo: Repo) -> Repo:
    """The fixture's .gitignore names node_modules/: here git does not ignore it."""
    repo.write(".gitignore", "*.log\n")
    repo.commit_all("node_modules/ is not ignored")
    return repo


def manifest(repo: Repo, cp: str = "@") -> dict[str, object]:
    return json.loads(repo.cp("show", cp, "--json").stdout)["manifest"]


def test_source_below_folders_named_like_build_output_is_work(repo: Repo) -> None:
    for path in ("mypkg/build/__init__.py", "src/pip/operations/build/wheel.py",
                 "dist/notes.md", "target/keep.txt", "venv/app.py"):  # fmt: skip
        repo.write(path, f"# {path}\n")
    repo.cp("save", "-m", "one")
    assert {"mypkg/build/__init__.py", "dist/notes.md", "venv/app.py"} <= stored(repo)
    for folder in ("mypkg", "src", "dist", "target", "venv"):
        subprocess.run(["rm", "-rf", str(repo.path / folder)], check=True)
    repo.cp("restore")
    assert (repo.path / "mypkg/build/__init__.py").read_text() == "# mypkg/build/__init__.py\n"
    assert (repo.path / "src/pip/operations/build/wheel.py").exists()
    assert (repo.path / "target/keep.txt").exists()


def test_dependency_trees_and_caches_are_recognised_and_named(repo: Repo) -> None:
    not_ignored(repo)
    repo.write("node_modules/left/index.js", "x\n")
    repo.write("target/CACHEDIR.TAG", CACHEDIR_TAG)
    repo.write("target/debug/app", "binary\n")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(repo.path / "env")],
                   check=True)  # fmt: skip
    repo.write("src/__pycache__/app.cpython-311.pyc", "compiled\n")
    repo.write("src/__pycache__/notes.txt", "not compiled: work\n")
    proc = repo.cp("save", "-m", "one")
    names = stored(repo)
    assert not any(n.startswith(("node_modules/", "target/", "env/")) for n in names)
    assert "src/__pycache__/app.cpython-311.pyc" not in names
    assert "src/__pycache__/notes.txt" in names
    said = proc.stdout.splitlines()[1]
    assert said.startswith("left out: ")
    for part in ("node_modules/", "target/", "a cache (CACHEDIR.TAG)", "env/",
                 "a virtualenv (pyvenv.cfg)", "src/__pycache__/ (compiled Python)"):  # fmt: skip
        assert part in said


def test_secret_names_match_as_documented_and_templates_are_saved(repo: Repo) -> None:
    saved = (".env.example", ".env.sample", ".env.template", "monkey.key.py", "cert.pem.md")
    for name in (*saved, ".env", ".env.local", "prod.env", "server.key", "ca.pem"):
        repo.write(name, "VALUE=1\n")
    proc = repo.cp("save", "-m", "one")
    names = stored(repo)
    assert set(saved) <= names
    assert not names & {".env", ".env.local", "prod.env", "server.key", "ca.pem"}
    assert ".env (its name looks like a secret)" in proc.stdout
    for name in (".env.example", "monkey.key.py"):
        (repo.path / name).unlink()
    repo.cp("restore")
    assert (repo.path / ".env.example").read_text() == "VALUE=1\n"
    assert (repo.path / "monkey.key.py").exists()


def test_a_secret_in_a_template_is_the_content_scans_to_find(repo: Repo) -> None:
    repo.write(".env.example", "AWS_ACCESS_KEY_ID=AKIAZ3MHPQRS7TUVWXYZ\n")
    proc = repo.cp("save", "-m", "one")
    assert ".env.example" in stored(repo)  # saved: its name is a template's
    assert "possible secret saved: .env.example:1: AWS Access Key" in proc.stderr


def test_one_huge_file_is_left_out_by_name_and_the_rest_is_saved(repo: Repo) -> None:
    repo.write("src/app.py", "print('edited')\n")  # the tracked edit an agent may lose
    repo.write("notes/tiny.txt", "six b\n")
    with open(repo.path / "model.bin", "wb") as fh:
        fh.truncate(60 * 1024 * 1024)
    proc = repo.cp("save", "-m", "with a model")
    assert proc.stdout.startswith("checkpoint saved: cp_001")
    assert "model.bin (60.0 MiB, over overlay_max_bytes; untracked.exclude: [model.bin]" in (
        proc.stdout
    )
    assert "notes" not in proc.stdout  # the six-byte folder is not named
    names = stored(repo)
    assert "notes/tiny.txt" in names and "model.bin" not in names
    assert repo.git("show", "refs/checkpoints/main/cp_001:src/app.py") == "print('edited')\n"
    repo.git("checkout", "--", ".")  # what an agent's command does
    repo.cp("restore")
    assert (repo.path / "src/app.py").read_text() == "print('edited')\n"
    assert (repo.path / "model.bin").stat().st_size == 60 * 1024 * 1024  # never touched


def test_too_many_files_leave_the_fullest_folder_out(repo: Repo) -> None:
    repo.write(".checkpoint.yaml", "limits: {overlay_max_files: 10}\n")
    repo.commit_all("limits")
    for n in range(20):
        repo.write(f"generated/out/{n}.txt", f"{n}\n")
    repo.write("work/new.py", "print('new')\n")
    proc = repo.cp("save", "-m", "many")
    assert "generated/out/ (20 files" in proc.stdout
    assert "over overlay_max_files" in proc.stdout
    assert "work/new.py" in stored(repo)


def test_on_exceed_refuse_refuses_naming_the_largest(repo: Repo) -> None:
    repo.write(".checkpoint.yaml", "limits: {overlay_max_bytes: 1KiB, on_exceed: refuse}\n")
    repo.commit_all("limits")
    repo.write("notes/tiny.txt", "six b\n")
    repo.write("big.bin", "x" * 4096)
    proc = repo.cp("save", "-m", "over", expect=3)
    assert "overlay too large" in proc.stderr
    assert "big.bin" in proc.stderr and "untracked.exclude: [big.bin]" in proc.stderr
    assert "notes" not in proc.stderr
    assert repo.git("for-each-ref", "refs/checkpoints/") == ""


def test_the_hook_saves_past_the_limit_too(repo: Repo) -> None:
    repo.write("src/app.py", "print('edited')\n")
    with open(repo.path / "model.bin", "wb") as fh:
        fh.truncate(60 * 1024 * 1024)
    payload = {"tool_name": "Bash", "tool_input": {"command": "git checkout -- ."},
               "cwd": str(repo.path)}  # fmt: skip
    proc = hook(repo, payload)
    assert "checkpoint saved: cp_001" in proc.stderr
    assert "model.bin (60.0 MiB, over overlay_max_bytes" in proc.stderr
    assert repo.git("show", "refs/checkpoints/main/cp_001:src/app.py") == "print('edited')\n"


def hook(repo: Repo, payload: dict[str, object]) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        ["git-checkpoint-hook", "claude-code", "PreToolUse"],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        cwd=repo.path,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc


def test_a_broken_config_leaves_saves_on_with_the_defaults(repo: Repo) -> None:
    repo.write(".checkpoint.yaml", "retention: {keep_last: -1}\n")
    repo.write("src/app.py", "print('edited')\n")
    proc = repo.cp("save", "-m", "broken config")
    assert proc.stdout.startswith("checkpoint saved: cp_001")
    assert "keep_last must be" in proc.stderr and "default settings" in proc.stderr
    repo.write("src/app.py", "print('again')\n")
    payload = {"tool_name": "Bash", "tool_input": {"command": "git reset --hard"},
               "cwd": str(repo.path)}  # fmt: skip
    first = hook(repo, payload)
    assert "keep_last must be" in first.stderr and "checkpoint saved: cp_002" in first.stderr
    repo.write("src/app.py", "print('third')\n")
    second = hook(repo, payload)  # the same problem: said once
    assert "keep_last" not in second.stderr and "checkpoint saved: cp_003" in second.stderr


def test_what_is_left_out_is_said_once_until_it_changes(repo: Repo) -> None:
    not_ignored(repo)
    repo.write(".env", "KEY=1\n")
    first = repo.cp("save", "-m", "one")
    assert "left out: .env (its name looks like a secret)" in first.stdout
    assert first.stderr == ""  # nothing of it on stderr any more
    repo.write("src/app.py", "print('two')\n")
    second = repo.cp("save", "-m", "two")
    assert "left out" not in second.stdout
    repo.write("node_modules/x/index.js", "x\n")
    third = repo.cp("save", "-m", "three")
    assert (
        "left out: node_modules/ (a dependency tree or cache (a default exclude))" in third.stdout
    )
    assert third.stdout.startswith(
        "unchanged since cp_002"
    )  # nothing new to save, said all the same
    assert ".env" not in third.stdout
    time.sleep(0.01)
    (repo.path / ".env").unlink()
    repo.cp("save", "-m", "four")
    repo.write(".env", "KEY=2\n")
    fifth = repo.cp("save", "-m", "five")  # gone, then back: said again
    assert ".env (its name looks like a secret)" in fifth.stdout


def test_show_json_and_the_manifest_list_what_was_left_out(repo: Repo) -> None:
    not_ignored(repo)
    repo.write(".env", "KEY=1\n")
    repo.write("node_modules/x/index.js", "x\n")
    data = repo.cp_json("save", "-m", "one")
    assert {(o["path"], o["why"]) for o in data["left_out"]} == {
        (".env", "its name looks like a secret"),
        ("node_modules/", "a dependency tree or cache (a default exclude)"),
    }
    assert {e["path"] for e in manifest(repo)["left_out"]} == {".env", "node_modules/"}  # type: ignore[union-attr]
    shown = repo.cp("show", "@").stdout
    assert "left out (2):" in shown and "  .env (its name looks like a secret)" in shown


def test_secrets_ignore_leaves_secret_names_out_quietly(repo: Repo) -> None:
    repo.write(".checkpoint.yaml", "secrets: {on_save: ignore}\n")
    repo.write(".env", "KEY=1\n")
    proc = repo.cp("save", "-m", "quiet")
    assert "left out" not in proc.stdout
    assert ".env" not in stored(repo)


@pytest.mark.parametrize("name", [".env", "id_rsa"])
def test_a_secret_named_file_is_never_touched_by_restore(repo: Repo, name: str) -> None:
    repo.write(name, "secret\n")
    repo.cp("save", "-m", "one")
    repo.write(name, "changed secret\n")
    repo.cp("restore")
    assert (repo.path / name).read_text() == "changed secret\n"
