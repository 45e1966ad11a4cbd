"""The per-checkpoint manifest (design.md §5): written as YAML into the commit message,
read back as hostile input (a fetched checkpoint's message is anyone's text).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable

from ..core import yamltext
from ..core.records import now, now_iso
from ..gitcore.repo import Repo

# typing is not imported at run time: the protocol is for the type checker
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, Protocol

    class Captured(Protocol):
        """The trees of a workspace as a save captured them (save/capture.py's Snapshot)."""

        @property
        def base(self) -> str | None: ...
        @property
        def branch(self) -> str | None: ...
        @property
        def worktree_tree(self) -> str: ...
        @property
        def index_tree(self) -> str: ...
        @property
        def overlay_tree(self) -> str | None: ...
        @property
        def overlay_files(self) -> tuple[str, ...]: ...
        @property
        def overlay_bytes(self) -> int: ...
        @property
        def intent_to_add(self) -> tuple[str, ...]: ...


# Ours are about 1 KiB; a save of thousands of `git add -N` paths lists them all, and
# what a save writes stays within this (storage/commits.py fits it).
MANIFEST_MAX_BYTES = 1024 * 1024
MANIFEST_MAX_DEPTH = 64  # ours nest 3 deep; libyaml must never recurse as deep as it would go
_BRACKETS = re.compile(r"[\[\]{}]")
_LOADERS: list[Any] = []  # PyYAML's loaders, made on first use: (fast, manifest)


def _loaders() -> tuple[Any, Any]:
    """PyYAML's fastest safe loader, and one that leaves timestamps as strings (a bad
    date must not make a manifest unreadable). C-accelerated where libyaml is there
    (listing parses every manifest that core.yamltext does not read)."""
    if not _LOADERS:
        import yaml

        fast: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        resolvers = {
            first: [(tag, rx) for tag, rx in found if tag != "tag:yaml.org,2002:timestamp"]
            for first, found in yaml.SafeLoader.yaml_implicit_resolvers.items()
        }
        manifest = type("_ManifestLoader", (fast,), {"yaml_implicit_resolvers": resolvers})
        _LOADERS.extend((fast, manifest))
    return _LOADERS[0], _LOADERS[1]


def _too_deep(body: str) -> bool:
    """Flow nesting ([[[…, {{{…) deeper than any manifest of ours: refused unparsed.
    Block nesting needs indentation, which the size limit already bounds.
    """
    depth = 0
    for match in _BRACKETS.finditer(body):
        depth += 1 if match.group() in "[{" else -1
        if depth > MANIFEST_MAX_DEPTH:
            return True
    return False


_PARSED: dict[str, tuple[dict[str, Any], str | None]] = {}  # message -> result, per process
_PARSED_MAX = 20_000


_HEX40 = re.compile(r"^[0-9a-f]{40}$")


def _text(value: Any) -> bool:
    return isinstance(value, str)


def _text_or_none(value: Any) -> bool:
    return value is None or isinstance(value, str)


def _list_of(kind: type) -> Any:
    return lambda value: isinstance(value, list) and all(isinstance(v, kind) for v in value)


def _counts(value: Any) -> bool:
    return isinstance(value, dict) and all(
        isinstance(value.get(k, 0), int) and not isinstance(value.get(k, 0), bool)
        for k in ("files", "bytes")
    )


def _session(value: Any) -> bool:
    """{"agent": text, "id": text, "turn": int, "turn_id": text}, each but id optional."""
    if not isinstance(value, dict) or not isinstance(value.get("id"), str):
        return False
    turn = value.get("turn")
    texts = all(isinstance(value.get(k, ""), str) for k in ("agent", "turn_id"))
    return texts and (turn is None or (isinstance(turn, int) and not isinstance(turn, bool)))


# The fields we write and read back, with the shape each must have. A field of another
# shape is dropped (so no reader meets it) and makes the checkpoint malformed.
_FIELDS: dict[str, Any] = {
    "run_id": _text_or_none,
    "repo": _text_or_none,
    "task": _text,
    "checkpoint_id": _text,
    "branch": _text_or_none,
    "created_at": _text,
    "restore_strategy": _text,
    "tracked_files": lambda v: isinstance(v, dict),
    "untracked": lambda v: isinstance(v, dict),
    "overlay": _counts,
    "verifiers": _list_of(dict),
    "notes": _list_of(str),
    "hypothesis": _text_or_none,
    "next_move": _text_or_none,
    "auto": lambda v: isinstance(v, bool | str),
    "intent_to_add": _list_of(str),
    "intent_to_add_total": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "left_out": _list_of(dict),
    "left_out_total": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "session": _session,
}


def _uses_aliases(body: str) -> bool:
    """YAML aliases (`*a` of an `&a` anchor): ours have none, and a few nested ones make
    a billion-laughs bomb that explodes when the manifest is printed or dumped.
    """
    if "&" not in body or "*" not in body:  # no anchor or no alias: the common case
        return False
    import yaml

    return any(
        isinstance(event, yaml.AliasEvent) for event in yaml.parse(body, Loader=_loaders()[0])
    )


def parse_manifest(message: str) -> tuple[dict[str, Any], str | None]:
    """The YAML after the summary line, and what is wrong with it (None when nothing).

    A fetched checkpoint's message is hostile input: any failure is a finding, never
    an exception.
    """
    if message not in _PARSED:
        if len(_PARSED) >= _PARSED_MAX:  # a long-lived caller (the API, MCP) reads many
            _PARSED.clear()
        _PARSED[message] = _parse(message.partition("\n\n")[2])
    return _PARSED[message]


def _parse(body: str) -> tuple[dict[str, Any], str | None]:
    if len(body) > MANIFEST_MAX_BYTES:
        return {}, "manifest too large"
    if _too_deep(body):
        return {}, "manifest nests too deep"
    data: Any = yamltext.load(body)  # what this tool writes, read without PyYAML
    if data is None:
        import yaml

        try:
            if _uses_aliases(body):
                return {}, "manifest uses YAML aliases"
            data = yaml.load(body, Loader=_loaders()[1])
        except (yaml.YAMLError, RecursionError, ValueError, TypeError, OverflowError):
            return {}, "manifest is not valid YAML"
    if not isinstance(data, dict):
        return {}, "manifest is not a mapping"
    wrong = [key for key, fits in _FIELDS.items() if key in data and not fits(data[key])]
    if wrong:
        data = {k: v for k, v in data.items() if k not in wrong}
        return data, f"manifest {wrong[0]} has the wrong type"
    base = data.get("base_commit", "")
    if base is not None and base != "" and not (isinstance(base, str) and _HEX40.match(base)):
        return data, "manifest base_commit is not a commit id"
    if not isinstance(data.get("auto", False), bool | str):
        return data, "manifest auto is neither true/false nor a word"
    return data, None


def repo_slug(repo: Repo) -> str | None:
    url = repo.origin_url()
    if not url:
        return None
    m = re.search(r"[:/]([^/:]+/[^/]+?)(?:\.git)?/?$", url)
    return m.group(1) if m else None


def build_manifest(
    *,
    snapshot: Captured,
    task: str,
    cp_id: str,
    run_id: str,
    repo_name: str | None,
    include: Iterable[str],
    exclude: Iterable[str],
    verifiers: list[dict[str, Any]],
    notes: list[str],
    hypothesis: str | None,
    next_move: str | None,
    auto: bool | str,
) -> dict[str, Any]:
    return {
        "run_id": run_id,
        "repo": repo_name,
        "task": task,
        "checkpoint_id": cp_id,
        "base_commit": snapshot.base,
        "branch": snapshot.branch,
        "created_at": now_iso(),
        "restore_strategy": "git_plus_overlay",
        "tracked_files": {"from_git": True},
        "untracked": {"include": list(include), "exclude": list(exclude)},
        "overlay": {"files": len(snapshot.overlay_files), "bytes": snapshot.overlay_bytes},
        "verifiers": verifiers,
        "expected_clean_after_restore": True,
        "notes": notes,
        "hypothesis": hypothesis,
        "next_move": next_move,
        "auto": auto,
        **({"intent_to_add": sorted(snapshot.intent_to_add)} if snapshot.intent_to_add else {}),
    }


def age(created_at: str) -> str:
    try:
        then = dt.datetime.strptime(created_at, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=dt.UTC)
    except ValueError:
        return "?"
    seconds = max(0, int((now() - then).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"
