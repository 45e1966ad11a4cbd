"""git's auto maintenance, run as git's own commit, merge and fetch run it.

A wide restore stores a safety checkpoint of a thousand files: a thousand loose objects,
uncompressed, and a pack of trees. Git packs and prunes those in `git gc --auto`, which
its porcelain starts after writing objects; a tool that never does leaves them to pile
up until the user commits, and every object lookup is slower for it.

`after` asks git only when git would act: the loose objects in `objects/17` past
gc.auto / 256, or more packs than gc.autoPackLimit (git's own `need_to_gc`), read from
two folders without starting a process. Then `git maintenance run --auto` decides with
the user's whole configuration (maintenance.auto, gc.auto, a pre-auto-gc hook) and `gc
--auto` detaches as git's does (gc.autoDetach).

Who asks: each command that wrote objects, once its work is done and its lock released,
as git's commit does; `run` once, after its loop (its saves and restores would leave
each detached gc a zombie of the subreaper it is). A hook's save never asks: a git hook
runs inside git's own command, which maintains once done, and an agent's tool call must
not wait for git's part, whose ref locks (pack-refs, reflog expire) would meet the
agent's next `git commit` if left to run beside it. The next command of ours, or git's
own commit, asks instead.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Iterable
from pathlib import Path

from .repo import Repo, run_git_quietly

_HEX = frozenset("0123456789abcdef")
GC_AUTO = 6700  # git's defaults
GC_AUTO_PACK_LIMIT = 50


def due(objects: Path, config: Iterable[tuple[str, str]]) -> bool:
    """Would `git gc --auto` act on `objects` (the object folder) under `config`
    (gc.auto, gc.autopacklimit, maintenance.auto, as read)?"""
    values = dict(config)  # the last of a key wins, as in git
    if not _bool(values.get("maintenance.auto", "true")):
        return False
    auto = _int(values.get("gc.auto"), GC_AUTO)
    if auto <= 0:
        return False
    limit = _int(values.get("gc.autopacklimit"), GC_AUTO_PACK_LIMIT)
    if limit > 0 and _packs(objects / "pack") > limit:
        return True
    return _loose(objects / "17") > (auto + 255) // 256


def after(repo: Repo) -> None:
    """Once a command's work is done: `git maintenance run --auto` when `due`. A Ctrl-C
    that lands while it runs stops only it: the command's work is done and stored."""
    objects = repo.common_dir / "objects"
    if "GIT_OBJECT_DIRECTORY" in os.environ or not due(objects, repo.config_pairs()):
        return
    with contextlib.suppress(KeyboardInterrupt):
        run_git_quietly(["maintenance", "run", "--auto", "--quiet"], repo.root)


# git_parse_signed: strtoimax(value, &end, 0), then an optional unit, nothing after.
_NUMBER = re.compile(r"[ \t\n\v\f\r]*([+-]?)(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)([kKmMgG]?)")
_UNIT = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
_INT_MAX = (1 << 31) - 1


def _number(value: str) -> int | None:
    """git_config_int's reading of `value` (decimal, 0x hex or 0 octal, with an optional
    k, m or g, within an int); None where git would refuse it."""
    match = _NUMBER.fullmatch(value)
    if match is None:
        return None
    sign, digits, unit = match.groups()
    number = int(digits, 16 if digits[:2].lower() == "0x" else 8 if digits[:1] == "0" else 10)
    number *= (-1 if sign == "-" else 1) * _UNIT[unit.lower()]
    return number if -_INT_MAX - 1 <= number <= _INT_MAX else None


def _int(value: str | None, default: int) -> int:
    """An integer setting as git reads it; a value git would refuse leaves git's
    default (git itself then says what is wrong)."""
    number = None if value is None else _number(value)
    return default if number is None else number


def _bool(value: str) -> bool:
    """git_parse_maybe_bool: true/yes/on, false/no/off or empty, else an integer (0 is
    false: 00, 0x0 and 0k too). A value git refuses is false: git dies on it before it
    would run maintenance."""
    text = value.lower()
    if text in ("true", "yes", "on"):
        return True
    if text in ("false", "no", "off", ""):
        return False
    return bool(_number(value))


def _packs(folder: Path) -> int:
    """Packs git counts toward gc.autoPackLimit: those without a .keep file."""
    try:
        names = set(os.listdir(folder))
    except OSError:
        return 0
    return sum(
        1 for n in names if n.endswith(".pack") and n[: -len(".pack")] + ".keep" not in names
    )


def _loose(folder: Path) -> int:
    try:
        names = os.listdir(folder)
    except OSError:
        return 0
    return sum(1 for n in names if len(n) in (38, 62) and _HEX.issuperset(n))  # SHA-1, SHA-256
