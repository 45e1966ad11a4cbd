"""Is a shell command line risky: could it delete or overwrite work a checkpoint should keep?

The line is read as shell (`shellwords`), cut into simple commands, and each is judged by
the tables in `risk_rules`. Risky means it deletes, overwrites or rewrites files, changes
dependencies or a database, or we cannot tell: an extra (deduplicated) save is cheap, a
missed one loses work. Standard library only: this runs on every agent tool call.

Patterns from `.checkpoint.yaml` (`hooks.risky_commands`, `hooks.harmless_commands`) are
matched against each simple command, normalized: leading `VAR=value` words and wrappers
(sudo, env, nohup, time, command, exec, xargs, timeout, nice, …) removed, quotes removed,
words joined by single spaces; it is tried as typed and with the program's base name
(`/usr/bin/rm -r x` is also `rm -r x`). A pattern with `*`, `?` or `[` is a glob that must
match the whole normalized command. Any other pattern is whole words: a risky pattern
matches wherever its words appear in a row (`terraform apply` matches `terraform apply
-auto-approve`), a harmless pattern only where the command starts with them (`make
deploy` covers `make deploy ENV=dev`, not `echo x; make deploy`, which is two commands
anyway). A harmless pattern clears the command itself, never its redirections or its
`$(…)`; when both kinds match, risky wins.
"""

from __future__ import annotations

import os

from .programs import judge
from .shellwords import UNKNOWN, ShellSyntaxError, Token, tokenize
from .tables import program_name, show

TYPE_CHECKING = False  # typing is not imported on the hook path
if TYPE_CHECKING:
    from collections.abc import Sequence


class Verdict:
    """Whether a command line is risky, and why (e.g. "git reset --hard discards
    changes", "rm removes files"; "" when harmless), and `where`: the folders its risky
    commands run in and the paths they name (absolute, first seen first), for a hook to
    save the repositories a command reaches. A plain class: the hook path does not load
    dataclasses."""

    __slots__ = ("reason", "risky", "where")

    def __init__(self, risky: bool, reason: str, where: tuple[str, ...] = ()) -> None:
        self.risky = risky
        self.reason = reason
        self.where = where

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Verdict) and (self.risky, self.reason) == (
            other.risky,
            other.reason,
        )

    def __hash__(self) -> int:
        return hash((self.risky, self.reason))

    def __repr__(self) -> str:
        return f"Verdict(risky={self.risky!r}, reason={self.reason!r})"


def classify(
    command: str,
    *,
    risky_patterns: Sequence[str] = (),
    harmless_patterns: Sequence[str] = (),
    cwd: str | None = None,
) -> Verdict:
    """Judge a shell command line. `cwd` is the folder it runs in; without it, a path's
    existence (`> file`, `git checkout name`, `cp a b`) is unknown, and so risky.

    The cost is bounded whatever the line: one longer than MAX_LINE characters, or one
    whose judging visits more than MAX_WORK words (wrappers nested thousands deep), is
    not judged to the end: unsure, so risky."""
    if len(command) > MAX_LINE:
        size = f"{len(command) / 1024:.0f} KiB"
        return Verdict(True, f"the command line is too long to judge ({size})", _cwds(cwd))
    ctx = Ctx(
        tuple(p for p in risky_patterns if p.strip()),
        tuple(p for p in harmless_patterns if p.strip()),
        cwd,
    )
    try:
        reason = ctx.line(command)
    except (ShellSyntaxError, RecursionError) as exc:
        reason = f"cannot read the command line ({exc})"
    except Exception as exc:  # a rule's bug must not break a hook: unsure, so risky
        reason = f"cannot judge the command line ({type(exc).__name__}: {exc})"
    if not reason:
        return Verdict(False, "")
    where = ctx.seen.reach or list(_cwds(cwd))
    return Verdict(True, reason, tuple(dict.fromkeys(where)))


def _cwds(cwd: str | None) -> tuple[str, ...]:
    return (cwd,) if cwd else ()


_NAME_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_NAME = _NAME_START | frozenset("0123456789")


def is_assignment(word: str) -> bool:
    """`NAME=…`, `NAME+=…` or `NAME[…]=…`: a shell variable set for the command after it."""
    if not word or word[0] not in _NAME_START:
        return False
    at = 1
    while at < len(word) and word[at] in _NAME:
        at += 1
    if word.startswith("[", at):
        at = word.find("]", at + 1) + 1
        if not at:
            return False
    if word.startswith("+", at):
        at += 1
    return word.startswith("=", at)


_REDIRECTS = frozenset((">", ">|", ">>", "&>", "&>>", ">&", "<", "<<", "<<-", "<<<", "<>", "<&"))
_CLOBBERING = frozenset((">", ">|", "&>", ">&"))
_HARMLESS_TARGETS = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty")
MAX_DEPTH = 8
# Longer lines are not read (tokenizing costs grow with the length, and the hook must
# answer at once): an unread line is called risky; an agent's commands are far shorter.
MAX_LINE = 32 * 1024
# Words visited while judging one line: each wrapper (`env`, `sudo`, `xargs`…) judges
# the words after it again, so `env env env …` costs the square of its length.
MAX_WORK = 50_000
PATH_MAX = 4096  # Linux's: no longer path names a folder a command could run in
# The folders and paths a verdict names, at most (a hook saves the first few).
MAX_REACH = 64


class _Seen:
    """What judging one line has seen so far, shared by every context it creates: the
    functions it defines, the paths the current simple command resolved, the folders
    and paths of its risky commands, and the work left."""

    __slots__ = ("functions", "reach", "touched", "work")

    def __init__(self) -> None:
        self.functions: set[str] = set()  # their bodies were judged where defined
        self.touched: list[str] = []
        self.reach: list[str] = []
        self.work = MAX_WORK


class Ctx:
    """Where a command runs, and the project's patterns; passed to every rule."""

    def __init__(
        self,
        risky: tuple[str, ...],
        harmless: tuple[str, ...],
        cwd: str | None,
        depth: int = 0,
        seen: _Seen | None = None,
    ) -> None:
        if cwd is not None and len(cwd) > PATH_MAX:
            cwd = None  # no folder a command can run in: where it runs is unknown
        self.risky, self.harmless, self.cwd, self.depth = risky, harmless, cwd, depth
        self.seen = _Seen() if seen is None else seen

    @property
    def functions(self) -> set[str]:
        return self.seen.functions

    def at(self, cwd: str | None) -> Ctx:
        if cwd is not None:
            self.seen.touched.append(cwd)
        return Ctx(self.risky, self.harmless, cwd, self.depth, self.seen)

    def deeper(self) -> Ctx:
        if self.depth >= MAX_DEPTH:
            raise ShellSyntaxError("commands nested too deeply")
        return Ctx(self.risky, self.harmless, self.cwd, self.depth + 1, self.seen)

    # -- a whole line: simple commands joined by ; && || | & ( ) ---------------------------

    def line(self, text: str) -> str | None:
        """The reason the first risky simple command of `text` is risky, or None. The
        rest of the line is judged too: where its other risky commands act counts."""
        ctx = self.deeper()
        first: str | None = None
        tokens = tokenize(text)
        saved_cwds: list[str | None] = []
        words: list[Token] = []
        redirects: list[tuple[str, Token]] = []
        pending: str | None = None
        pattern = False  # reading a `case` pattern, up to its `)`: words that never run
        cases = 0
        for i, tok in enumerate(tokens):
            if pattern:
                if tok.kind == "word" and tok.text == "esac":
                    pattern, cases = False, cases - 1
                elif tok.kind == "op" and tok.text == ")":
                    pattern = False
            elif tok.kind == "sub":
                first = _first(first, *map(ctx.line, tok.subs))
            elif tok.kind == "word":
                if pending is not None:
                    redirects.append((pending, tok))
                    pending = None
                else:
                    words.append(tok)
                if len(words) == 3 and (words[0].text, words[2].text) == ("case", "in"):
                    words, pattern, cases = [], True, cases + 1
            elif pending is not None:
                raise ShellSyntaxError(f"nothing after {pending}")
            elif tok.text in _REDIRECTS:
                pending = tok.text
            elif tok.text == "(" and len(words) == 1 and tokens[i + 1 : i + 2] == [_CLOSE]:
                ctx.functions.add(words[0].text)  # `name()` defines a function
                words = []
            else:
                first = _first(first, ctx.simple(words, redirects))
                words, redirects = [], []
                if tok.text in (";;", ";&", ";;&") and cases:
                    pattern = True
                elif tok.text == "(":
                    saved_cwds.append(ctx.cwd)
                elif tok.text == ")" and saved_cwds:
                    ctx.cwd = saved_cwds.pop()
        if pending is not None:
            raise ShellSyntaxError(f"nothing after {pending}")
        return _first(first, ctx.simple(words, redirects))

    def simple(self, words: list[Token], redirects: list[tuple[str, Token]]) -> str | None:
        """Judge one simple command; a harmless `cd` moves this context's folder.

        Where a risky command acts: the paths it named and the folders it moved to
        (`git -C`), or else the folder it runs in; what commands it runs (`bash -c`,
        `$(…)`) say for themselves."""
        seen = self.seen
        touched, reached = len(seen.touched), len(seen.reach)
        cwd = self.cwd
        reason = self._simple(words, redirects)
        if reason and len(seen.reach) == reached:
            named = filter(None, map(self._named_path, words[1:]))
            where = [*seen.touched[touched:], *named] or ([cwd] if cwd is not None else [])
            seen.reach.extend(where[: max(0, MAX_REACH - reached)])
        del seen.touched[touched:]
        return reason

    def _named_path(self, word: Token) -> str | None:
        """The path a word names, when it looks like one (`/b/x`, `../b`, `--out=b/x`):
        where a command acts that does not say (`rm -rf /b/src`)."""
        text = word.text
        if text.startswith("-"):
            text = text.partition("=")[2]
        return self.path(text) if "/" in text and "://" not in text else None

    def _simple(self, words: list[Token], redirects: list[tuple[str, Token]]) -> str | None:
        first: str | None = None
        for tok in [*words, *(t for _, t in redirects)]:
            first = _first(first, *map(self.line, tok.subs))
        for op, target in redirects:
            first = _first(first, self.redirect(op, target.text))
        argv = [t.text for t in words]
        reason = self.argv(argv)
        if reason is None:
            self.cwd = _after_cd(argv, self.cwd)
            if argv[:1] == ["function"] and len(argv) > 1:
                self.functions.add(argv[1])
        return _first(first, reason)

    def redirect(self, op: str, target: str) -> str | None:
        if op not in _CLOBBERING or (op == ">&" and (target.isdigit() or target == "-")):
            return None
        clobbers = self.clobbers(target)
        if clobbers is None:
            return f"{op} {show(target)} may overwrite a file"
        return f"{op} overwrites {target}" if clobbers else None

    # -- one simple command as words ---------------------------------------------------

    def argv(self, argv: list[str]) -> str | None:
        self.seen.work -= len(argv) + 1
        if self.seen.work < 0:
            raise ShellSyntaxError("too many commands within commands to judge")
        skip = 0
        while skip < len(argv) and is_assignment(argv[skip]):
            skip += 1
        argv = argv[skip:] if skip else argv
        if not argv:
            return None
        if UNKNOWN in argv[0]:
            return f"{show(argv[0])} names its command at run time"
        if argv[0] in self.functions:
            return None
        typed = [show(w) for w in argv]
        forms = [typed, [os.path.basename(typed[0]), *typed[1:]]]
        for pattern in self.risky:
            if _matches(pattern, forms, anywhere=True):
                return f"matches hooks.risky_commands {pattern!r}"
        for pattern in self.harmless:
            if _matches(pattern, forms, anywhere=False):
                return None
        return judge(program_name(argv[0]), argv[1:], self)

    # -- paths -------------------------------------------------------------------------

    def path(self, path: str) -> str | None:
        """The absolute path, or None when it is unknown (computed, a glob, no cwd)."""
        if UNKNOWN in path or any(c in path for c in "*?["):
            return None
        if os.path.isabs(path):
            full = path
        elif self.cwd is None:
            return None
        else:
            full = os.path.join(self.cwd, path)
        self.seen.touched.append(full)
        return full

    def exists(self, path: str) -> bool | None:
        full = self.path(path)
        return None if full is None else os.path.lexists(full)

    def clobbers(self, path: str) -> bool | None:
        """Writing to `path` replaces an existing file (None: cannot tell). A scratch file
        (`> /tmp/test.log`) is no work to keep, unless the work itself is in /tmp."""
        if path in _HARMLESS_TARGETS or path.startswith("/dev/fd/"):
            return False
        full = self.path(path)
        if full is None:
            return None
        if _scratch(full) and not _scratch(self.cwd or "/"):
            return False
        return os.path.lexists(full) and not os.path.isdir(full)


_CLOSE = Token("op", ")")


def _first(*reasons: str | None) -> str | None:
    return next(filter(None, reasons), None)


def _scratch(path: str) -> bool:
    folders = ("/tmp", "/var/tmp", "/dev/shm", os.environ.get("TMPDIR", "/tmp").rstrip("/"))
    path = os.path.normpath(path)
    return any(path == f or path.startswith(f + "/") for f in folders if f)


def _matches(pattern: str, forms: list[list[str]], *, anywhere: bool) -> bool:
    if any(c in pattern for c in "*?["):
        from fnmatch import fnmatchcase  # only projects with glob patterns pay for it

        return any(fnmatchcase(" ".join(words), pattern) for words in forms)
    want = pattern.split()
    n = len(want)
    for words in forms:
        starts = range(len(words) - n + 1) if anywhere else range(1)
        if any(words[i : i + n] == want for i in starts):
            return True
    return False


def _after_cd(argv: list[str], cwd: str | None) -> str | None:
    skip = 0
    while skip < len(argv) and is_assignment(argv[skip]):
        skip += 1
    if skip == len(argv) or argv[skip] not in ("cd", "pushd"):
        return cwd
    operands = [a for a in argv[skip + 1 :] if not a.startswith("-") or a == "-"]
    if not operands:
        return os.environ.get("HOME")
    target = operands[0]
    if target == "-" or UNKNOWN in target:
        return None
    if not os.path.isabs(target):
        if cwd is None:
            return None
        target = os.path.join(cwd, target)
    return os.path.normpath(target) if len(target) <= PATH_MAX else None
