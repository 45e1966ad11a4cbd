"""YAML for our own records without PyYAML: a block-style writer for plain data (mappings
with string keys, lists, strings, integers, floats, booleans, None) and a reader of
exactly the form it writes.

Importing PyYAML costs a hook's save or a restore more than the rest of its imports
together, and what those write and read back (a checkpoint's manifest, a task record) is
plain data. `dump` raises `Unsupported` for data outside that form, and `load` returns
None for text outside it (another writer's YAML, a hand edit, a hostile manifest): the
caller then uses PyYAML. What `load` accepts, every YAML reader reads as the same data.
"""

from __future__ import annotations

import json
import math
import re

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    from typing import Any

# A string written without quotes: any YAML reader reads it back as this string, never
# as a number, a date, a boolean or null, and no `: ` or ` #` ends it early. Words of
# letters, digits and `_./+=~-` that start with a letter or `_`, with single spaces
# between (never one of the words below); or one word of letters, digits and `+/=` that
# is not a number (an object id, a digest, base64). Everything else is written
# double-quoted. Bare as PyYAML writes them: a secret scanner's high-entropy detectors
# look at quoted strings, and must not meet ids and digests there that it did not before.
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_./+=~-]*(?: [A-Za-z0-9_./+=~-]+)*\Z")
_WORD = re.compile(r"[0-9+/=][A-Za-z0-9+/=]*\Z")
_NUMBER = re.compile(r"\+?(?:0b[01]+|0o?[0-7]+|0x[0-9a-fA-F]+|[0-9]+(?:[eE][-+]?[0-9]+)?)\Z")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_./-]*\Z")  # a key written without quotes
_WORDS = frozenset({"y", "n", "yes", "no", "on", "off", "true", "false", "null"})
_INT = re.compile(r"-?(?:0|[1-9][0-9]*)\Z")
_FLOAT = re.compile(r"-?(?:0|[1-9][0-9]*)\.[0-9]+\Z")
# Characters a double-quoted scalar must escape beyond JSON's: YAML reads these raw as
# line breaks (NEL, LS, PS) or refuses them as not printable (as it refuses the lone
# surrogates of bytes that were not UTF-8, which the writer never writes).
_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff\ud800-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")
# In a quoted scalar read back: only the escapes json.dumps writes, never a surrogate's.
_PAIRED_BACKSLASHES = re.compile(r"\\\\")
_OTHER_ESCAPE = re.compile(r'\\(?:[^"\\nrtbfu]|u[dD][89a-fA-F])')
_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_./-]*):(?: (.*))?\Z")  # `_NAME:` and the value
_MAX_DEPTH = 64
_KEY_MAX = 1000  # YAML readers refuse a key of more than 1,024 characters written so
_DECODER = json.JSONDecoder()


class Unsupported(ValueError):
    """Data `dump` does not write: the caller writes it with PyYAML."""


def dump(data: dict[str, Any]) -> str:
    """`data` as block-style YAML, one line per scalar, ending in a newline."""
    if not isinstance(data, dict):
        raise Unsupported("not a mapping")
    if not data:
        return "{}\n"
    out: list[str] = []
    _mapping(data, 0, out, 0)
    return "\n".join(out) + "\n"


def _mapping(data: dict[Any, Any], indent: int, out: list[str], depth: int) -> None:
    if depth > _MAX_DEPTH:
        raise Unsupported("nested too deep")
    pad = " " * indent
    for key, value in data.items():
        if not isinstance(key, str):
            raise Unsupported("a key that is not a string")
        name = key if _NAME.match(key) and key.lower() not in _WORDS else _quoted(key)
        if len(name) > _KEY_MAX:
            raise Unsupported("a key longer than YAML reads without `? `")
        if isinstance(value, dict) and value:
            out.append(f"{pad}{name}:")
            _mapping(value, indent + 2, out, depth + 1)
        elif isinstance(value, list | tuple) and value:
            out.append(f"{pad}{name}:")
            _sequence(value, indent, out, depth + 1)  # at the key's indent, as PyYAML does
        else:
            out.append(f"{pad}{name}: {_scalar(value)}")


def _sequence(items: list[Any] | tuple[Any, ...], indent: int, out: list[str], depth: int) -> None:
    pad = " " * indent
    for item in items:
        if isinstance(item, dict) and item:
            first = len(out)
            _mapping(item, indent + 2, out, depth + 1)
            out[first] = f"{pad}- {out[first][indent + 2 :]}"
        elif isinstance(item, list | tuple) and item:
            raise Unsupported("a list in a list")
        else:
            out.append(f"{pad}- {_scalar(item)}")


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        try:
            return str(value)
        except ValueError:  # more digits than Python converts
            raise Unsupported("a very long number") from None
    if isinstance(value, float):
        text = repr(value)
        if math.isfinite(value) and _FLOAT.match(text):
            return text
        raise Unsupported(f"the number {text}")
    if isinstance(value, dict | list | tuple) and not value:
        return "{}" if isinstance(value, dict) else "[]"
    if not isinstance(value, str):
        raise Unsupported(f"a value of type {type(value).__name__}")
    if _plain(value):
        return value
    return _quoted(value)


def _plain(text: str) -> bool:
    if _PLAIN.match(text):
        return text.lower() not in _WORDS
    return bool(_WORD.match(text)) and not _NUMBER.match(text) and text != "="  # (`=`: a tag)


def _quoted(value: str) -> str:
    if _SURROGATE.search(value):
        raise Unsupported("a string that is not Unicode text")
    quoted = json.dumps(value, ensure_ascii=False)
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", quoted)


class _NotOurs(Exception):
    pass


def load(text: str) -> dict[str, Any] | None:
    """The mapping `dump` wrote as `text`; None for any text `dump` would not write."""
    if not text.endswith("\n") or "\t" in text or "\r" in text:
        return None
    if text == "{}\n":
        return {}
    lines = []
    for line in text[:-1].split("\n"):
        body = line.lstrip(" ")
        if not body:
            return None
        lines.append((len(line) - len(body), body))
    reader = _Reader(lines)
    try:
        data = reader.mapping(0, 0)
    except _NotOurs:
        return None
    return data if reader.at == len(lines) else None


class _Reader:
    def __init__(self, lines: list[tuple[int, str]]) -> None:
        self.lines = lines
        self.at = 0

    def _here(self, indent: int) -> str | None:
        """The current line's text when it is at `indent`, else None."""
        if self.at < len(self.lines) and self.lines[self.at][0] == indent:
            return self.lines[self.at][1]
        return None

    def mapping(self, indent: int, depth: int) -> dict[str, Any]:
        if depth > _MAX_DEPTH:
            raise _NotOurs
        out: dict[str, Any] = {}
        while (line := self._here(indent)) is not None and not line.startswith("- "):
            key, rest = _key(line)
            if key in out:
                raise _NotOurs
            self.at += 1
            if rest is not None:
                out[key] = _value(rest)
                continue
            following = self._here(indent)
            if following is not None and following.startswith("- "):
                out[key] = self.sequence(indent, depth + 1)
            elif self._here(indent + 2) is not None:
                out[key] = self.mapping(indent + 2, depth + 1)
            else:
                raise _NotOurs  # `key:` with nothing under it: null to YAML, never ours
        if not out:
            raise _NotOurs
        return out

    def sequence(self, indent: int, depth: int) -> list[Any]:
        out: list[Any] = []
        while (line := self._here(indent)) is not None and line.startswith("- "):
            item = line[2:]
            if item.startswith(" ") or item.startswith("- "):
                raise _NotOurs
            if _key_or_none(item) is not None:
                self.lines[self.at] = (indent + 2, item)  # the item's first key
                out.append(self.mapping(indent + 2, depth + 1))
            else:
                self.at += 1
                out.append(_value(item))
        return out


def _key_or_none(line: str) -> tuple[str, str | None] | None:
    if line.startswith('"'):
        try:
            key, end = _DECODER.raw_decode(line)
        except ValueError:
            raise _NotOurs from None
        _check_quoted(line[:end], key)
        rest = line[end:]
    else:
        m = _KEY.match(line)
        if m is None:
            return None
        key = m.group(1)
        if key.lower() in _WORDS:
            raise _NotOurs
        return key, m.group(2)
    if rest == ":":
        return key, None
    if rest.startswith(": "):
        return key, rest[2:]
    if rest:
        raise _NotOurs
    return None  # a quoted scalar, no key


def _key(line: str) -> tuple[str, str | None]:
    found = _key_or_none(line)
    if found is None or len(line) - len(found[1] or "") > _KEY_MAX + 2:
        raise _NotOurs
    return found


def _check_quoted(token: str, value: Any) -> None:
    if not isinstance(value, str) or _UNSAFE.search(token):
        raise _NotOurs
    if _OTHER_ESCAPE.search(_PAIRED_BACKSLASHES.sub("", token)):
        raise _NotOurs


def _value(text: str) -> Any:
    if text == "null":
        return None
    if text in ("true", "false"):
        return text == "true"
    if text == "{}":
        return {}
    if text == "[]":
        return []
    if _INT.match(text):
        try:
            return int(text)
        except ValueError:  # more digits than Python converts
            raise _NotOurs from None
    if _FLOAT.match(text):
        return float(text)
    if text.startswith('"'):
        try:
            value, end = _DECODER.raw_decode(text)
        except ValueError:
            raise _NotOurs from None
        if end != len(text):
            raise _NotOurs
        _check_quoted(text, value)
        return value
    if _plain(text):
        return text
    raise _NotOurs
