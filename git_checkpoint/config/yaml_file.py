"""`.checkpoint.yaml` read node by node with PyYAML, so that every error names the file,
line, column and field; unknown keys are errors, never silently ignored. Imported only
when the file is parsed: config/parse.py keeps what it parsed to (config/cache.py).
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import yaml

from ..core.errors import UsageError
from .model import (
    DEFAULT_EXCLUDE,
    OVERLAY_ON_EXCEED,
    PROMOTION_RULES,
    Config,
    Retention,
    Verifier,
    include_problem,
    parse_age,
    parse_size,
)


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


def parse_text(text: str, path: Path) -> Config:
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
