"""Secret scanning of what a checkpoint stores (design.md §7 `scan`, §9 push).

The detectors are detect-secrets' own (keys, cloud and SaaS tokens, keyword
assignments, high-entropy strings), with its false-positive filters and its
`pragma: allowlist secret` comments. Its per-line machinery is slow, so a cheap pass
first picks the lines any detector could fire on (a secret-ish word, a long token, a
URL with credentials) and only those go through detect-secrets: the same findings on
our corpus, for a fraction of the time.
A finding names file, line, kind and a fingerprint; the secret itself is never kept.
"""

from __future__ import annotations

import collections
import contextlib
import fnmatch
import math
import re
import sys
import types
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from ..core.errors import UsageError
from ..core.text import printable
from ..gitcore.formats import EMPTY_TREE
from ..gitcore.repo import Repo
from ..storage.commits import same_state, trees_of
from ..storage.refs import Checkpoint, history
from .capture import Snapshot

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    from typing import Any

MAX_BLOB_BYTES = 8 * 1024 * 1024  # bigger files are data, not source: not scanned
# A superset of what detect-secrets' detectors match (1.5: each detector's own words,
# prefixes and shapes), run on lowercased text, so that a line none could fire on never
# loads them. One pass: the alternatives are grouped by their first character, so the
# engine tries one group at a position, not every word (an alternation of forty words
# costs five times as much on source code). Shapes are anchored on their rarest part:
# Telegram's `\d{8,10}:[\w-]{35}` on its colon, Discord's `…\.[\w-]{6}\.[\w-]{27}` on its
# first dot. tests/save/test_secret_scan.py checks the superset on real code.
_CANDIDATE = re.compile(
    # Secret Keyword (its denylist), the cloud detectors' own words, tokens by prefix
    r"a(?:pi_?key|uth_?key|ccount_?key|ws|c[a-z0-9]{32})"
    r"|s(?:ervice_?key|ecret|oftlayer|g\.|k[a-z0-9]{32}|q0csp-)"
    r"|d(?:b_?(?:key|pass)|atabase_?(?:key|pass))"
    r"|p(?:riv(?:_?key|ate)|assw|wd|ypi-)"
    r"|c(?:lient_?key|ontrase|loudant)"
    r"|k(?:ey_?pass|_live_)|ibm|h(?:mac|ooks\.slack)"
    r"|g(?:h[pousr]_|l(?:pat|dt|ft|soat|rt|cbt|imt|ptt|agent|oas)-|r1348941)"
    r"|eyj|t3blbkfj|xox[abposr]-|_authtoken|-us\d"
    # credentials in a URL; Telegram's bot token; Discord's
    r"|:(?://[^\s/@]*@|(?<=\d{8}:)[0-9a-z_-]{35})"
    r"|\.[a-z0-9_-]{6}\.[a-z0-9_-]{27}"
)
# The same for the detectors that tell case apart, on the text as it is.
_CANDIDATE_CASED = re.compile(
    r"A(?:(?:3T[A-Z0-9]|BIA|CCA|KIA|SIA)[0-9A-Z]{16}|KC[a-zA-Z0-9]{10,}|P[\dA-F][a-zA-Z0-9]{8,})"
)
# The high-entropy detectors read quoted runs of their alphabet (hex within base64's)
# and report those above their limit of Shannon entropy over it: every quoted run from
# every quote is looked at (a superset of their non-overlapping matches; the match takes
# the quote alone, the run is looked ahead at), and only the
# lines with a run over a limit are candidates. No run of fewer than 9 characters can
# reach 3.0 bits, nor of fewer than 23 reach 4.5.
_QUOTED_RUN = re.compile(r"""(['"])(?=([A-Za-z0-9+/=_\\-]{9,})\1)""")
_HEX = frozenset("0123456789abcdefABCDEF")
BASE64_LIMIT = 4.5  # detect-secrets' defaults, as the engine loads them
HEX_LIMIT = 3.0
_MARGIN = 1e-9  # the detectors sum in another order: never fewer candidates for it
# Detectors whose findings are not secrets for our purpose.
_UNWANTED_PLUGINS = {"IPPublicDetector"}


@dataclass(frozen=True)
class Finding:
    """A secret the scan found: where, what kind, and a fingerprint that names it."""

    path: str
    line: int
    kind: str  # detect-secrets' type, e.g. "AWS Access Key"
    fingerprint: str  # first 12 hex of sha1(secret): names it for secrets.allow, reveals nothing
    where: str  # "tracked", "index" or "untracked"
    checkpoint: str | None = None

    def describe(self) -> str:
        origin = f"{self.checkpoint}: " if self.checkpoint else ""
        extra = "" if self.where == "tracked" else f", {self.where}"
        path = printable(self.path, 200)
        return f"{origin}{path}:{self.line}: {self.kind} ({self.fingerprint}{extra})"


def allowed(finding: Finding, allow: Iterable[str]) -> bool:
    """`secrets.allow` entries are path patterns (`tests/fixtures/*`) or fingerprints."""
    name = finding.path.rsplit("/", 1)[-1]
    for pattern in allow:
        if pattern == finding.fingerprint or fnmatch.fnmatchcase(finding.path, pattern):
            return True
        if "/" not in pattern and fnmatch.fnmatchcase(name, pattern):
            return True
    return False


class _Engine:
    """detect-secrets with its default plugins and filters, loaded once per process."""

    def __init__(self) -> None:
        try:
            with _requests_unloaded():
                from detect_secrets.core import scan
                from detect_secrets.core.plugins.util import (
                    get_mapping_from_secret_type_to_class,
                )
                from detect_secrets.settings import (
                    cache_bust,
                    configure_settings_from_baseline,
                    get_plugins,
                )
                from detect_secrets.util.code_snippet import get_code_snippet

                # Every detector and the default filters, as `default_settings()` sets
                # them up (importing the detectors is what needs `requests`).
                plugins: list[Any] = list(get_mapping_from_secret_type_to_class().values())
                cache_bust()
                settings = configure_settings_from_baseline(
                    {"plugins_used": [{"name": p.__name__} for p in plugins]}
                )
                found = get_plugins()
        except ImportError as exc:  # pragma: no cover - a broken install
            raise UsageError(
                f"secret scanning needs detect-secrets ({exc}); reinstall git-checkpoint"
            ) from None
        self._scan: Any = scan
        self._snippet: Any = get_code_snippet
        # We scan blobs, not files on disk: a path need not exist in the work tree.
        settings.disable_filters("detect_secrets.filters.common.is_invalid_file")
        self._plugins = [p for p in found if type(p).__name__ not in _UNWANTED_PLUGINS]

    def warm(self) -> None:
        """Run every filter and detector once, on lines that reach each of them: what
        they compile on first use (their patterns, kept in `re`'s cache and their own)
        is then made here, once, not in each worker the command server forks."""
        lines = [
            "# pragma: allowlist nextline secret",
            'password = "Xk29fQ8rLm3pVt7sZc1nBw4y"  # a made-up value',
            "aws_key: AKIAZZZZZZZZZZZZZZZZ",
            'token = f"{value}"',
        ]
        for path in ("warm.py", "warm.yaml"):
            for _ in self.scan_lines(path, lines, list(range(1, len(lines) + 1))):
                pass

    def scan_lines(self, path: str, lines: list[str], numbers: list[int]) -> Iterator[Any]:
        scan, filtered = self._scan, self._scan._is_filtered_out
        if filtered(required_filter_parameters=["filename"], filename=path):
            return
        for number in numbers:
            line = lines[number - 1].rstrip()
            context = self._snippet(lines=lines, line_number=number)
            if filtered(
                required_filter_parameters=["line"], filename=path, line=line, context=context
            ):
                continue
            for plugin in self._plugins:
                for secret in scan._scan_line(
                    plugin=plugin, filename=path, line=line, line_number=number, context=context
                ):
                    if not filtered(
                        required_filter_parameters=["context"],
                        filename=path,
                        secret=secret.secret_value,
                        plugin=plugin,
                        line=line,
                        context=context,
                    ):
                        yield secret


class _Absent:
    """What the stand-in `requests` gives for any name (see _requests_unloaded)."""

    def __getattr__(self, name: str) -> type[_Absent]:
        return _Absent


@contextlib.contextmanager
def _requests_unloaded() -> Iterator[None]:
    """detect-secrets' detectors import `requests` for their `verify`, which asks the
    secret's service whether it is live; we never verify (nothing leaves the machine),
    and `requests` brings urllib3, ssl, email and http with it. While the detectors are
    imported a stand-in answers for it, unless the real one is loaded already; it is
    taken out afterwards, so a later `import requests` in this process gets the real
    one."""
    if "requests" in sys.modules:
        yield
        return
    stand_in = types.ModuleType("requests", "a stand-in: detectors' verify is never called")
    stand_in.__getattr__ = lambda name: _Absent  # type: ignore[method-assign]
    sys.modules["requests"] = stand_in
    try:
        yield
    finally:
        if sys.modules.get("requests") is stand_in:
            del sys.modules["requests"]


_ENGINE: _Engine | None = None


def _engine() -> _Engine:
    global _ENGINE
    if _ENGINE is None:
        _ENGINE = _Engine()
    return _ENGINE


def candidate_lines(text: str) -> list[int]:
    """1-based numbers of the lines a detector could fire on."""
    lower = text.lower()  # may be longer ("İ" lowers to two), never by a newline
    found = [(lower, m.start()) for m in _CANDIDATE.finditer(lower)]
    found += [(text, m.start()) for m in _CANDIDATE_CASED.finditer(text)]
    found += [(text, m.start()) for m in _QUOTED_RUN.finditer(text) if _high_entropy(m[2])]
    lines: set[int] = set()
    for source in (lower, text):  # each position counted in its own text's lines
        line, at = 1, 0
        for pos in sorted(p for s, p in found if s is source):
            line += source.count("\n", at, pos)
            at = pos
            lines.add(line)
    return sorted(lines)


def _high_entropy(run: str) -> bool:
    """Whether a high-entropy detector could report this quoted run."""
    size = len(run)
    bits = -sum(n / size * math.log2(n / size) for n in collections.Counter(run).values())
    if size >= 23 and bits > BASE64_LIMIT - _MARGIN:
        return True
    return bits > HEX_LIMIT - _MARGIN and all(c in _HEX for c in run)


def scan_text(
    path: str, data: bytes, old: bytes | None = None, allow: Iterable[str] = ()
) -> list[tuple[int, str, str]]:
    """(line, kind, fingerprint) of each secret in one file's bytes; binary files skipped.
    Lines that `old` (the same file before) has too are not reported again. `allow`: the
    `secrets.allow` entries, which are no secrets themselves where they are written (a
    fingerprint reads as a hex string).
    """
    listed = frozenset(allow)
    if len(data) > MAX_BLOB_BYTES or b"\0" in data[:8000]:
        return []
    text = data.decode("utf-8", "replace")
    lines = text.split("\n")
    if old:  # only the lines `old` lacks are looked at (no candidate spans two lines)
        before = set(old.decode("utf-8", "replace").split("\n"))
        fresh = [n for n, line in enumerate(lines, 1) if line not in before]
        numbers = [fresh[i - 1] for i in candidate_lines("\n".join(lines[n - 1] for n in fresh))]
    else:
        numbers = candidate_lines(text)
    if not numbers:
        return []  # no line a detector could fire on: detect-secrets is not even loaded
    kinds: dict[int, list[str]] = {}
    values: dict[int, set[str]] = {}
    for secret in _engine().scan_lines(path, lines, numbers):
        if secret.secret_value in listed:
            continue
        if secret.type not in kinds.setdefault(secret.line_number, []):
            kinds[secret.line_number].append(secret.type)
        values.setdefault(secret.line_number, set()).add(secret.secret_value or "")
    # One finding per line; its fingerprint covers every secret on it (for secrets.allow).
    return [(line, ", ".join(kinds[line]), _fingerprint(values[line])) for line in sorted(kinds)]


# --- free text: messages, hypotheses, reasons ---------------------------------------------

REDACTED = "[redacted]"
# What could hold a secret in a line of free text, for any detector: a secret-ish word
# given a value (`AWS_SECRET_ACCESS_KEY=…`, `password: …`), credentials in a URL, a
# quoted run a high-entropy detector reads, or a token-shaped word (`ghp_…`, `AKIA…`,
# `sk-…`, `xoxb-…`: letters and digits, 20 or more). Names and paths (`src/app.py`,
# `fix the auth token`) pass without loading detect-secrets.
_TEXT_CANDIDATE = re.compile(
    r"(key|pass|pwd|secret|token|auth|cred|private|bearer)[\w.-]*[\"']?\s*[:=]"
    r"|://[^\s/@]*@|[\"'][a-z0-9+/=_-]{16,}[\"']|-----begin"
    r"|(?<![\w/.])(?=[\w+=-]*\d)(?=[\w+=-]*[a-z])[\w+=-]{20,}",
    re.IGNORECASE,
)
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_+/.~-")


def text_secrets(text: str, allow: Iterable[str] = ()) -> list[tuple[str, str, str]]:
    """(kind, value, fingerprint) of each secret the scan finds in free text: each line
    read as a file's line would be, and each word of it as a `key=value` setting (a
    command line's `TOKEN=… ./deploy.sh`). `allow`: fingerprints to pass."""
    found: dict[str, str] = {}  # value -> kind
    for line in text.split("\n"):
        if not _TEXT_CANDIDATE.search(line):
            continue
        engine = _engine()
        pieces = [("message", line)]
        pieces += [("message.yaml", w) for w in line.split() if _TEXT_CANDIDATE.search(w)]
        for name, piece in pieces:
            for secret in engine.scan_lines(name, [piece], [1]):
                value = secret.secret_value or ""
                if value.strip():
                    found.setdefault(value, secret.type)
    allowed = set(allow)
    out = [(kind, value, _fingerprint({value})) for value, kind in found.items()]
    return [item for item in out if item[2] not in allowed]


def redact(text: str, allow: Iterable[str] = ()) -> tuple[str, list[str]]:
    """`text` with each secret the scan finds replaced by REDACTED, and their kinds. A
    detector that names only a token's prefix (`ghp`) redacts the whole token."""
    secrets = text_secrets(text, allow)
    for _, value, _ in sorted(secrets, key=lambda s: -len(s[1])):
        text = _redacted(text, value)
    return text, [kind for kind, _, _ in secrets]


def _redacted(text: str, value: str) -> str:
    whole = all(c in _TOKEN_CHARS for c in value)  # a token: its whole run of such letters
    out: list[str] = []
    at = 0
    while (start := text.find(value, at)) >= 0:
        end = start + len(value)
        if whole:
            while start > at and text[start - 1] in _TOKEN_CHARS:
                start -= 1
            while end < len(text) and text[end] in _TOKEN_CHARS:
                end += 1
        out += [text[at:start], REDACTED]
        at = end
    return "".join([*out, text[at:]])


def _fingerprint(values: set[str]) -> str:
    import hashlib  # only for a finding

    return hashlib.sha1("\0".join(sorted(values)).encode("utf-8", "replace")).hexdigest()[:12]


# --- what a checkpoint stores ------------------------------------------------------------


def _is_header(token: str) -> bool:
    return len(token) >= 82 and token[40] == " " and token[81] == "\n"


def changed_files_many(
    repo: Repo, pairs: list[tuple[str, str]]
) -> list[list[tuple[str, str, str | None]]]:
    """For each (old tree, new tree): (path, new blob, old blob or None) of the regular
    files added or changed. One `diff-tree --stdin` for every pair: a process of its
    own, on a core of its own, while a save stores its checkpoint beside the scan (the
    same diff read in this process would hold the interpreter the store needs).
    """
    results: list[list[tuple[str, str, str | None]]] = [[] for _ in pairs]
    if not pairs:
        return results
    stdin = "".join(f"{old} {new}\n" for old, new in pairs).encode()
    argv = ("diff-tree", "--stdin", "-r", "-z", "--no-renames")
    out = repo.git(*argv, stdin=stdin, env=repo.no_index())
    tokens = out.decode("utf-8", "surrogateescape").split("\0")
    current, i = -1, 0
    while i < len(tokens):
        token = tokens[i]
        while _is_header(token):  # "<old> <new>\n" opens each pair's records
            current += 1
            token = token[82:]
        if not token.startswith(":") or i + 1 >= len(tokens):
            i += 1
            continue
        meta, path = token[1:].split(), tokens[i + 1]
        i += 2
        if len(meta) < 5 or meta[4] not in ("A", "M", "T") or meta[1] not in REGULAR:
            continue  # deletions, symlinks and submodules hold no secrets of their own
        results[current].append((path, meta[3], meta[2] if meta[0] in REGULAR else None))
    return results


REGULAR = ("100644", "100755")


def read_blobs(repo: Repo, oids: Iterable[str]) -> dict[str, bytes]:
    """The blobs of `oids` up to MAX_BLOB_BYTES each (a bigger one is data, not read into
    memory; a missing one is left out)."""
    wanted = list(dict.fromkeys(oids))
    blobs: dict[str, bytes] = {}

    def keep(n: int, chunks: Iterator[bytes]) -> None:
        held: list[bytes] = []
        size = 0
        for chunk in chunks:  # every chunk is taken: the next object follows it
            size += len(chunk)
            if size <= MAX_BLOB_BYTES:
                held.append(chunk)
        if size <= MAX_BLOB_BYTES:
            blobs[wanted[n]] = b"".join(held)

    if wanted:
        repo.objects.stream(wanted, keep, missing_ok=True)
    return blobs


@dataclass(frozen=True)
class TreeSet:
    """The trees a checkpoint (or a snapshot) stores, or those it is compared against."""

    worktree: str
    index: str
    overlay: str | None


def scan_tree_sets(
    repo: Repo, items: list[tuple[str | None, TreeSet, TreeSet]], allow: Iterable[str]
) -> list[Finding]:
    """Secrets in what each `new` stores and its `old` (the base, or the previous
    checkpoint) does not: changed tracked, staged and untracked files. Items are
    (label, new, old); each blob is read and scanned once, with three git processes
    in all however many items there are.
    """
    pairs: list[tuple[int, str, str, str]] = []  # item, where, old tree, new tree
    for n, (_, new, old) in enumerate(items):
        pairs.append((n, "tracked", old.worktree, new.worktree))
        pairs.append((n, "index", old.index, new.index))
        if new.overlay:
            pairs.append((n, "untracked", old.overlay or EMPTY_TREE, new.overlay))
    # Checkpoints of one task share most of their trees: each pair is compared once.
    distinct = list(dict.fromkeys((old, new) for _, _, old, new in pairs))
    found = dict(zip(distinct, changed_files_many(repo, distinct), strict=True))
    changed = [found[old, new] for _, _, old, new in pairs]
    jobs: list[tuple[int, str, str, str | None, str]] = []  # item, path, blob, old, where
    seen: set[tuple[int, str, str]] = set()
    for (n, where, _, _), rows in zip(pairs, changed, strict=True):
        for path, blob, old_blob in rows:
            if (n, path, blob) not in seen:
                seen.add((n, path, blob))
                jobs.append((n, path, blob, old_blob, where))
    blobs = read_blobs(repo, [j[2] for j in jobs] + [j[3] for j in jobs if j[3]])
    results: dict[tuple[str, str, str | None], list[tuple[int, str, str]]] = {}
    allow = tuple(allow)
    findings = []
    for n, path, blob, old_blob, where in jobs:
        key = (path, blob, old_blob)
        if key not in results:
            results[key] = scan_text(path, blobs.get(blob, b""), blobs.get(old_blob or ""), allow)
        for line, kind, fp in results[key]:
            finding = Finding(path, line, kind, fp, where, items[n][0])
            if not allowed(finding, allow):
                findings.append(finding)
    return findings


def scan_checkpoints(repo: Repo, cps: list[Checkpoint], allow: Iterable[str]) -> list[Finding]:
    """Secrets in what each checkpoint stores beyond its base commit, and in what it
    says of itself (its message and manifest: a name made of a prompt, a hypothesis)."""
    allow = tuple(allow)
    return _scan_stored(repo, cps, allow) + scan_messages(repo, cps, allow)


def scan_messages(repo: Repo, cps: list[Checkpoint], allow: Iterable[str]) -> list[Finding]:
    """Secrets in the checkpoints' commit messages (summary line and manifest): one
    finding per line that holds any, as for a file."""
    allow = tuple(allow)
    found = repo.objects.read_specs([cp.commit for cp in cps]) if cps else []
    findings = []
    # Manifests repeat lines (a task's base commit, its include list): each is read once.
    read: dict[str, list[tuple[str, str, str]]] = {}
    for cp, item in zip(cps, found, strict=True):
        if item is None:
            continue
        message = item[1].partition(b"\n\n")[2].decode("utf-8", "replace")
        for number, line in enumerate(message.split("\n"), 1):
            if line not in read:
                read[line] = text_secrets(line)
            secrets = read[line]
            if secrets:
                kinds = ", ".join(dict.fromkeys(kind for kind, _, _ in secrets))
                fp = _fingerprint({value for _, value, _ in secrets})
                finding = Finding(MESSAGE, number, kinds, fp, "message", cp.name)
                if not allowed(finding, allow):
                    findings.append(finding)
    return findings


MESSAGE = "(message)"  # the path a finding in a checkpoint's message names


def _scan_stored(repo: Repo, cps: list[Checkpoint], allow: Iterable[str]) -> list[Finding]:
    wanted = [c.index_commit for c in cps]
    wanted += [c.overlay_commit for c in cps if c.overlay_commit]
    wanted += [c.base for c in cps if c.base]
    wanted = list(dict.fromkeys(wanted))
    trees = dict(zip(wanted, _trees(repo, wanted), strict=True))
    items: list[tuple[str | None, TreeSet, TreeSet]] = []
    for cp in cps:
        base = trees[cp.base] if cp.base else EMPTY_TREE
        overlay = trees[cp.overlay_commit] if cp.overlay_commit else None
        new = TreeSet(cp.worktree_tree, trees[cp.index_commit], overlay)
        items.append((cp.name, new, TreeSet(base, base, None)))
    return scan_tree_sets(repo, items, allow)


def _trees(repo: Repo, commits: list[str]) -> list[str]:
    if not commits:
        return []
    return repo.git("rev-parse", *(f"{c}^{{tree}}" for c in commits)).decode().split()


def scan_checkpoint(repo: Repo, cp: Checkpoint, allow: Iterable[str]) -> list[Finding]:
    return scan_checkpoints(repo, [cp], allow)


def scan_snapshot(
    repo: Repo,
    snapshot: Snapshot,
    task: str,
    allow: Iterable[str],
    done: list[Checkpoint] | None = None,
) -> list[Finding]:
    """Secrets a save would store that the task's latest checkpoint (or the base) lacks:
    each secret is reported once, when it first appears. Nothing new, nothing scanned.
    `done`: the task's history, when the caller has it.
    """
    if done is None:
        done = history(repo, task)
    if done and same_state(repo, snapshot, done[-1]):
        return []
    if done:
        index_tree, overlay_tree = trees_of(repo, done[-1])
        old = TreeSet(done[-1].worktree_tree, index_tree, overlay_tree)
    else:
        base = _trees(repo, [snapshot.base])[0] if snapshot.base else EMPTY_TREE
        old = TreeSet(base, base, None)
    new = TreeSet(snapshot.worktree_tree, snapshot.index_tree, snapshot.overlay_tree)
    return scan_tree_sets(repo, [(None, new, old)], allow)
