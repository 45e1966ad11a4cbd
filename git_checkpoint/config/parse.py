"""Project configuration read: `.checkpoint.yaml`, then `git config checkpoint.*`.

The file is validated node by node so that every error names the file, line, column and
field; unknown keys are errors, never silently ignored.
"""

from __future__ import annotations

import errno
import math
import os
import re
import stat
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from ..core.errors import UsageError
from .model import (
    CONFIG_NAME,
    DEFAULT_EXCLUDE,
    OVERLAY_ON_EXCEED,
    PROMOTION_RULES,
    Config,
    Retention,
    Verifier,
    include_problem,
)

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(B|KB|KiB|MB|MiB|GB|GiB)?\s*$", re.IGNORECASE)
_SIZE_UNITS = {
    "b": 1,
    "kb": 1000,
    "kib": 1024,
    "mb": 1000**2,
    "mib": 1024**2,
    "gb": 1000**3,
    "gib": 1024**3,
}
_AGE = re.compile(r"^\s*(\d+)\s*([smhdw])\s*$")
_AGE_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_size(text: str) -> int | None:
    m = _SIZE.match(text)
    if not m:
        return None
    size = float(m.group(1)) * _SIZE_UNITS[(m.group(2) or "b").lower()]
    return int(size) if math.isfinite(size) else None  # 400 nines is no size either


def parse_age(text: str) -> int | None:
    m = _AGE.match(text)
    return int(m.group(1)) * _AGE_UNITS[m.group(2)] if m else None


class _Checker:
    """Walks composed YAML nodes, so that errors carry line and column."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def fail(self, node: yaml.Node, what: str) -> UsageError:
        mark = node.start_mark
        return UsageError(f"{self.path}:{mark.line + 1}:{mark.column + 1}: {what}")

    def mapping(self, node: yaml.Node, where: str, keys: set[str]) -> dict[str, yaml.Node]:
        if not isinstance(node, yaml.MappingNode):
            raise self.fail(node, f"{where} must be a mapping")
        out: dict[str, yaml.Node] = {}
        for key_node, value_node in node.value:
            key = key_node.value if isinstance(key_node, yaml.ScalarNode) else None
            if not isinstance(key, str) or key not in keys:
                known = ", ".join(sorted(keys))
                raise self.fail(key_node, f"unknown key {where}.{key} (known: {known})")
            if key in out:
                raise self.fail(key_node, f"duplicate key {where}.{key}")
            out[key] = value_node
        return out

    def scalar(self, node: yaml.Node, where: str) -> Any:
        if not isinstance(node, yaml.ScalarNode):
            raise self.fail(node, f"{where} must be a single value")
        try:
            return yaml.safe_load(yaml.serialize(node))
        except (yaml.YAMLError, ValueError, TypeError) as exc:
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise self.fail(node, f"{where}: cannot be read: {problem}") from None

    def string(self, node: yaml.Node, where: str) -> str:
        value = self.scalar(node, where)
        if isinstance(value, bool | int | float):  # YAML read `true`, `1`, `1.5` as such
            shown = str(value).lower() if isinstance(value, bool) else repr(value)
            raise self.fail(node, f"{where} must be a string, not {shown}: quote it")
        if not isinstance(value, str) or not value.strip():
            raise self.fail(node, f"{where} must be a non-empty string")
        if "\0" in value:  # no command, path or pattern can hold one
            raise self.fail(node, f"{where} must not contain a NUL character")
        return value

    def boolean(self, node: yaml.Node, where: str) -> bool:
        value = self.scalar(node, where)
        if not isinstance(value, bool):
            raise self.fail(node, f"{where} must be true or false")
        return value

    def integer(self, node: yaml.Node, where: str, minimum: int = 0) -> int:
        value = self.scalar(node, where)
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise self.fail(node, f"{where} must be a whole number >= {minimum}")
        return int(value)

    def number(self, node: yaml.Node, where: str) -> float:
        value = self.scalar(node, where)
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or value <= 0
        ):
            text = f", not the text {value!r}" if isinstance(value, str) else ""
            raise self.fail(node, f"{where} must be a positive number of seconds{text}")
        return float(value)

    def strings(self, node: yaml.Node, where: str) -> tuple[str, ...]:
        if not isinstance(node, yaml.SequenceNode):
            raise self.fail(node, f"{where} must be a list of strings")
        return tuple(self.string(item, f"{where}[{i}]") for i, item in enumerate(node.value))

    def choice(self, node: yaml.Node, where: str, choices: tuple[str, ...]) -> str:
        value = self.string(node, where)
        if value not in choices:
            raise self.fail(node, f"{where} must be one of {', '.join(choices)}, not {value!r}")
        return value

    def size(self, node: yaml.Node, where: str) -> int:
        value = self.scalar(node, where)
        parsed = value if isinstance(value, int) and not isinstance(value, bool) else None
        if isinstance(value, str):
            parsed = parse_size(value)
        if parsed is None or parsed <= 0:
            raise self.fail(node, f"{where} must be a size like 50MiB, not {value!r}")
        return parsed

    def verifier(self, node: yaml.Node, where: str, default_name: str) -> Verifier:
        keys = self.mapping(node, where, {"name", "command", "required", "timeout"})
        if "command" not in keys:
            raise self.fail(node, f"{where}.command is missing")
        name = self.string(keys["name"], f"{where}.name") if "name" in keys else default_name
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", name):
            raise self.fail(
                keys.get("name", node), f"{where}.name {name!r}: use letters, digits, . _ -"
            )
        return Verifier(
            name=name,
            command=self.string(keys["command"], f"{where}.command"),
            required=self.boolean(keys["required"], f"{where}.required")
            if "required" in keys
            else True,
            timeout=self.number(keys["timeout"], f"{where}.timeout")
            if "timeout" in keys
            else 600.0,
        )


TOP_KEYS = {
    "untracked",
    "verifiers",
    "verifier",
    "promotion_rule",
    "retention",
    "limits",
    "secrets",
    "hooks",
}


def parse_config_text(text: str, path: Path) -> Config:
    """Parse and validate the text of a `.checkpoint.yaml`."""
    try:
        root = yaml.compose(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{path}:{mark.line + 1}:{mark.column + 1}" if mark else str(path)
        raise UsageError(f"{where}: malformed YAML: {exc.problem or exc.context}") from None
    except yaml.YAMLError as exc:
        raise UsageError(f"{path}: malformed YAML: {exc}") from None
    cfg = Config(source=str(path))
    if root is None or (isinstance(root, yaml.ScalarNode) and root.tag.endswith(":null")):
        return cfg  # an empty document: nothing configured yet
    check = _Checker(path)
    top = check.mapping(root, "config", TOP_KEYS)
    changes: dict[str, Any] = {}

    if "untracked" in top:
        section = check.mapping(top["untracked"], "untracked", {"include", "exclude"})
        if "include" in section:
            changes["include"] = check.strings(section["include"], "untracked.include")
            for i, item in enumerate(changes["include"]):
                problem = include_problem(item)
                if problem:
                    raise check.fail(section["include"].value[i], f"untracked.include: {problem}")
        if "exclude" in section:
            # The default list stays: a project adds to it; it does not re-open node_modules/.
            extra = check.strings(section["exclude"], "untracked.exclude")
            changes["exclude"] = DEFAULT_EXCLUDE + tuple(
                x for x in extra if x not in DEFAULT_EXCLUDE
            )

    verifiers: list[Verifier] = []
    if "verifier" in top:
        verifiers.append(check.verifier(top["verifier"], "verifier", "verify"))
    if "verifiers" in top:
        node = top["verifiers"]
        if not isinstance(node, yaml.SequenceNode):
            raise check.fail(node, "verifiers must be a list")
        for i, item in enumerate(node.value):
            verifiers.append(check.verifier(item, f"verifiers[{i}]", f"verifier-{i + 1}"))
            if [v.name for v in verifiers].count(verifiers[-1].name) > 1:  # (at the second)
                raise check.fail(item, f"verifier name {verifiers[-1].name!r} is used twice")
    changes["verifiers"] = tuple(verifiers)

    if "promotion_rule" in top:
        changes["promotion_rule"] = check.choice(
            top["promotion_rule"], "promotion_rule", PROMOTION_RULES
        )

    if "retention" in top:
        keys = check.mapping(
            top["retention"],
            "retention",
            {"keep_last", "max_age", "keep_promoted", "keep_safety", "auto"},
        )
        r = Retention()
        if "keep_last" in keys:
            r = replace(r, keep_last=check.integer(keys["keep_last"], "retention.keep_last", 1))
        if "max_age" in keys:
            raw = check.scalar(keys["max_age"], "retention.max_age")
            age = parse_age(str(raw))
            if age is None:
                raise check.fail(
                    keys["max_age"], f"retention.max_age must be like 14d, not {raw!r}"
                )
            r = replace(r, max_age_seconds=age)
        if "keep_promoted" in keys:
            r = replace(
                r, keep_promoted=check.boolean(keys["keep_promoted"], "retention.keep_promoted")
            )
        if "keep_safety" in keys:
            r = replace(r, keep_safety=check.integer(keys["keep_safety"], "retention.keep_safety"))
        if "auto" in keys:
            r = replace(r, auto=check.boolean(keys["auto"], "retention.auto"))
        changes["retention"] = r

    if "limits" in top:
        keys = check.mapping(
            top["limits"], "limits", {"overlay_max_bytes", "overlay_max_files", "on_exceed"}
        )
        if "overlay_max_bytes" in keys:
            changes["overlay_max_bytes"] = check.size(
                keys["overlay_max_bytes"], "limits.overlay_max_bytes"
            )
        if "overlay_max_files" in keys:
            changes["overlay_max_files"] = check.integer(
                keys["overlay_max_files"], "limits.overlay_max_files", 1
            )
        if "on_exceed" in keys:
            changes["overlay_on_exceed"] = check.choice(
                keys["on_exceed"], "limits.on_exceed", OVERLAY_ON_EXCEED
            )

    if "secrets" in top:
        keys = check.mapping(top["secrets"], "secrets", {"on_save", "on_push", "allow"})
        if "on_save" in keys:
            changes["secrets_on_save"] = check.choice(
                keys["on_save"], "secrets.on_save", ("warn", "block", "ignore")
            )
        if "on_push" in keys:
            changes["secrets_on_push"] = check.choice(
                keys["on_push"], "secrets.on_push", ("block", "warn")
            )
        if "allow" in keys:
            changes["secrets_allow"] = check.strings(keys["allow"], "secrets.allow")

    if "hooks" in top:
        keys = check.mapping(top["hooks"], "hooks", {"risky_commands", "harmless_commands"})
        for key in ("risky_commands", "harmless_commands"):
            if key in keys:
                changes[key] = check.strings(keys[key], f"hooks.{key}")
    return replace(cfg, **changes)


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


def read_regular_file(path: Path, max_bytes: int) -> bytes | None:
    """The bytes of `path` if it is a regular file, None if there is nothing there.

    Never through a symlink, never from a FIFO, device or folder, never more than
    `max_bytes`: a checkpoint can put anything at `.checkpoint.yaml`, and every command
    reads it first. Anything else is a one-line UsageError.
    """
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags)  # O_NONBLOCK: opening a FIFO must not wait for a writer
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UsageError(f"{path}: is a symbolic link; it must be a regular file") from None
        raise UsageError(f"{path}: cannot read: {exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise UsageError(f"{path}: not a regular file; remove it or replace it with one")
        chunks: list[bytes] = []
        size = 0
        while size <= max_bytes and (chunk := os.read(fd, max_bytes + 1 - size)):
            chunks.append(chunk)
            size += len(chunk)
        if size > max_bytes:
            raise UsageError(f"{path}: larger than {max_bytes} bytes; is it the right file?")
        return b"".join(chunks)
    except OSError as exc:
        raise UsageError(f"{path}: cannot read: {exc.strerror}") from None
    finally:
        os.close(fd)


def load_config(root: Path, git_pairs: list[tuple[str, str]]) -> Config:
    path = root / CONFIG_NAME
    cfg = Config()
    data = read_regular_file(path, CONFIG_MAX_BYTES)
    if data is not None:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise UsageError(f"{path}: cannot read: {exc}") from None
        cfg = parse_config_text(text, path)
    return apply_git_config(cfg, git_pairs)


def hook_patterns(data: bytes) -> tuple[list[str], list[str]]:
    """The `hooks:` pattern lists of a `.checkpoint.yaml` (risky, harmless), read leniently
    for the hook path: a file that does not parse has none (the save, if one is due,
    reports what is wrong with it)."""
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
