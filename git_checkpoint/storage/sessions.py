"""Agent sessions as this repository knows them: the turns the hooks recorded
(fast/turns.py) and the checkpoints saved for each session (their manifests' `session`),
so that a session's checkpoints are listed apart from any other's and `restore
--before-turn N` finds the workspace as it was before prompt N."""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import UsageError
from ..fast.turns import all_sessions, read_turns
from ..gitcore.formats import is_oid
from ..gitcore.repo import Repo
from .refs import Checkpoint, load_checkpoints

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    from typing import Any


@dataclass(frozen=True)
class SessionSummary:
    agent: str
    id: str
    turns: int
    checkpoints: int
    first_at: str
    last_at: str
    worktree: str


def session_of(cp: Checkpoint) -> dict[str, Any] | None:
    """The agent session a checkpoint was saved for, as its manifest records it."""
    found = cp.manifest.get("session")
    return dict(found) if isinstance(found, dict) else None


def agent_sessions(repo: Repo) -> list[SessionSummary]:
    """Every agent session recorded here, the one with the latest turn last; sessions
    with checkpoints but no recorded prompt first."""
    counts: dict[tuple[str, str], int] = {}
    for cp in load_checkpoints(repo):
        found = session_of(cp)
        if found and isinstance(found.get("id"), str) and cp.remote is None:
            key = (str(found.get("agent", "")), str(found["id"]))
            counts[key] = counts.get(key, 0) + 1
    summaries = []
    for turns in all_sessions(str(repo.common_dir)):
        key = (str(turns[-1].get("agent", "")), str(turns[-1].get("session", "")))
        summaries.append(
            SessionSummary(
                agent=key[0],
                id=key[1],
                turns=len({t["turn"] for t in turns}),  # (two hooks of one prompt: one turn)
                checkpoints=counts.pop(key, 0),
                first_at=str(turns[0].get("at", "")),
                last_at=str(turns[-1].get("at", "")),
                worktree=str(turns[-1].get("worktree", "")),
            )
        )
    unseen = [SessionSummary(a, sid, 0, n, "", "", "") for (a, sid), n in counts.items()]
    return unseen + summaries


def session_id(repo: Repo, given: str) -> str:
    """The full id of the session `given` names (its id, or the start of one)."""
    known = {s.id for s in agent_sessions(repo)}
    if given in known:
        return given
    matches = sorted(sid for sid in known if sid.startswith(given))
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise UsageError(
            f"no agent session {given!r} recorded here (git checkpoint list --sessions)"
        )
    raise UsageError(f"session {given!r} is ambiguous: {', '.join(matches[:5])}")


@dataclass(frozen=True)
class Turn:
    agent: str
    session: str
    turn: int
    at: str
    commit: str
    ref: str


def turn_before(repo: Repo, turn: int, session: str | None) -> Turn:
    """The turn record of prompt `turn` of `session` (default: the session of this
    worktree with the latest prompt): the checkpoint holding the workspace before it."""
    recorded = [t for t in agent_sessions(repo) if t.turns]
    if session is not None:
        sid = session_id(repo, session)
        chosen = [s for s in recorded if s.id == sid]
    else:
        here = [s for s in recorded if s.worktree == str(repo.root)]
        chosen = here[-1:] or recorded[-1:]
    if not chosen:
        raise UsageError(
            "no agent turns recorded here: the prompt hooks record them "
            "(git checkpoint hooks install --agent …)"
        )
    found = chosen[-1]
    turns = read_turns(str(repo.common_dir), found.agent, found.id)
    records = [r for r in turns if r.get("turn") == turn]
    for record in records:
        commit = record.get("commit")
        if isinstance(commit, str) and is_oid(commit):
            return Turn(
                agent=found.agent,
                session=found.id,
                turn=turn,
                at=str(record.get("at", "")),
                commit=commit,
                ref=str(record.get("ref", "")),
            )
    if records:  # never the latest checkpoint in its place
        raise UsageError(
            f"turn {turn} of session {found.id} names no checkpoint "
            "(its record under the repository's checkpoint/sessions/ is damaged)"
        )
    known = sorted({t["turn"] for t in turns})
    if not known:
        raise UsageError(f"session {found.id} of {found.agent} has no turns recorded")
    if known[-1] - known[0] + 1 == len(known):
        span = f"turns {known[0]} to {known[-1]}"
    else:
        span = "turns " + ", ".join(str(n) for n in known[:20])
    raise UsageError(f"session {found.id} of {found.agent} has {span}, not {turn}")
