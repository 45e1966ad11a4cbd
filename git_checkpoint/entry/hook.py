"""`git-checkpoint-hook AGENT EVENT`: the one entry every agent and git hook calls.

Every agent tool call pays for this process, so it loads only the hook path (fast/:
the payload, the plan, the quick check); the save path is imported only when a
checkpoint is due, on a thread while git scans. It never blocks: any problem is one
line on stderr, exit 0, and the answer (if the agent's format wants one) that lets the
call go on. It never runs git's auto maintenance (gitcore/maintenance.py says why).
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import signal as _signal
else:
    import _signal  # the C part alone: `signal` loads enum

# Until main() begins, a Ctrl-C ends the hook by the signal, with no traceback (as it
# ends the launcher: entry/launch.py). First, before the hook path loads.
if _signal.getsignal(_signal.SIGINT) is _signal.default_int_handler:
    _signal.signal(_signal.SIGINT, _signal.SIG_DFL)

from ..core import preload
from ..core.interrupts import interrupt_once
from ..core.text import one_line
from ..core.threads import share_the_interpreter
from ..fast import hook, turns
from ..gitcore.locate import Paths, find_repo
from . import relay

if TYPE_CHECKING:
    from typing import Any

    from ..save.session import Saved

# An agent's tool call waits at most this long for another git-checkpoint (a restore, a
# `run` between attempts) before it goes on without a checkpoint.
LOCK_WAIT = 2.0
# What a save loads, imported while the quick check's git scans.
SAVE_MODULES = tuple(
    f"{__package__.rpartition('.')[0]}.{name}" for name in ("save.session", "save.quickbuild")
)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    agent, event = [*args[:2], "", ""][:2]
    try:
        if _signal.getsignal(_signal.SIGINT) is _signal.SIG_DFL:  # set on import
            interrupt_once()
        share_the_interpreter()
        if argv is None:
            how = relay.forward("hook", args)
            if how is not None:
                relay.exit_like(how)
        run(agent, event, list(args[2:]))
    except hook.Skip as why:
        if str(why):
            _say(str(why))
    except KeyboardInterrupt:
        _say("interrupted; no checkpoint saved")
    except Exception as exc:  # never a traceback, never a blocked tool call
        _say(f"no checkpoint saved: {one_line(exc)}")
    _signal.signal(_signal.SIGINT, _signal.SIG_IGN)  # the answer is written whatever comes
    answer = hook.ANSWERS.get((agent, event))
    out = sys.stdout
    if answer is not None and out is not None:
        try:
            out.write(answer + "\n")
            out.flush()
        except (OSError, ValueError):  # nobody listens: make the flush at exit harmless too
            try:
                os.dup2(os.open(os.devnull, os.O_WRONLY), out.fileno())
            except (OSError, ValueError):
                pass
    relay.flush_streams()
    relay.exit_process(0)  # no interpreter teardown: everything is closed and flushed by now


def run(agent: str, event: str, rest: list[str]) -> None:
    hook.check_call(agent, event)
    if os.environ.get(hook.GUARD):
        return  # a save of ours is running git: never save from inside it
    if agent == "git":
        if event == "pre-push":
            _push_with_branch(rest)
            return
        if event == "prepare-commit-msg":
            _commit_trailers(rest)
            return
        due = hook.git_plan(event, rest)
        session = None
    else:
        payload = hook.read_payload()
        due = hook.agent_plan(agent, event, payload, _parse_patterns)
        session = turns.session_of(agent, payload)
    if due is not None:
        folders, message, named = due
        prompt = event in hook.PROMPT_EVENTS
        for cwd in folders:
            save(cwd, message, named=named, session=session, prompt=prompt)


def _parse_patterns(data: bytes) -> tuple[list[str], list[str]]:
    from ..config.parse import hook_patterns  # only when the file changed

    return hook_patterns(data)


def _commit_trailers(rest: list[str]) -> None:
    """prepare-commit-msg: the Checkpoint and Verified-by trailers of a tree with verifier
    evidence. The tool is loaded only when a checkpoint may hold the tree (fast.commitmsg);
    whatever fails, the commit goes on."""
    from ..fast.commitmsg import plan

    try:
        found = plan(os.getcwd(), rest)
        if found is None:
            return
        from ..verify.trailers import add_trailers

        said = add_trailers(os.getcwd(), found.message, found.tree, unwritten=found.unwritten)
    except Exception as exc:
        raise hook.Skip(f"no trailers added: {one_line(exc)}") from None
    if said:
        _say(said)


def _push_with_branch(rest: list[str]) -> None:
    """pre-push: with checkpoint.pushWithBranch, the pushed branches' checkpoints go too,
    through the same push as `git checkpoint push REMOTE --task T…`."""
    from ..app import push
    from ..app.context import load_context
    from ..core.errors import CheckpointError
    from ..install.git_hooks import tasks_pushed_with

    os.environ[hook.GUARD] = "1"  # that push runs git push: its pre-push must not recurse
    refs = sys.stdin.read().splitlines() if sys.stdin is not None else []
    remote = rest[0] if rest else ""
    try:
        tasks = tasks_pushed_with(os.getcwd(), remote, refs)
        if not tasks:
            return
        result = push.run(
            load_context(),
            remote,
            names=(),
            tasks=tuple(tasks),
            all_tasks=False,
            as_name=None,
            allow_secrets=False,
            progress=lambda line: None,
        )
    except CheckpointError as exc:
        raise hook.Skip(f"checkpoints not pushed with the branch: {one_line(exc)}") from None
    except Exception as exc:
        raise hook.Skip(one_line(exc)) from None
    said = result.lines()
    if said:
        _say(said[0])


def save(
    cwd: str,
    message: str,
    *,
    named: bool = False,
    session: dict[str, Any] | None = None,
    prompt: bool = False,
) -> None:
    """An automatic checkpoint of `cwd`'s workspace, unless it equals the task's latest;
    what it leaves out is named once (until it changes). `named`: say which repository
    (a command that reaches more than one, or another than the call's). `session`: the
    agent's session, recorded with the checkpoint; `prompt`: this call starts a turn of
    it, whose checkpoint (new, or the latest when nothing changed) is recorded as the
    workspace before that turn."""
    os.environ[hook.GUARD] = "1"  # git children of this save must not fire our hooks again
    saved = _auto_save(cwd, message, session, prompt)
    if saved is None:
        return
    if saved.config_problem:
        _say(f"warning: {saved.config_problem}; saving with the default settings")
    if saved.created:
        where = f" in {cwd}" if named else ""
        _say(f"checkpoint saved: {saved.checkpoint.id}{where} ({saved.checkpoint.message})")
    from ..save.session import said_of

    for line in said_of(saved):
        _say(line)


def auto_save(cwd: str, message: str) -> str | None:
    """The quick check, then (when something changed) the one save sequence, as every
    hook saves; the new checkpoint's name, or None when nothing changed."""
    saved = _auto_save(cwd, message)
    return saved.checkpoint.id if saved is not None and saved.created else None


def _auto_save(
    cwd: str, message: str, session: dict[str, Any] | None = None, prompt: bool = False
) -> Saved | None:
    """None when the quick check finds the workspace unchanged."""
    from ..fast.quickcheck import check

    found = check(cwd, while_scanning=lambda: preload.start(*SAVE_MODULES))
    paths = found.paths if found is not None else find_repo(cwd)
    if paths is None and session is not None:  # GIT_DIR or the like: git knows where
        paths = _asked_git(cwd)
    turn = None
    if session is not None and paths is not None:
        current = turns.current_turn(paths.common_dir, session)
        turn = (current or 0) + 1 if prompt else current
        session = {**session, **({"turn": turn} if turn else {})}

    def start_turn(ref: str, commit: str) -> None:
        if prompt and turn and session is not None and paths is not None:
            kept = {"ref": ref, "commit": commit}
            turns.start_turn(
                paths.common_dir, session, turn=turn, worktree=paths.root, checkpoint=kept
            )

    if found is not None and found.unchanged:
        start_turn(found.saved["ref"], found.saved["commit"])
        return None  # (the process exits at once: the imports started for a save go with it)
    preload.wait()
    from ..save import session as sessions

    saved = sessions.auto_save(
        cwd, message, found=found, lock_wait=LOCK_WAIT, agent_session=session
    )
    start_turn(saved.checkpoint.ref, saved.checkpoint.commit)
    return saved


def _asked_git(cwd: str) -> Paths | None:
    """Where git finds the repository of `cwd` when the walk up cannot say (GIT_DIR and
    the like set): the session's turns are kept there as with any other hook call."""
    from ..core.errors import CheckpointError
    from ..gitcore.repo import Repo

    try:
        repo = Repo.discover(cwd)
    except CheckpointError:
        return None  # (the save says why)
    return Paths(str(repo.root), str(repo.git_dir), str(repo.common_dir))


def _say(line: str) -> None:
    err = sys.stderr
    if err is None:  # started with stderr closed
        return
    try:
        err.write(f"git-checkpoint: {line}\n")
        err.flush()
    except (OSError, ValueError):
        pass
