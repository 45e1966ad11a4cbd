"""Project configuration read: `.checkpoint.yaml`, then `git config checkpoint.*`.

The file is parsed with PyYAML (config/yaml_file.py) only when its bytes are new: what it
parsed to is kept in the git dir, keyed by those bytes (config/cache.py), so that a hook's
save or a restore does not import PyYAML.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from pathlib import Path

from ..core.errors import UsageError
from ..core.records import read_regular_file
from ..gitcore.repo import Repo
from .model import (
    CONFIG_NAME,
    PROMOTION_RULES,
    Config,
    include_problem,
    parse_size,
)

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    from typing import Any


def parse_config_text(text: str, path: Path) -> Config:
    """Parse and validate the text of a `.checkpoint.yaml`."""
    from .yaml_file import parse_text

    return parse_text(text, path)


# `git config checkpoint.<key>`: the keys and how each overrides the file.
GIT_CONFIG_KEYS = (
    "include",
    "exclude",
    "overlaymaxbytes",
    "overlaymaxfiles",
    "promotionrule",
    "locktimeout",
    "secretsonsave",
    "secretsonpush",
    "taskprefix",
    "pushwithbranch",
)


def apply_git_config(cfg: Config, pairs: list[tuple[str, str]]) -> Config:
    """Apply `git config checkpoint.*` entries (multi-valued include/exclude append)."""
    changes: dict[str, Any] = {}
    include = list(cfg.include)
    exclude = list(cfg.exclude)
    for full_key, value in pairs:
        key = full_key.split(".", 1)[1].lower() if "." in full_key else full_key
        where = f"git config {full_key}"
        if key == "include":
            problem = include_problem(value)
            if problem:
                raise UsageError(f"{where} {value}: {problem}")
            include.append(value)
        elif key == "exclude":
            exclude.append(value)
        elif key in ("overlaymaxbytes", "overlaymaxfiles", "locktimeout"):
            number = parse_size(value) if key == "overlaymaxbytes" else _to_number(value)
            whole = key != "locktimeout"
            if (
                number is None
                or not math.isfinite(number)  # nan would wait forever, inf too
                or number <= 0
                or (whole and number != int(number))
            ):
                kind = "a positive whole number" if whole else "a positive number"
                raise UsageError(f"{where}: expected {kind}, got {value!r}")
            name = {
                "overlaymaxbytes": "overlay_max_bytes",
                "overlaymaxfiles": "overlay_max_files",
                "locktimeout": "lock_timeout",
            }[key]
            changes[name] = float(number) if key == "locktimeout" else int(number)
        elif key == "promotionrule":
            if value not in PROMOTION_RULES:
                raise UsageError(f"{where}: must be one of {', '.join(PROMOTION_RULES)}")
            changes["promotion_rule"] = value
        elif key in ("secretsonsave", "secretsonpush"):
            allowed = ("warn", "block", "ignore") if key == "secretsonsave" else ("block", "warn")
            if value not in allowed:
                raise UsageError(f"{where}: must be one of {', '.join(allowed)}")
            changes["secrets_on_save" if key == "secretsonsave" else "secrets_on_push"] = value
        elif key == "taskprefix":
            if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9._/-]*", value) or ".." in value:
                raise UsageError(f"{where}: use letters, digits, . _ - /, like runner-7/")
            changes["task_prefix"] = value
        elif key == "pushwithbranch":  # read by the pre-push hook: git_hooks.push_with_branch
            if value.lower() not in ("true", "false", "yes", "no", "on", "off", "1", "0", ""):
                raise UsageError(f"{where}: expected true or false, got {value!r}")
        else:
            raise UsageError(f"{where}: unknown key (known: {', '.join(GIT_CONFIG_KEYS)})")
    changes["include"] = tuple(include)
    changes["exclude"] = tuple(exclude)
    return replace(cfg, **changes)


def _to_number(value: str) -> float | None:
    try:
        return float(value)
    except ValueError:
        return None


CONFIG_MAX_BYTES = 1024 * 1024  # a real one is a few hundred bytes


def load_config(
    root: Path, git_pairs: list[tuple[str, str]], *, cache: Path | None = None
) -> Config:
    """The work tree's `.checkpoint.yaml`, then `git config checkpoint.*`. `cache`: the
    folder (ours, in the git dir) where what the file parsed to is kept."""
    path = root / CONFIG_NAME
    cfg = Config()
    data = read_regular_file(path, CONFIG_MAX_BYTES)
    if data is not None:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UsageError(f"{path}: cannot read: {exc}") from None
        cfg = _parsed(text, path, cache) if cache is not None else parse_config_text(text, path)
    return apply_git_config(cfg, git_pairs)


def load_repo_config(repo: Repo) -> Config:
    """`repo`'s configuration, what its `.checkpoint.yaml` parsed to kept beside our
    state in the git dir."""
    return load_config(repo.root, repo.checkpoint_config(), cache=repo.common_dir / "checkpoint")


def _parsed(text: str, path: Path, cache: Path) -> Config:
    from . import cache as kept

    found = kept.cached(cache, path, text)
    if found is not None:
        return found
    try:
        cfg = parse_config_text(text, path)
    except UsageError as exc:
        kept.keep(cache, path, text, exc)
        raise
    kept.keep(cache, path, text, cfg)
    return cfg


def hook_patterns(data: bytes) -> tuple[list[str], list[str]]:
    """The `hooks:` pattern lists of a `.checkpoint.yaml` (risky, harmless), read leniently
    for the hook path: a file that does not parse has none (the save, if one is due,
    reports what is wrong with it)."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        doc = yaml.load(data, Loader=loader)
    except yaml.YAMLError:
        return [], []
    hooks = doc.get("hooks") if isinstance(doc, dict) else None
    if not isinstance(hooks, dict):
        return [], []

    def strings(key: str) -> list[str]:
        value = hooks.get(key)
        return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []

    return strings("risky_commands"), strings("harmless_commands")
