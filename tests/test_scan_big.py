"""A big changed file (data, past secrets_scan.MAX_BLOB_BYTES) is never read into memory
by the secret scan on save: before, a 23 MB CSV with one line appended cost the save 2 s
and 700 MB. The files around it are still scanned."""

from __future__ import annotations

import json
import subprocess
import sys

from git_checkpoint.save.secrets import MAX_BLOB_BYTES

from .conftest import Repo
from .test_scan import GITHUB, no_secret_printed


def _rows(count: int) -> bytes:
    return b"".join(b"2026-12-01,%d,sensor-7,ok\n" % n for n in range(count))


def _peak_rss_kib(repo: Repo, *args: str) -> tuple[int, subprocess.CompletedProcess[str]]:
    """Run `git checkpoint ARGS` from a fresh Python; the largest RSS of its processes."""
    script = (
        "import json, resource, subprocess, sys\n"
        "p = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "print(json.dumps([resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,"
        " p.returncode, p.stdout, p.stderr]))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, "git", "checkpoint", *args],
        cwd=repo.path,
        capture_output=True,
        text=True,
        check=True,
    )
    rss, code, stdout, stderr = json.loads(out.stdout)
    return rss, subprocess.CompletedProcess(args, code, stdout, stderr)


def test_a_big_changed_file_is_not_read_and_its_neighbours_are_scanned(repo: Repo) -> None:
    big = _rows(3 * MAX_BLOB_BYTES // 28)  # 27 MB, each line its own
    repo.write("data/readings.csv", big)
    repo.commit_all("data")
    repo.cp("save", "-m", "base")
    repo.write("data/readings.csv", big + b"2026-12-02,0,sensor-7,ok\n")
    repo.write("deploy/settings.ini", f"GITHUB_TOKEN={GITHUB}\n")  # after it in the stream

    rss, save = _peak_rss_kib(repo, "save", "-m", "one more row")

    assert save.returncode == 0, save.stderr
    assert "possible secret saved" in save.stderr and "deploy/settings.ini" in save.stderr
    no_secret_printed(save.stdout, save.stderr)
    # Two versions read whole, decoded and split into a set of lines: 300+ MB here, and
    # 700 MB in the field; now the process stays near its usual 30 MB.
    assert rss < 120 * 1024, rss
