"""JSON read and written by CPython's `_json` accelerator alone, for the hook path.

The `json` package is a thin layer over `_json`, but it imports `re` (and through it
`enum`, `functools` and `collections`), which would be most of what an agent's tool
call loads. These give what `json.loads` and `json.dumps` give for the plain data the
hook reads and writes (objects, arrays, strings, numbers, true, false, null).
"""

from __future__ import annotations

import _json  # type: ignore[import-not-found,unused-ignore]

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_SPACE = " \t\n\r"  # JSON's whitespace


def _constant(name: str) -> float:
    return float(name.replace("Infinity", "inf"))  # NaN, Infinity, -Infinity


class _Decoding:
    """What the C scanner reads from `json.JSONDecoder()` with its defaults."""

    strict = True  # no raw control characters inside strings
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = staticmethod(_constant)


# (typeshed types the context as a scanner: what the scanner reads is its attributes)
_scan = _json.make_scanner(_Decoding())  # type: ignore[arg-type,unused-ignore]


def loads(text: str) -> Any:
    """`json.loads(text)`. What is not one JSON value is parsed again by `json.loads`,
    loaded then, so that the error is json's own (a JSONDecodeError, a ValueError): the
    accelerator alone cannot raise it without the json package."""
    start = len(text) - len(text.lstrip(_SPACE))
    try:
        value, end = _scan(text, start)
    except (StopIteration, ValueError, SystemError):
        value, end = None, -1
    if end < 0 or text[end:].strip(_SPACE):
        import json

        return json.loads(text)
    return value


def _unknown(value: object) -> object:
    raise TypeError(f"{type(value).__name__} is not JSON")


def dumps(value: object, *, ensure_ascii: bool = True) -> str:
    """`json.dumps(value, ensure_ascii=...)`: one line."""
    encode = _json.make_encoder(
        {},  # the containers being written: a cycle is an error, not a hang
        _unknown,
        _json.encode_basestring_ascii if ensure_ascii else _json.encode_basestring,
        None,  # no indent
        ": ",
        ", ",
        False,  # keys in their order
        False,  # no key skipped
        True,  # NaN and Infinity written as JavaScript does
    )
    return "".join(encode(value, 0))
