"""A `git cat-file --batch` request is answered whatever its size: a listing of names
that fits in one pipe page, one just over it and one many pages long, through the kept
child (lookups one at a time, from several threads) and through a child of the
request's own (`read_specs`, `stream`), with missing and ambiguous names among them and
big blobs answering small requests. A child that is gone ends the request in GitFailed,
never in a wait without end, and the next lookup starts another.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from git_checkpoint.core.errors import GitFailed
from git_checkpoint.gitcore.catfile import Objects
from git_checkpoint.gitcore.spawn import child_env

from ..conftest import Repo

T = TypeVar("T")
PAGE = 4096
SIZES = [0, 1, 100, 65535, 65536, 65537, (1 << 20) + 3, 3 << 20]


def within(seconds: float, call: Callable[[], T]) -> T:
    """`call`'s result, or a failure if it has not ended in `seconds`."""
    result: list[T] = []
    error: list[BaseException] = []

    def run() -> None:
        try:
            result.append(call())
        except BaseException as exc:
            error.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        pytest.fail(f"no answer in {seconds} s: the request waits without end")
    if error:
        raise error[0]
    return result[0]


@pytest.fixture
def stored(empty_repo: Repo) -> dict[str, bytes]:
    """Blobs of every size in SIZES, by id."""
    found = {}
    for size in SIZES:
        data = (os.urandom(size // 2 + 1).hex().encode())[:size]
        oid = empty_repo.git("hash-object", "-w", "--stdin", input=data).strip()
        found[oid] = data
    return found


@pytest.fixture
def objects(empty_repo: Repo) -> Iterator[Objects]:
    found = Objects(empty_repo.path, child_env())
    yield found
    found.close()


def rotation(stored: dict[str, bytes]) -> list[str]:
    """Ids to name in turn: each blob once, then the small ones, with a blob just over a
    pipe's 64 KiB among them (a long listing of big blobs would take long to read)."""
    by_size = sorted(stored, key=lambda oid: len(stored[oid]))
    small, over_a_pipe = by_size[:3], by_size[5]
    assert len(stored[over_a_pipe]) == 65537
    return by_size + [over_a_pipe if n % 50 == 0 else small[n % 3] for n in range(1, 1000)]


def listing_of(size: int, oids: list[str]) -> list[str]:
    """Names whose listing (one a line) is `size` bytes: `oids` in turn, then one name
    git has no object for, as long as the rest needs."""
    names: list[str] = []
    used = 0
    while used + 41 + 2 <= size:
        names.append(oids[len(names) % len(oids)])
        used += 41
    names.append("m" * (size - used - 1))
    assert sum(len(n) + 1 for n in names) == size
    return names


@pytest.mark.parametrize(
    "size", [PAGE - 41, PAGE - 1, PAGE, PAGE + 1, PAGE + 41, 16 * PAGE + 7, 300_000]
)
def test_read_specs_answers_listings_about_a_pipe_page_long(
    objects: Objects, stored: dict[str, bytes], size: int
) -> None:
    names = listing_of(size, rotation(stored))
    answers = within(60, lambda: objects.read_specs(names))
    assert answers == [("blob", stored[n]) if n in stored else None for n in names]


@pytest.mark.parametrize("count", [1, PAGE // 41, PAGE // 41 + 1, 1000])
def test_stream_hands_over_every_blob_of_listings_of_every_size(
    objects: Objects, stored: dict[str, bytes], count: int
) -> None:
    oids = rotation(stored)[:count]
    got: dict[int, bytes] = {}

    def sink(n: int, chunks: Iterator[bytes]) -> None:
        got[n] = b"".join(chunks)

    within(60, lambda: objects.stream(oids, sink))
    assert got == {n: stored[oid] for n, oid in enumerate(oids)}
    got.clear()
    within(60, lambda: objects.stream(["0" * 40, *oids], sink, missing_ok=True))
    assert got == {n + 1: stored[oid] for n, oid in enumerate(oids)}
    with pytest.raises(GitFailed):
        within(60, lambda: objects.stream([*oids, "0" * 40], sink))


def test_missing_and_ambiguous_names_answer_none_between_big_blobs(
    empty_repo: Repo, objects: Objects, stored: dict[str, bytes]
) -> None:
    big = max(stored, key=lambda oid: len(stored[oid]))
    ambiguous = _ambiguous_prefix(empty_repo)
    names = [big, ambiguous, "HEAD", big, "a name with spaces", "x" * (PAGE - 1), big]
    answers = within(60, lambda: objects.read_specs(names))
    assert answers == [("blob", stored[n]) if n in stored else None for n in names]


def _ambiguous_prefix(repo: Repo) -> str:
    """A 4-digit prefix two stored objects share (among 2,000, some two do)."""
    folder = repo.path.parent / "numbers"
    folder.mkdir()
    for n in range(2000):
        (folder / str(n)).write_text(f"{n}\n")
    oids = repo.git("hash-object", "-w", *(str(folder / str(n)) for n in range(2000))).split()
    seen: set[str] = set()
    for oid in oids:
        if oid[:4] in seen:
            return oid[:4]
        seen.add(oid[:4])
    raise AssertionError("no two ids share a prefix")


def test_kept_lookups_from_several_threads_each_get_their_own_object(
    objects: Objects, stored: dict[str, bytes]
) -> None:
    oids = list(stored)
    wrong: list[str] = []

    def lookups(k: int) -> None:
        for i in range(40):
            oid = oids[(i + k) % len(oids)]
            if objects[oid].read_raw() != stored[oid]:
                wrong.append(oid)
            objects._cache.clear()  # each lookup goes to the child

    threads = [threading.Thread(target=lookups, args=(k,), daemon=True) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
        assert not thread.is_alive(), "a lookup waits without end"
    assert wrong == []


def test_a_kept_child_killed_between_lookups_fails_one_and_the_next_starts_another(
    objects: Objects, stored: dict[str, bytes]
) -> None:
    big = max(stored, key=lambda oid: len(stored[oid]))
    small = min(stored, key=lambda oid: len(stored[oid]))
    assert within(30, lambda: objects[small].read_raw()) == stored[small]
    child = objects._child
    assert child is not None
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    with pytest.raises(GitFailed):
        within(30, lambda: objects[big])
    assert within(30, lambda: objects[big].read_raw()) == stored[big]


@pytest.mark.parametrize("count", [1, PAGE // 41, PAGE // 41 + 1, 400])
def test_a_git_that_ends_without_reading_fails_every_request(
    empty_repo: Repo,
    stored: dict[str, bytes],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    count: int,
) -> None:
    wrappers = tmp_path / "bin"
    wrappers.mkdir()
    git = wrappers / "git"
    git.write_text("#!/bin/sh\nexec 0<&-\nexit 3\n")
    git.chmod(0o755)
    monkeypatch.setenv("PATH", f"{wrappers}{os.pathsep}{os.environ['PATH']}")
    names = [list(stored)[n % len(stored)] for n in range(count)]
    objects = Objects(empty_repo.path, child_env())
    with pytest.raises(GitFailed):
        within(30, lambda: objects[names[0]])
    with pytest.raises(GitFailed):
        within(30, lambda: objects.read_specs(names))
    with pytest.raises(GitFailed):
        within(30, lambda: objects.stream(names, lambda n, chunks: None))
