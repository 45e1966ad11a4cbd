"""`hooks.risky_commands` / `hooks.harmless_commands` for the hook entry, without
loading the YAML parser on every agent tool call: most projects have no `hooks:` key,
and the lists of those that do are cached in the git dir until the file changes.
"""

from __future__ import annotations

import json
import os
import stat


def configured_patterns(cwd: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The `hooks:` patterns of the work tree's .checkpoint.yaml.

    Most projects have no `hooks:` key, and then no YAML is parsed. When there is one,
    the parsed lists are cached in the git dir, keyed by the file's size and mtime, so
    the YAML parser is loaded only after the file changes.
    """
    root = _work_tree_root(cwd)
    if root is None:
        return (), ()
    path = os.path.join(root, ".checkpoint.yaml")
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
    cache = ""
    try:
        cache = _cache_path(root)
        with open(cache, encoding="utf-8") as fh:
            cached = json.load(fh)
        risky, harmless = cached["risky"], cached["harmless"]
        if cached["key"] == key and all(isinstance(p, str) for p in [*risky, *harmless]):
            return tuple(risky), tuple(harmless)
    except (OSError, ValueError, KeyError, TypeError):
        pass
    risky, harmless = _parse_patterns(data)
    if not cache:
        return tuple(risky), tuple(harmless)
    try:
        tmp = f"{cache}.{os.getpid()}"
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump({"key": key, "risky": risky, "harmless": harmless}, fh)
        os.replace(tmp, cache)
    except OSError:
        pass  # no cache (or no git dir to keep it in): the next call parses again
    return tuple(risky), tuple(harmless)


def _parse_patterns(data: bytes) -> tuple[list[str], list[str]]:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        doc = yaml.load(data, Loader=loader)
    except yaml.YAMLError:
        return [], []  # the save, if one is due, reports the bad file itself
    hooks = doc.get("hooks") if isinstance(doc, dict) else None
    if not isinstance(hooks, dict):
        return [], []

    def strings(key: str) -> list[str]:
        value = hooks.get(key)
        return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []

    return strings("risky_commands"), strings("harmless_commands")


def _work_tree_root(cwd: str) -> str | None:
    here = os.path.abspath(cwd)
    while True:
        if os.path.exists(os.path.join(here, ".git")):
            return here
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def _cache_path(root: str) -> str:
    dot_git = os.path.join(root, ".git")
    git_dir = dot_git
    if os.path.isfile(dot_git):  # a linked worktree or submodule: "gitdir: PATH"
        with open(dot_git, encoding="utf-8", errors="replace") as fh:
            line = fh.readline().strip()
        if line.startswith("gitdir:"):
            git_dir = os.path.join(root, line[len("gitdir:") :].strip())
    state = os.path.join(git_dir, "checkpoint")
    os.makedirs(state, exist_ok=True)
    return os.path.join(state, "hook-patterns.json")
