"""A restore replaces a file as git's checkout does, by a new file, never by writing over
the old one: a process that holds the old file (a shell reading a script, a running
program, a mapping, a writer) keeps it and never sees the restored bytes, a second hard
link keeps its own, and the new file gets a new file's permissions, owner and group."""

from __future__ import annotations

import grp
import os
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ..conftest import Repo


def _fresh_perms(executable: bool = False) -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return (0o777 if executable else 0o666) & ~mask


# --- processes that hold the old file: a file written over is not "the same to every
# reader as a new file"


def test_a_running_script_goes_on_with_its_own_lines(repo: Repo, tmp_path: Path) -> None:
    prefix = b"#!/bin/bash\n"
    waiting = b'echo started > "$2"; cat "$1" >/dev/null\n'
    attempt = prefix + waiting + b'echo "its own last line" > "$2"\n'
    comment = b"# never run:"
    pad = len(prefix + waiting) - len(prefix) - len(comment)
    assert pad > 0
    # The restored script is only a comment; bash resuming at its old offset lands on the
    # comment's tail, a command the restored file never runs.
    target = prefix + comment + b" " * pad + b'echo "from the middle of a comment" > "$2"\n'
    script = repo.write("run.sh", target, mode=_fresh_perms(executable=True))
    repo.commit_all("script")
    repo.cp("save", "-m", "good")
    script.write_bytes(attempt)
    script.chmod(_fresh_perms(executable=True))  # as a new file gets it: written over
    gate, marker = tmp_path / "gate", tmp_path / "marker"
    os.mkfifo(gate)
    proc = subprocess.Popen([str(script), str(gate), str(marker)], cwd=repo.path)
    try:
        deadline = time.monotonic() + 30
        while not (marker.exists() and marker.read_text() == "started\n"):
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.02)
        time.sleep(0.2)  # bash has forked cat: it reads on from the end of line 2
        repo.cp("restore", "cp_001")
        assert script.read_bytes() == target
    finally:
        with open(gate, "wb"):
            pass  # cat ends: bash goes on reading its script
        proc.wait(timeout=30)
    assert marker.read_text() == "its own last line\n"


def test_a_process_mapping_the_old_file_survives(repo: Repo) -> None:
    data = repo.write("data.bin", b"short\n", mode=_fresh_perms())
    repo.commit_all("data")
    repo.cp("save", "-m", "good")
    data.write_bytes(b"x" * 200_000)
    data.chmod(_fresh_perms())
    reader = (
        "import mmap, os, sys\n"
        "fd = os.open('data.bin', os.O_RDONLY)\n"
        "m = mmap.mmap(fd, 0, prot=mmap.PROT_READ)\n"
        "print('mapped', flush=True)\n"
        "sys.stdin.readline()\n"
        "print(m[-1], flush=True)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", reader],
        cwd=repo.path,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdout.readline() == "mapped\n"
    try:
        repo.cp("restore", "cp_001")
    finally:
        out, _ = proc.communicate("go\n", timeout=30)
    assert proc.returncode == 0, f"the reader ended with {proc.returncode} (-7: SIGBUS)"
    assert out == f"{ord('x')}\n"


def test_a_writer_holding_the_old_file_does_not_write_into_the_restored_one(repo: Repo) -> None:
    log = repo.write("notes.txt", "saved notes\n" * 3, mode=_fresh_perms())
    repo.commit_all("notes")
    repo.cp("save", "-m", "good")
    log.write_bytes(b"attempt\n")
    log.chmod(_fresh_perms())
    fd = os.open(log, os.O_WRONLY)  # held open here, as an editor or a logger would
    try:
        repo.cp("restore", "cp_001")
        os.write(fd, b"LATE")
    finally:
        os.close(fd)
    assert log.read_bytes() == b"saved notes\n" * 3


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give a folder another group")
def test_a_file_in_a_setgid_folder_gets_the_group_a_new_file_gets(repo: Repo) -> None:
    other = grp.getgrnam("nogroup").gr_gid if _has_group("nogroup") else 65534
    shared = repo.path / "shared"
    shared.mkdir()
    os.chown(shared, 0, other)
    shared.chmod(0o2755)
    path = repo.write("shared/f.txt", "good\n")
    os.chown(path, 0, os.getegid())  # the group a create outside this folder gives
    path.chmod(_fresh_perms())
    repo.commit_all("shared")
    repo.cp("save", "-m", "good")
    path.write_bytes(b"attempt\n")
    os.chown(path, 0, os.getegid())
    path.chmod(_fresh_perms())
    created = repo.write("shared/probe.txt", "")  # what a new file there gets
    probe_gid = os.stat(created).st_gid
    created.unlink()
    assert probe_gid == other
    repo.cp("restore", "cp_001")
    assert path.read_bytes() == b"good\n"
    assert os.stat(path).st_gid == probe_gid


def _has_group(name: str) -> bool:
    try:
        grp.getgrnam(name)
    except KeyError:
        return False
    return True


# --- files a write in place would not give what a new file gets


def test_a_running_program_is_replaced_not_written_over(repo: Repo) -> None:
    """A running executable cannot be opened for writing (ETXTBSY): a new file."""
    tool = repo.path / "tool"
    shutil.copy("/bin/true", tool)
    tool.chmod(_fresh_perms(executable=True))
    repo.commit_all("tool")
    repo.cp("save", "-m", "good")
    shutil.copy("/bin/sleep", tool)
    tool.chmod(_fresh_perms(executable=True))
    running = subprocess.Popen([str(tool), "30"])
    try:
        time.sleep(0.2)
        repo.cp("restore", "cp_001")
        assert tool.read_bytes() == Path("/bin/true").read_bytes()
        assert running.poll() is None  # untouched: it runs its own copy
    finally:
        running.kill()
        running.wait()
    assert repo.git("status", "--porcelain") == ""


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to chown")
def test_files_a_create_would_not_make_get_a_new_file(repo: Repo) -> None:
    """setuid, read-only, another owner: each gets a new file, as git's checkout makes."""
    names = ["suid", "ro", "theirs"]
    for name in names:
        repo.write(name, f"good {name}\n" * 3, mode=_fresh_perms(executable=name == "suid"))
    repo.commit_all("files")
    repo.cp("save", "-m", "good")
    for name in names:
        repo.write(name, f"attempt {name}\n")
    (repo.path / "suid").chmod(0o4755)
    (repo.path / "ro").chmod(0o444)
    os.chown(repo.path / "theirs", 65534, 65534)
    repo.cp("restore", "cp_001")
    for name in names:
        st = os.lstat(repo.path / name)
        assert (repo.path / name).read_bytes() == f"good {name}\n".encode() * 3
        assert stat.S_IMODE(st.st_mode) == _fresh_perms(executable=name == "suid"), name
        assert (st.st_uid, st.st_gid) == (os.geteuid(), os.getegid()), name
    assert repo.git("status", "--porcelain") == ""


def _saved(repo: Repo) -> None:
    repo.write("long.txt", "L" * 3000 + "\n")
    repo.write("short.txt", "s\n")
    repo.write("bin/run.sh", "#!/bin/sh\necho saved\n", mode=0o755)
    repo.commit_all("files")
    repo.cp("save", "-m", "good")


def test_a_file_held_open_keeps_its_bytes_and_the_path_gets_a_new_file(repo: Repo) -> None:
    _saved(repo)
    attempt = {
        "long.txt": b"now short\n",
        "short.txt": b"S" * 5000,
        "bin/run.sh": b"#!/bin/sh\necho attempt\n",
    }
    for path, data in attempt.items():
        (repo.path / path).write_bytes(data)
    held = {path: os.open(repo.path / path, os.O_RDONLY) for path in attempt}
    try:
        repo.cp("restore", "cp_001")
        for path, fd in held.items():
            assert os.fstat(fd).st_ino != os.stat(repo.path / path).st_ino, path
            assert os.pread(fd, 10000, 0) == attempt[path], path
    finally:
        for fd in held.values():
            os.close(fd)
    assert (repo.path / "long.txt").read_bytes() == b"L" * 3000 + b"\n"
    assert (repo.path / "short.txt").read_bytes() == b"s\n"
    mode = os.stat(repo.path / "bin/run.sh").st_mode
    assert stat.S_IMODE(mode) == _fresh_perms(executable=True)
    assert repo.git("status", "--porcelain") == ""

    repo.cp("undo")
    for path, data in attempt.items():
        assert (repo.path / path).read_bytes() == data, path


def test_a_file_with_a_second_hard_link_is_replaced_not_overwritten(
    repo: Repo, tmp_path: Path
) -> None:
    _saved(repo)
    (repo.path / "long.txt").write_bytes(b"attempt\n")
    other = tmp_path / "elsewhere.txt"
    os.link(repo.path / "long.txt", other)

    repo.cp("restore", "cp_001")

    assert (repo.path / "long.txt").read_bytes() == b"L" * 3000 + b"\n"
    assert other.read_bytes() == b"attempt\n"  # the other name keeps its own bytes
    assert os.stat(other).st_ino != os.stat(repo.path / "long.txt").st_ino


def test_a_file_with_other_permissions_gets_a_new_files_permissions(repo: Repo) -> None:
    _saved(repo)
    target = repo.path / "long.txt"
    target.write_bytes(b"attempt\n")
    target.chmod(0o600)  # git does not see it; a checkout's new file would not keep it

    repo.cp("restore", "cp_001")

    assert target.read_bytes() == b"L" * 3000 + b"\n"
    assert stat.S_IMODE(os.stat(target).st_mode) == _fresh_perms()
