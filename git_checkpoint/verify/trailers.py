"""The `Checkpoint:` and `Verified-by:` trailers of a commit whose tree has verifier
evidence (evidence.py), put in the message git prepares for it (the prepare-commit-msg
hook) with `git interpret-trailers`.

Ours already in the message (an amend, `commit -c`) are taken out first and written
again from the evidence of the tree being committed: never twice, never stale. A message
nobody has written yet (git's editor is about to open on it) is left alone: a trailer
there would make git take an emptied message for one, and comment lines would stay in
it under `--cleanup=verbatim`; one line says which checkpoint holds the tree.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..gitcore.repo import Repo
from .evidence import ALL_FILES, CheckpointEvidence, evidence_for_tree

_OURS = re.compile(
    r"^(?:checkpoint: \S+/cp_\d{3,}|verified-by: \S+ \S+ \d{4}-\d\d-\d\dT\S*(?: on .*)?)\s*$",
    re.IGNORECASE,
)
_SCISSORS = re.compile(r"^. -{24} >8 -{24}$")  # below it, git keeps nothing of the message
_BARE = re.compile(r"[^\x21-\x7e]+")


def trailers_for(found: list[CheckpointEvidence]) -> list[str]:
    """The trailers of the checkpoint that vouches best for the tree (its whole managed
    set before its tracked files alone, promoted before the others, local before
    fetched, the latest in the end); none without a verified one."""
    verified = [c for c in found if c.verified]
    if not verified:
        return []
    best = max(
        verified,
        key=lambda c: (
            c.holds == ALL_FILES,
            c.status == "promoted",
            c.remote is None,
            max((v.at for v in c.verifiers), default=""),
        ),
    )
    out = [f"Checkpoint: {_word(best.checkpoint)}"]
    for v in best.verifiers:
        host = f" on {_word(v.host)}" if v.host else ""
        out.append(f"Verified-by: {_word(v.name)} {_word(v.status)} {_word(v.at)}{host}")
    return out


def _word(text: str) -> str:
    """One word a trailer can carry: what another machine's notes hold may not be."""
    return _BARE.sub("_", text)[:80] or "?"


def without_ours(text: str) -> str:
    """`text` less the trailer lines this hook writes (up to a scissors line)."""
    lines = text.split("\n")
    out = []
    for n, line in enumerate(lines):
        if _SCISSORS.match(line):
            out += lines[n:]
            break
        if not _OURS.match(line):
            out.append(line)
    return "\n".join(out)


def add_trailers(cwd: str, path: str, tree: str, *, unwritten: bool) -> str | None:
    """Give the message file `path` of a commit of `tree` its trailers (`unwritten`: say
    what they would be); the one line to say, if any."""
    repo = Repo.discover(cwd)
    message = Path(path)
    trailers = trailers_for(evidence_for_tree(repo, tree))
    if unwritten:
        if not trailers:
            return None
        held = trailers[0].partition(": ")[2]
        return f"this tree is {held}'s (git checkpoint evidence): -m or -F adds its trailers"
    text = message.read_bytes().decode("utf-8", "surrogateescape")
    kept = without_ours(text)
    if not trailers:
        if kept == text:
            return None
        _write(message, kept)
        return "Checkpoint and Verified-by trailers taken out: no evidence for this tree"
    argv = ["-c", "trailer.separators=:", "interpret-trailers", "--where", "end"]
    argv += ["--if-exists", "addIfDifferent", "--if-missing", "add"]
    argv += [f"--trailer={line}" for line in trailers]
    written = repo.git(*argv, stdin=kept.encode("utf-8", "surrogateescape"))
    if written != text.encode("utf-8", "surrogateescape"):
        _write(message, written.decode("utf-8", "surrogateescape"))
    return None


def _write(path: Path, text: str) -> None:
    """Replace the message file in one step: git reads it once the hook is done."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(text.encode("utf-8", "surrogateescape"))
    os.replace(tmp, path)
