"""Names and text as a terminal should show them: the one rule for every command's lines.

Paths are quoted the way git quotes them with `core.quotePath` (its default): a name with
a control character, a double quote, a backslash or a byte outside ASCII is shown in
double quotes with C escapes and octal bytes, so a crafted name can neither hide nor
send escape sequences to the terminal. Free text (messages) keeps its letters and only
has its control characters escaped. The JSON output carries the raw strings.
"""

from __future__ import annotations

_C_ESCAPES = {7: "\\a", 8: "\\b", 9: "\\t", 10: "\\n", 11: "\\v", 12: "\\f", 13: "\\r"}


def _escape_byte(byte: int) -> str:
    if byte in _C_ESCAPES:
        return _C_ESCAPES[byte]
    if byte in (0x22, 0x5C):  # " and \
        return "\\" + chr(byte)
    return f"\\{byte:03o}"


def quote_path(path: str) -> str:
    """A path as git prints it (core.quotePath=true): plain, or "quoted\\twith escapes"."""
    raw = path.encode("utf-8", "surrogateescape")
    if all(0x20 <= b < 0x7F and b not in (0x22, 0x5C) for b in raw):
        return path
    return (
        '"'
        + "".join(
            chr(b) if 0x20 <= b < 0x7F and b not in (0x22, 0x5C) else _escape_byte(b) for b in raw
        )
        + '"'
    )


def escape_text(text: str) -> str:
    """Free text with its control characters (and undecodable bytes) escaped, letters kept."""
    out = []
    for char in text:
        code = ord(char)
        if code < 0x20 or code == 0x7F or 0x80 <= code < 0xA0:
            out.append(_escape_byte(code) if code < 0x80 else f"\\u{code:04x}")
        elif 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
            out.append(f"\\{code - 0xDC00:03o}")
        else:
            out.append(char)
    return "".join(out)


def printable(text: str, limit: int = 500) -> str:
    """Text from a fetched checkpoint, safe to print: no terminal escapes, bounded."""
    clean = "".join(ch if ch.isprintable() or ch == " " else "?" for ch in text)
    return clean if len(clean) <= limit else clean[: limit - 1] + "…"


def clip(text: str, width: int = 72) -> str:
    """`text` on one line (runs of whitespace made one space), cut to `width`."""
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


def one_line(exc: BaseException) -> str:
    """An exception's message on one line; its type's name when it has none."""
    text = " ".join(str(exc).split())
    return text or type(exc).__name__


def kept(text: str, limit: int) -> tuple[str, str | None]:
    """Free text as a checkpoint or a record keeps it, and what was changed (None when
    nothing): control characters but newline and tab removed (a NUL makes a commit git
    fsck flags), what is not UTF-8 replaced, and at most `limit` characters."""
    text = text.replace("\r\n", "\n")
    clean = "".join(
        "\ufffd" if 0xD800 <= ord(c) <= 0xDFFF else c
        for c in text
        if c in "\n\t" or not (ord(c) < 0x20 or ord(c) == 0x7F)
    )
    said = "control characters removed" if clean != text else None
    if len(clean) > limit:
        clean, said = clean[: limit - 1] + "…", f"cut to {limit:,} characters"
    return clean, said
