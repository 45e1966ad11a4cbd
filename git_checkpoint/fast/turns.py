"""Agent sessions and their turns: which checkpoint holds the workspace as it was before
each prompt of a session (design.md §7 `restore --before-turn`, `list --session`).

The hooks tell us the agent, its session id and (Codex) a turn id; the turn number is the
prompt's index within the session, counted here. One JSON Lines file per session under
`<common git dir>/checkpoint/sessions/`, appended to at each prompt, read by `list` and
`restore`. Standard library only: the hook writes it on every prompt.
"""

from __future__ import annotations

import os

from ..core import cjson

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

FOLDER = ("checkpoint", "sessions")
_ID_MAX = 128  # a session id longer than this is cut (ours are UUIDs)
_SAFE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")


def session_of(agent: str, payload: dict[str, Any]) -> dict[str, Any] | None:
    """What a hook payload says of the agent's session, as a checkpoint records it:
    {"agent", "id"} and, when the agent names it, "turn_id"; None without a session id."""
    sid = payload.get("session_id") or payload.get("conversation_id")  # (Cursor)
    if not isinstance(sid, str) or not sid.strip():
        return None
    found: dict[str, Any] = {"agent": agent, "id": _printable(sid.strip())[:_ID_MAX]}
    turn_id = payload.get("turn_id")
    if isinstance(turn_id, str) and turn_id:
        found["turn_id"] = _printable(turn_id)[:_ID_MAX]
    return found


def _printable(text: str) -> str:
    return "".join(c if c.isprintable() else "?" for c in text)


def _path(common_dir: str, agent: str, sid: str) -> str:
    given = f"{agent}-{sid}"
    name = "".join(c if c in _SAFE else "_" for c in given[:200])
    if name != given:  # ids that differ only where they were made safe ("a/b", "a_b")
        import hashlib

        digest = hashlib.sha256(given.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        name = f"{name[:180]}-{digest}"
    return os.path.join(common_dir, *FOLDER, f"{name}.jsonl")


def read_turns(common_dir: str, agent: str, sid: str) -> list[dict[str, Any]]:
    """The turns recorded for one session, oldest first (torn lines skipped)."""
    return _turns_in(_path(common_dir, agent, sid))


def _turns_in(path: str) -> list[dict[str, Any]]:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return []
    turns = []
    for line in lines:
        try:
            record = cjson.loads(line)
        except ValueError:
            continue
        number = record.get("turn") if isinstance(record, dict) else None
        if isinstance(number, int) and not isinstance(number, bool):
            turns.append(record)
    return turns


def current_turn(common_dir: str, session: dict[str, Any]) -> int | None:
    """The number of the session's latest prompt (the turn its tool calls belong to)."""
    turns = read_turns(common_dir, session["agent"], session["id"])
    return turns[-1]["turn"] if turns else None


def start_turn(
    common_dir: str,
    session: dict[str, Any],
    *,
    turn: int,
    worktree: str,
    checkpoint: dict[str, str],
) -> None:
    """Record turn `turn` of `session`: the workspace before its prompt is `checkpoint`
    ({"ref", "commit"})."""
    record = {
        "turn": turn,
        "at": _now(),
        "agent": session["agent"],
        "session": session["id"],
        "worktree": worktree,
        **({"turn_id": session["turn_id"]} if "turn_id" in session else {}),
        **checkpoint,
    }
    path = _path(common_dir, session["agent"], session["id"])
    os.makedirs(os.path.dirname(path), exist_ok=True)
    line = (cjson.dumps(record, ensure_ascii=False) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def all_sessions(common_dir: str) -> list[list[dict[str, Any]]]:
    """The turns of every recorded session (each list oldest first), the session with
    the latest turn last."""
    folder = os.path.join(common_dir, *FOLDER)
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    dated = []
    for name in names:
        path = os.path.join(folder, name)
        turns = _turns_in(path) if name.endswith(".jsonl") else []
        if turns:
            try:
                written = os.stat(path).st_mtime_ns  # (finer than the turns' seconds)
            except OSError:
                written = 0
            dated.append((str(turns[-1].get("at", "")), written, turns))
    dated.sort(key=lambda item: item[:2])
    return [turns for _, _, turns in dated]


def _now() -> str:
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
