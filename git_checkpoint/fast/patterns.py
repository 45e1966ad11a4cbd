"""`hooks.risky_commands` / `hooks.harmless_commands` for the hook path, without loading
the YAML parser on every agent tool call: most projects have no `hooks:` key, and the
lists of those that do are cached in the git dir until the file changes.

The parser itself is the configuration's (config/parse.py): the caller hands it in, so
that this module stays on the hook path's side of the layers.
"""

from __future__ import annotations

import os
import stat

from ..core import cjson
from ..gitcore.locate import find_repo

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

    Parse = Callable[[bytes], tuple[list[str], list[str]]]

CONFIG_NAME = ".checkpoint.yaml"
CACHE_NAME = "hook-patterns.json"


def configured_patterns(cwd: str, parse: Parse) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The `hooks:` patterns of the work tree's .checkpoint.yaml, as `parse` reads the
    file's bytes (risky ones, harmless ones).

    Most projects have no `hooks:` key, and then nothing is parsed. When there is one,
    the parsed lists are cached in the git dir, keyed by the file's size, mtime and
    inode, so the file is parsed again only after it changes.
    """
    repo = find_repo(cwd, whatever_env=True)
    if repo is None:
        return (), ()
    path = os.path.join(repo.root, CONFIG_NAME)
    try:
        st = os.stat(path)
        if not stat.S_ISREG(st.st_mode) or st.st_size > 1 << 20:
            return (), ()  # not a config file the save would read either: it says so
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return (), ()
    if b"hooks:" not in data:
        return (), ()
    key = f"{st.st_size}:{st.st_mtime_ns}:{st.st_ino}"
    cache = os.path.join(repo.git_dir, "checkpoint", CACHE_NAME)
    try:
        with open(cache, encoding="utf-8") as fh:
            cached = cjson.loads(fh.read())
        risky, harmless = cached["risky"], cached["harmless"]
        if cached["key"] == key and all(isinstance(p, str) for p in [*risky, *harmless]):
            return tuple(risky), tuple(harmless)
    except (OSError, ValueError, KeyError, TypeError):
        pass
    risky, harmless = parse(data)
    try:
        os.makedirs(os.path.dirname(cache), exist_ok=True)
        tmp = f"{cache}.{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(cjson.dumps({"key": key, "risky": risky, "harmless": harmless}))
        os.replace(tmp, cache)
    except OSError:
        pass  # no cache: the next call parses again
    return tuple(risky), tuple(harmless)
