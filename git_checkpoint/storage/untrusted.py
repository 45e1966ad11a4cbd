"""Checks for checkpoints that came from elsewhere (fetched: design.md §9).

A fetched checkpoint's manifest is read like `.checkpoint.yaml`: every field known, of
the right type, or the checkpoint is bad input (exit 2). Its `verifiers` list is only
a record of what ran where it was saved; verify runs the local configuration's.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    from typing import Any


_STR = (str,)
_OPT_STR = (str, type(None))
_STRINGS = "list of strings"

# field -> what it may hold (our manifests, design.md §5, plus fields added since)
_FIELDS: dict[str, Any] = {
    "run_id": _OPT_STR,
    "repo": _OPT_STR,
    "task": _STR,
    "checkpoint_id": _STR,
    "base_commit": _OPT_STR,
    "branch": _OPT_STR,
    "created_at": _STR,
    "restore_strategy": _STR,
    "tracked_files": {"from_git": (bool,)},
    "untracked": {"include": _STRINGS, "exclude": _STRINGS},
    "overlay": {"files": (int,), "bytes": (int,)},
    "verifiers": "list of verifiers",
    "expected_clean_after_restore": (bool,),
    "notes": _STRINGS,
    "hypothesis": _OPT_STR,
    "next_move": _OPT_STR,
    "auto": (bool, str),
    "intent_to_add": _STRINGS,
    "intent_to_add_total": (int,),
    "left_out": "list of left out",
    "left_out_total": (int,),
}
_LEFT_OUT_FIELDS = {"path": _STR, "why": _STR, "files": (int,), "bytes": (int,)}
_VERIFIER_FIELDS = {"name": _STR, "command": _STR, "required": (bool,), "timeout": (int, float)}


def _problem(value: Any, rule: Any, where: str) -> str | None:
    if rule == _STRINGS:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return f"{where} must be a list of strings"
        return None
    if rule in ("list of verifiers", "list of left out"):
        fields = _VERIFIER_FIELDS if rule == "list of verifiers" else _LEFT_OUT_FIELDS
        if not isinstance(value, list):
            return f"{where} must be a list"
        for i, item in enumerate(value):
            found = _problem(item, fields, f"{where}[{i}]")
            if found:
                return found
        return None
    if isinstance(rule, dict):
        if not isinstance(value, dict):
            return f"{where} must be a mapping"
        for key, item in value.items():
            if key not in rule:
                return f"unknown field {where}.{key}"
            found = _problem(item, rule[key], f"{where}.{key}")
            if found:
                return found
        return None
    if isinstance(value, bool) and bool not in rule:
        return f"{where} has the wrong type"
    if not isinstance(value, rule):
        return f"{where} has the wrong type"
    return None


def fetched_manifest_problem(manifest: dict[str, Any]) -> str | None:
    """What is wrong with a fetched checkpoint's manifest, or None."""
    for key, value in manifest.items():
        if not isinstance(key, str) or key not in _FIELDS:
            return f"unknown manifest field {str(key)[:40]!r}"
        found = _problem(value, _FIELDS[key], key)
        if found:
            return f"manifest {found}"
    return None
