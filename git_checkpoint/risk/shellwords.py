"""A shell command line as tokens: words (quotes removed) and operators.

Owned here: quoting, `$(…)`, backticks, `<(…)`, here-documents, comments and fd numbers,
so that `risk.py` sees simple commands. `shlex` splits words well but forgets which quotes
a word had, and that decides whether `$(…)` runs: `'$(rm x)'` is text, `"$(rm x)"` is not.
Standard library only: this runs on every agent tool call.
"""

from __future__ import annotations

import os

# Stands for a value known only when the shell runs ($VAR, $(…), `…`): never a real path.
UNKNOWN = "\x00"

_OPERATORS = (
    "&&", "||", ";;&", ";;", ";&", "|&", "&>>", "&>", "<<<", "<<-", "<<", "<>", "<&",
    ">>", ">|", ">&", ";", "&", "|", "(", ")", "<", ">",
)  # fmt: skip
_BREAK = set(" \t\n;&|()<>")


class ShellSyntaxError(ValueError):
    """The line cannot be read as shell (an unclosed quote or substitution)."""


class Token:
    """A word (quotes removed), an operator, or a "sub": commands a here-document runs.
    A plain class: the hook path, run on every tool call, does not load `dataclasses`."""

    __slots__ = ("kind", "subs", "text")

    def __init__(self, kind: str, text: str, subs: tuple[str, ...] = ()) -> None:
        self.kind, self.text = kind, text
        self.subs = subs  # command lines run by $(…), `…` or <(…) inside this word

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Token) and (self.kind, self.text, self.subs) == (
            other.kind,
            other.text,
            other.subs,
        )

    def __hash__(self) -> int:
        return hash((self.kind, self.text, self.subs))

    def __repr__(self) -> str:
        return f"Token({self.kind!r}, {self.text!r}, {self.subs!r})"


def tokenize(line: str) -> list[Token]:
    return _Lexer(line).run()


def matching_paren(s: str, i: int) -> int:
    """Index of the `)` closing the group whose contents start at `s[i]`."""
    depth = 1
    heredocs: list[tuple[str, bool]] = []  # a here-document's body is text: `it's (`
    while i < len(s):
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if c == "\n" and heredocs:
            i = skip_heredoc_bodies(s, i + 1, heredocs)
            heredocs = []
            continue
        if s.startswith("<<", i) and not s.startswith("<<<", i):
            i = _heredoc_delimiter(s, i + 2, heredocs)
            continue
        if c == "'":
            i = _closing(s, i + 1, "'")
        elif c == '"':
            i = _closing_double(s, i + 1)
        elif c == "`":
            i = _closing(s, i + 1, "`")
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise ShellSyntaxError("unclosed (")


def _heredoc_delimiter(s: str, i: int, heredocs: list[tuple[str, bool]]) -> int:
    """Note the delimiter of the `<<` whose word starts at `s[i]`; return the index after it."""
    strip_tabs = s.startswith("-", i)
    i += strip_tabs
    while i < len(s) and s[i] in " \t":
        i += 1
    end = i
    while end < len(s) and s[end] not in " \t\n;&|()<>":
        end += 1
    word = "".join(c for c in s[i:end] if c not in "'\"\\")
    if word:
        heredocs.append((word, strip_tabs))
    return end


def skip_heredoc_bodies(s: str, i: int, heredocs: list[tuple[str, bool]]) -> int:
    """The index after the bodies of `heredocs`, which start at `s[i]`."""
    for delimiter, strip_tabs in heredocs:
        while i < len(s):
            end = s.find("\n", i)
            end = len(s) if end < 0 else end
            line = s[i:end]
            i = min(end + 1, len(s))
            if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                break
    return i


def _closing(s: str, i: int, quote: str) -> int:
    while i < len(s):
        if s[i] == "\\" and quote == "`":
            i += 2
            continue
        if s[i] == quote:
            return i
        i += 1
    raise ShellSyntaxError(f"unclosed {quote}")


def _closing_double(s: str, i: int) -> int:
    while i < len(s):
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if c == '"':
            return i
        if c == "$" and s.startswith("$(", i):
            i = matching_paren(s, i + 2)
        elif c == "`":
            i = _closing(s, i + 1, "`")
        i += 1
    raise ShellSyntaxError('unclosed "')


class _Lexer:
    def __init__(self, line: str) -> None:
        self.s = line
        self.i = 0
        self.tokens: list[Token] = []
        self.buf: list[str] = []
        self.started = False  # a word is being built (even an empty quoted one)
        self.plain_digits = True  # the word so far is unquoted digits: maybe an fd (2>)
        self.had_quote = False  # a here-document delimiter with quotes keeps its body literal
        self.subs: list[str] = []
        self.heredocs: list[tuple[str, bool, bool]] = []  # delimiter, quoted, strip tabs
        self.want_delimiter: bool | None = None  # after << or <<-: strip tabs?

    def run(self) -> list[Token]:
        s = self.s
        while self.i < len(s):
            c = s[self.i]
            if c in " \t":
                self.end_word()
                self.i += 1
            elif c == "\n":
                self.end_word()
                self.tokens.append(Token("op", ";"))
                self.i += 1
                self.read_heredocs()
            elif c == "#" and not self.started:
                while self.i < len(s) and s[self.i] != "\n":
                    self.i += 1
            elif c in "<>" and s.startswith("(", self.i + 1):  # process substitution
                end = matching_paren(s, self.i + 2)
                self.add_unknown(s[self.i + 2 : end])
                self.i = end + 1
            elif c in _BREAK:
                self.operator()
            else:
                self.word_char(c)
        self.end_word()
        if self.want_delimiter is not None:
            raise ShellSyntaxError("<< without a delimiter")
        self.read_heredocs()
        return self.tokens

    def operator(self) -> None:
        s = self.s
        if s.startswith("((", self.i) and not self.started:
            end = matching_paren(s, self.i + 2)
            if s.startswith(")", end + 1):  # (( arithmetic )): no command runs
                self.tokens.append(Token("word", ":"))
                self.i = end + 2
                return
        if s[self.i] == "(" and self.started and "".join(self.buf).endswith("="):
            end = matching_paren(s, self.i + 1)  # an array assignment: a=(1 2 3)
            self.buf.append(s[self.i : end + 1])
            self.i = end + 1
            return
        op = next(o for o in _OPERATORS if s.startswith(o, self.i))
        if op[0] in "<>" and self.started and self.plain_digits and self.buf:
            self.reset_word()  # `2>file`: the digits name a file descriptor
        else:
            self.end_word()
        self.tokens.append(Token("op", op))
        self.i += len(op)
        if op in ("<<", "<<-"):
            self.want_delimiter = op == "<<-"

    def word_char(self, c: str) -> None:
        s = self.s
        if c != "\\" and not c.isdigit():
            self.plain_digits = False
        if c == "\\":
            if s.startswith("\n", self.i + 1):  # line continuation
                self.i += 2
                return
            self.started = True
            self.plain_digits = False
            self.had_quote = True
            self.buf.append(s[self.i + 1 : self.i + 2])
            self.i += 2
        elif c == "'":
            end = _closing(s, self.i + 1, "'")
            self.quoted(s[self.i + 1 : end])
            self.i = end + 1
        elif c == '"':
            end = _closing_double(s, self.i + 1)
            self.double_quoted(self.i + 1, end)
            self.i = end + 1
        elif c == "`":
            end = _closing(s, self.i + 1, "`")
            self.add_unknown(s[self.i + 1 : end].replace("\\`", "`"))
            self.i = end + 1
        elif c == "$":
            self.i = self.dollar(self.i)
        elif c == "~" and not self.started and (self.i + 1 == len(s) or s[self.i + 1] in "/ \t"):
            self.started = True
            self.buf.append(os.environ.get("HOME", UNKNOWN))
            self.i += 1
        else:
            self.started = True
            self.buf.append(c)
            self.i += 1

    def quoted(self, text: str) -> None:
        self.started = True
        self.plain_digits = False
        self.had_quote = True
        self.buf.append(text)

    def double_quoted(self, start: int, end: int) -> None:
        self.quoted("")
        s, i = self.s, start
        while i < end:
            c = s[i]
            if c == "\\" and i + 1 < end and s[i + 1] in '$`"\\\n':
                self.buf.append(s[i + 1])
                i += 2
            elif c == "`":
                close = _closing(s, i + 1, "`")
                self.add_unknown(s[i + 1 : close])
                i = close + 1
            elif c == "$":
                i = self.dollar(i)
            else:
                self.buf.append(c)
                i += 1

    def dollar(self, i: int) -> int:
        """Read the expansion at `s[i] == "$"`; return the index after it."""
        s = self.s
        nxt = s[i + 1 : i + 2]
        if s.startswith("$((", i):
            end = matching_paren(s, i + 2)
            self.add_unknown(None)
            return end + 2
        if nxt == "(":
            end = matching_paren(s, i + 2)
            self.add_unknown(s[i + 2 : end])
            return end + 1
        if nxt == "{":
            end = s.find("}", i)
            if end < 0:
                raise ShellSyntaxError("unclosed ${")
            self.add_unknown(None)
            return end + 1
        if nxt == "'":  # $'…' ANSI-C quoting: text, never run
            end = i + 2
            while end < len(s) and s[end] != "'":
                end += 2 if s[end] == "\\" else 1
            if end >= len(s):
                raise ShellSyntaxError("unclosed $'")
            self.quoted(s[i + 2 : end])
            return end + 1
        j = i + 1
        if nxt and (nxt.isalpha() or nxt == "_"):
            while j < len(s) and (s[j].isalnum() or s[j] == "_"):
                j += 1
        elif nxt and nxt in "@*#?$!-0123456789":
            j += 1
        if j == i + 1:  # a lone $ is itself
            self.started = True
            self.buf.append("$")
            return i + 1
        self.add_unknown(None)
        return j

    def add_unknown(self, command: str | None) -> None:
        self.started = True
        self.plain_digits = False
        self.buf.append(UNKNOWN)
        if command is not None:
            self.subs.append(command)

    def reset_word(self) -> None:
        self.buf, self.subs = [], []
        self.started, self.plain_digits, self.had_quote = False, True, False

    def end_word(self) -> None:
        if not self.started:
            return
        text = "".join(self.buf)
        if self.want_delimiter is not None:
            self.heredocs.append((text, self.had_quote, self.want_delimiter))
            self.want_delimiter = None
        self.tokens.append(Token("word", text, tuple(self.subs)))
        self.reset_word()

    def read_heredocs(self) -> None:
        """Skip here-document bodies (data, not commands) after the line that opened them."""
        for delimiter, quoted, strip_tabs in self.heredocs:
            body_start = self.i
            self.i = skip_heredoc_bodies(self.s, self.i, [(delimiter, strip_tabs)])
            if not quoted:  # its $(…) and `…` still run
                self.tokens.append(Token("sub", "", _substitutions(self.s[body_start : self.i])))
        self.heredocs = []


def _substitutions(text: str) -> tuple[str, ...]:
    """The commands `$(…)` and `…` in an unquoted here-document body would run."""
    found, i = [], 0
    while i < len(text):
        if text[i] == "\\":
            i += 2
        elif text.startswith("$(", i):
            end = matching_paren(text, i + 2)
            found.append(text[i + 2 : end])
            i = end + 1
        elif text[i] == "`":
            end = _closing(text, i + 1, "`")
            found.append(text[i + 1 : end])
            i = end + 1
        else:
            i += 1
    return tuple(found)
