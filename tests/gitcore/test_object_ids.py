"""Object ids are git's own, whichever SHA-1 a process uses: CPython's for the first
megabyte it hashes (the hook path never loads OpenSSL for a few small objects), then
OpenSSL's."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

# Each in a process of its own: which SHA-1 object_id uses depends on what the process
# hashed before.
CHECK = """
import os, subprocess, sys
from git_checkpoint.gitcore import formats

def git_id(kind, body):
    return subprocess.run(
        ["git", "hash-object", "--stdin", "-t", kind, "--literally"],
        input=body, capture_output=True, check=True,
    ).stdout.decode().strip()

sizes = [int(n) for n in sys.argv[1:]]
for n in sizes:
    body = os.urandom(n)
    assert formats.object_id(b"blob", body) == git_id("blob", body), n
print("openssl" if formats._openssl is not None else "cpython", "hashlib" in sys.modules)
"""


@pytest.mark.parametrize(
    ("sizes", "said"),
    [
        ([0, 1, 4096, 70_000], "cpython False"),
        ([600_000, 600_000, 10, 3_000_000, 0], "openssl True"),
    ],
)
def test_object_ids_are_gits_before_and_after_the_switch(sizes: list[int], said: str) -> None:
    out = subprocess.run(
        [sys.executable, "-c", CHECK, *map(str, sizes)],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"},
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == said.split()
