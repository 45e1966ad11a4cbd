"""Names and text as a terminal should show them: the one rule for every command's lines.

Paths are quoted the way git quotes them: a name with a control character, a double quote
or a backslash is shown in double quotes with C escapes and octal bytes, so a crafted name
can neither hide nor send escape sequences to the terminal; bytes outside ASCII are octal
too while the repository's `core.quotePath` is true (git's default), and shown as they are
when it is false. Free text (messages) keeps its letters and only has its control
characters escaped. Counts are said in words that agree with them (`counted`). The JSON
output carries the raw strings.
"""

from __future__ import annotations

from contextvars import ContextVar

_C_ESCAPES = {7: "\\a", 8: "\\b", 9: "\\t", 10: "\\n", 11: "\\v", 12: "\\f", 13: "\\r"}

# core.quotePath of the repository a command prints the paths of (console.context sets it
# once the repository is known); git's default until then.
_QUOTE_PATH: ContextVar[bool] = ContextVar("quote_path", default=True)


def follow_quote_path(quote: bool) -> None:
    """Print paths as git does with `core.quotePath` set to `quote`, from now on."""
    _QUOTE_PATH.set(quote)


def _escape_byte(byte: int) -> str:
    if byte in _C_ESCAPES:
        return _C_ESCAPES[byte]
    if byte in (0x22, 0x5C):  # " and \
        return "\\" + chr(byte)
    return f"\\{byte:03o}"


def _plain_ascii(byte: int) -> bool:
    return 0x20 <= byte < 0x7F and byte not in (0x22, 0x5C)


def quote_path(path: str) -> str:
    """A path as git prints it: plain, or "quoted\\twith escapes" (git's quote_c_style,
    with the repository's core.quotePath). With core.quotePath false, letters outside
    ASCII are shown as they are; bytes that are not UTF-8 and the C1 control characters
    (which some terminals obey as escape sequences) stay octal, as with it true."""
    raw = path.encode("utf-8", "surrogateescape")
    if all(_plain_ascii(b) for b in raw):
        return path
    if _QUOTE_PATH.get():
        shown = "".join(chr(b) if _plain_ascii(b) else _escape_byte(b) for b in raw)
        return f'"{shown}"'
    out: list[str] = []
    quoted = False
    for char in path:
        code = ord(char)
        if code < 0x80 and _plain_ascii(code):
            out.append(char)
        elif code >= 0xA0 and not 0xDC80 <= code <= 0xDCFF:
            out.append(char)  # a letter, as it is
        else:
            quoted = True
            out += [_escape_byte(b) for b in char.encode("utf-8", "surrogateescape")]
    return f'"{"".join(out)}"' if quoted else path


def counted(count: int, word: str, plural: str | None = None) -> str:
    """`count` and the noun that agrees with it: "1 file", "2 files", "0 files";
    `plural` for a noun that does not just take an s ("1 entry", "3 entries")."""
    return f"{count:,} {word if count == 1 else plural or word + 's'}"


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


# An error line is read, not scrolled: a message naming a path of any length (a
# payload's, a crafted tree's) is cut to this.
ERROR_WIDTH = 1000


def one_line(exc: BaseException) -> str:
    """An exception's message on one line, cut to ERROR_WIDTH; its type's name when it
    has none."""
    text = " ".join(str(exc).split())
    return clip(text, ERROR_WIDTH) if text else type(exc).__name__


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
