"""A wide restore (past restore/apply.REFRESH_PATHS_MAX files) sets the stat data in the
index itself: under every index setting git has, a same-size edit after the restore is
still seen, and a signal or a SIGKILL while it holds index.lock leaves undo and
--continue a whole way back."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from git_checkpoint.restore.apply import REFRESH_PATHS_MAX

from ..conftest import Repo
from ..helpers import fingerprint

COUNT = REFRESH_PATHS_MAX + 30  # past the threshold where set_stats replaces --refresh


CP = str(Path(sys.executable).parent / "git-checkpoint")


def _strace_works() -> bool:
    if shutil.which("strace") is None:
        return False
    probe = subprocess.run(["strace", "-qq", "-o", "/dev/null", "true"], capture_output=True)
    return probe.returncode == 0


needs_strace = pytest.mark.skipif(not _strace_works(), reason="strace (ptrace) not available")


def _full_state(repo: Repo) -> tuple[object, ...]:
    """Bytes and exec bit of every file, the index's entries and flags, and status."""
    return (
        fingerprint(repo.path),
        repo.git("ls-files", "-s", "-t", "-v"),
        repo.git("status", "--porcelain=v2", "--untracked-files=all"),
    )


def _many(repo: Repo, text: str, count: int = COUNT) -> None:
    for i in range(count):
        repo.write(f"many/d{i % 9}/e{i % 4}/f{i:04}.txt", text.format(i=i))


def _with_strace_inject(repo: Repo, inject: str, *args: str) -> subprocess.CompletedProcess[str]:
    """`git-checkpoint ARGS` (the Python entry point itself) under strace -f -e inject."""
    syscall = inject.split(":", 1)[0]
    strace = ["strace", "-f", "-qq", "-o", "/dev/null", "-e", f"trace={syscall}"]
    return subprocess.run(
        [*strace, "-e", f"inject={inject}", CP, *args],
        cwd=repo.path,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        preexec_fn=_default_signals,  # a test run under nohup would pass SIGHUP ignored
    )


def _default_signals() -> None:
    for sig in (signal.SIGHUP, signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, signal.SIG_DFL)


# --- a SIGKILL while set_stats holds index.lock, then an undo that fails


@needs_strace
def test_undo_still_goes_back_after_a_failed_undo_on_a_stale_lock(repo: Repo) -> None:
    _many(repo, "good {i}\n" * 3)
    repo.commit_all("many")
    repo.cp("save", "-m", "good")
    _many(repo, "attempt {i}\n")
    before = _full_state(repo)
    killed = _with_strace_inject(repo, "fchmod:signal=KILL:when=1", "restore", "cp_001")
    assert killed.returncode != 0
    lock = repo.path / ".git" / "index.lock"
    assert lock.exists()  # set_stats held it (fchmod of the lock) when the SIGKILL came
    first = repo.cp("undo", expect=None)  # (it removes the lock its killed run left)
    lock.unlink(missing_ok=True)  # as git's message says to, were it still there
    if first.returncode != 0:  # (restore/test_failed_undo.py: the journal is left for this)
        repo.cp("undo")
    assert _full_state(repo) == before


# --- a same-size edit between a file's write and the fstat taken for the index

_WATCHER = r"""
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init()
root, listing = sys.argv[1], sys.argv[2]
wds = {}
for p in open(listing).read().split("\n"):
    if p:
        wds[libc.inotify_add_watch(fd, os.fsencode(os.path.join(root, p)), 0x2)] = p
print("ready", flush=True)
done, buf = set(), b""
while len(done) < len(wds):
    buf += os.read(fd, 65536)
    while len(buf) >= 16:
        wd, _, _, ln = struct.unpack_from("iIII", buf)
        buf = buf[16 + ln:]
        if wd in wds and wd not in done:
            done.add(wd)
            with open(os.path.join(root, wds[wd]), "r+b") as fh:
                first = fh.read(1)
                fh.seek(0)
                fh.write(bytes([first[0] ^ 0x20]))
"""


@needs_strace
@pytest.mark.xfail(
    strict=False,  # the watcher's edit lands in the window most runs, not all
    reason="a narrow race: a same-size edit landing between a file's write and the fstat "
    "taken for set_stats is recorded as clean, where `update-index --refresh` would hash "
    "the file and see it (git's own checkout has the same microsecond window)",
)
def test_an_edit_right_after_a_write_is_not_shown_clean(repo: Repo, tmp_path: Path) -> None:
    _many(repo, "good {i}\n")
    repo.commit_all("many")
    repo.cp("save", "-m", "good")
    _many(repo, "a longer attempt {i}\n")  # longer: each write is followed by ftruncate
    listing = tmp_path / "paths"
    listing.write_text(repo.git("ls-files"))
    watcher = tmp_path / "watcher.py"
    watcher.write_text(_WATCHER)
    proc = subprocess.Popen(
        [sys.executable, str(watcher), str(repo.path), str(listing)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        # 20 ms at each ftruncate (between the write and the fstat): the watcher's edit,
        # triggered by the write, lands there as it may by chance without strace
        done = _with_strace_inject(repo, "ftruncate:delay_enter=20000", "restore", "cp_001")
        assert done.returncode == 0, done.stderr
    finally:
        time.sleep(0.5)
        proc.kill()
        proc.wait()
    differ = []
    for line in repo.git("ls-files", "-s").splitlines():
        meta, path = line.split("\t")
        if repo.git("hash-object", path).strip() != meta.split()[1]:
            differ.append(path)
    assert differ  # the watcher did edit files
    shown = set(repo.git("diff-files", "--name-only").splitlines())
    assert [p for p in differ if p not in shown] == []


_FSMONITOR = """#!{python}
import os, sys
since = int(sys.argv[2]) - 2_000_000_000
out = []
for top, dirs, files in os.walk("."):
    if top == "." and ".git" in dirs:
        dirs.remove(".git")
    for name in files:
        st = os.lstat(os.path.join(top, name))
        if max(st.st_mtime_ns, st.st_ctime_ns) >= since:
            out.append(os.path.relpath(os.path.join(top, name), "."))
sys.stdout.write("\\0".join(out) + "\\0")
"""


SETUPS = {
    "plain": [],
    "filemode-false": [["config", "core.fileMode", "false"]],
    "checkstat-minimal": [["config", "core.checkStat", "minimal"]],
    "no-trustctime": [["config", "core.trustctime", "false"]],
    "untracked-cache": [
        ["config", "core.untrackedCache", "true"],
        ["update-index", "--untracked-cache"],
        ["status"],
    ],
    "offset-table": [
        ["config", "index.recordEndOfIndexEntries", "true"],
        ["config", "index.recordOffsetTable", "true"],
        ["config", "index.threads", "2"],
        ["update-index", "--really-refresh"],
    ],
    "sparse-index": [
        ["sparse-checkout", "set", "--cone", "--sparse-index", "many/d0", "many/d1", "many/d2"]
        + [f"many/d{n}" for n in range(3, 8)],
    ],
    "flags": [
        ["update-index", "--skip-worktree", "many/d1/e1/f0001.txt"],
        ["update-index", "--assume-unchanged", "many/d2/e2/f0002.txt"],
    ],
    "fsmonitor-hook": [
        ["config", "core.fsmonitor", "{hook}"],
        ["config", "core.fsmonitorHookVersion", "1"],
        ["update-index", "--fsmonitor"],
        ["status"],
    ],
}


@pytest.mark.parametrize("setup", list(SETUPS), ids=list(SETUPS))
def test_a_wide_restore_under_each_index_setting(repo: Repo, tmp_path: Path, setup: str) -> None:
    hook = tmp_path / "fsmonitor.py"
    hook.write_text(_FSMONITOR.format(python=sys.executable))
    hook.chmod(0o755)
    _many(repo, "good {i}\n" * 3)
    repo.commit_all("many")
    for args in SETUPS[setup]:
        repo.git(*[a.format(hook=hook) for a in args])
    repo.cp("save", "-m", "good")
    _many(repo, "attempt {i}\n")
    if setup == "sparse-index":  # outside the cone: not on disk
        for d in (8,):
            shutil.rmtree(repo.path / f"many/d{d}", ignore_errors=True)
    before = _full_state(repo)

    repo.cp("restore", "cp_001")
    assert repo.git("status", "--porcelain") == ""
    assert repo.git("diff", "--stat") == ""
    assert not (repo.path / ".git" / "index.lock").exists()
    # A same-size edit after the restore is seen (not hidden by the stat data set).
    edited = []
    for path in repo.git("ls-files").splitlines()[:40]:
        full = repo.path / path
        if not full.exists() or path in ("many/d1/e1/f0001.txt", "many/d2/e2/f0002.txt"):
            continue
        data = full.read_bytes()
        full.write_bytes(bytes([data[0] ^ 0x20]) + data[1:])
        edited.append(path)
    shown = {line[3:] for line in repo.git("status", "--porcelain").splitlines()}
    assert [p for p in edited if p not in shown] == []
    for path in edited:
        data = (repo.path / path).read_bytes()
        (repo.path / path).write_bytes(bytes([data[0] ^ 0x20]) + data[1:])
    assert repo.git("status", "--porcelain") == ""

    repo.cp("undo")
    assert _full_state(repo) == before
    repo.git("fsck", "--no-dangling")


@needs_strace
@pytest.mark.parametrize("sig", ["TERM", "HUP", "INT"])
def test_a_signal_while_set_stats_holds_the_lock(repo: Repo, sig: str) -> None:
    """SIGTERM and SIGHUP wait for the lock to go; Ctrl-C's `finally` removes it. Either
    way undo, or --continue, finishes the job."""
    _many(repo, "good {i}\n" * 3)
    repo.commit_all("many")
    repo.cp("save", "-m", "good")
    _many(repo, "attempt {i}\n")
    before = _full_state(repo)
    shutil.copytree(repo.path, repo.path.parent / "twin", symlinks=True)
    twin = Repo(repo.path.parent / "twin")
    twin.cp("restore", "cp_001")
    after = _full_state(twin)
    shutil.rmtree(twin.path)

    hit = _with_strace_inject(repo, f"fchmod:signal={sig}:when=1", "restore", "cp_001")
    assert hit.returncode != 0
    assert not (repo.path / ".git" / "index.lock").exists()
    shutil.copytree(repo.path, twin.path, symlinks=True)
    repo.cp("undo")
    assert _full_state(repo) == before
    twin.cp("restore", "--continue")
    assert _full_state(twin) == after


@needs_strace
@pytest.mark.parametrize("n", [2, 80, COUNT - 1])
def test_a_sigkill_between_an_unlink_and_its_new_file(repo: Repo, n: int) -> None:
    """Killed as it unlinks one old file, some written before it: undo and --continue
    each bring back a whole state."""
    _many(repo, "good {i}\n")
    repo.commit_all("many")
    repo.cp("save", "-m", "good")
    _many(repo, "a longer attempt {i}\n")
    before = _full_state(repo)
    victim = repo.path / f"many/d{n % 9}/e{n % 4}/f{n:04}.txt"
    strace = ["strace", "-f", "-qq", "-o", "/dev/null", "-P", str(victim), "-e", "trace=unlink"]
    killed = subprocess.run(
        [*strace, "-e", "inject=unlink:signal=KILL:when=1", CP, "restore", "cp_001"],
        cwd=repo.path,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert killed.returncode != 0
    assert victim.read_text() == f"a longer attempt {n}\n"  # killed as it unlinks it
    assert not (repo.path / ".git" / "index.lock").exists()
    twin = Repo(repo.path.parent / "twin")
    shutil.copytree(repo.path, twin.path, symlinks=True)
    repo.cp("undo")
    assert _full_state(repo) == before
    twin.cp("restore", "--continue")
    assert twin.git("status", "--porcelain") == ""
    assert twin.git("diff", "HEAD", "--stat") == ""
