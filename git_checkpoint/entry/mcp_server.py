"""`git checkpoint mcp`: the commands as Model Context Protocol tools over stdio.

A second boundary beside the command line: each tool calls the function the command
calls (the Python API's, where it has one) and answers the object `--json` prints, under
an output schema derived from the result's dataclass; every failure, a bad argument
included, is a tool error carrying the exit code (mcp_calls.py). Tools run on the
server's main thread (one request at a time, as a stdio client sends them), so the
signal handling of `verify` works as it does on the command line.
"""

from __future__ import annotations

import os
from typing import Annotated, Any

from mcp.server.mcpserver import Context as ToolContext
from mcp.server.mcpserver import MCPServer, Resolve
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, InputRequiredResult, ListRootsResult, ToolAnnotations
from pydantic import BaseModel, Field

from .. import __version__, api
from ..app import bisect as bisect_cmd
from ..app import drop as drop_cmd
from ..app import evidence as evidence_cmd
from ..app import fetch as fetch_cmd
from ..app import log as log_cmd
from ..app import push as push_cmd
from ..app import scan as scan_cmd
from ..app import task as task_cmd
from ..app.bisect import BisectResult
from ..app.diff import DiffResult
from ..app.drop import DropResult
from ..app.evidence import EvidenceResult
from ..app.fetch import FetchResult
from ..app.list import ListResult, SessionsResult
from ..app.log import LogResult
from ..app.promote import PromoteResult
from ..app.push import PushResult
from ..app.resume import ResumeBrief
from ..app.review import ReviewResult
from ..app.save import SaveResult
from ..app.scan import ScanResult
from ..app.show import ShowResult
from ..app.status import StatusResult
from ..app.task import TaskSetResult
from ..app.verify import VerifyResult
from ..core.errors import UsageError
from ..restore.report import RestoreReport
from .mcp_calls import answer, checked, client_roots, context, failure, progress, strict_arguments
from .mcp_calls import where as folder

INSTRUCTIONS = """\
Checkpoints of a git workspace. Save before a risky change (save), check your work
(verify), go back when an attempt fails (restore: a dry run unless dry_run is false;
undo reverses the last restore), and read where the task stands (status, resume).
Every tool answers the object `git checkpoint <command> --json` prints; exit_code 1 in
an answer is a "no" (a verifier failed, a secret was found), not an error. Every tool
takes `repo`, a folder of the work tree; without it, the client's one root that is a git
work tree, else the server's current folder. An error is a tool error whose text is
{"error", "exit_code", "meaning"}.
"""

# Filled by the SDK from the client's roots (client_roots), never by the caller.
Roots = Annotated[ListRootsResult | None, Resolve(client_roots)]
Folder = Annotated[
    str | None,
    Field(
        description="A folder of the repository's work tree (relative: to the server's "
        "folder). Default: the client's one root that is a git work tree, else the "
        "server's current folder."
    ),
]
TaskName = Annotated[str | None, Field(description="Task name (default: the current branch).")]
Named = Annotated[
    str | None,
    Field(
        description="A checkpoint: cp_003 (current task), task/cp_003, remote/task/cp_003, "
        "a ref, a commit, @ (the latest) or @~1 (default: the latest)."
    ),
]
Text = Annotated[str | None, Field(description="Kept in the task record.")]

# Tools are async on purpose: the SDK runs a sync tool on a worker thread, where `verify`
# could not install its signal handlers. A stdio client waits for each answer anyway.


async def save_tool(
    *,
    roots: Roots,
    message: Annotated[str, Field(description="What this checkpoint is for.")] = "",
    task: TaskName = None,
    hypothesis: Text = None,
    next_move: Text = None,
    include: Annotated[
        list[str] | None,
        Field(description="Also capture these paths, even when ignored (from the top)."),
    ] = None,
    repo: Folder = None,
) -> Annotated[CallToolResult, SaveResult]:
    """Save the workspace as the task's next checkpoint (`created` is false, and nothing
    is written, when it equals the task's latest)."""
    return answer(
        lambda: api.save(
            folder(repo, roots),
            message=message,
            task=task,
            hypothesis=hypothesis,
            next_move=next_move,
            include=include or (),
        )
    )


async def list_tool(
    *,
    roots: Roots,
    task: TaskName = None,
    all_tasks: Annotated[bool, Field(description="Every local task.")] = False,
    remote: Annotated[str | None, Field(description="Checkpoints fetched from it.")] = None,
    session: Annotated[str | None, Field(description="Only this agent session's.")] = None,
    repo: Folder = None,
) -> Annotated[CallToolResult, ListResult]:
    """List checkpoints, oldest first: id, age, status, verifier summary, overlay, message."""
    return answer(
        lambda: api.list_checkpoints(
            repo=folder(repo, roots),
            task=task,
            all_tasks=all_tasks,
            remote=remote,
            session=session,
        )
    )


async def list_sessions_tool(
    *, roots: Roots, repo: Folder = None
) -> Annotated[CallToolResult, SessionsResult]:
    """The agent sessions the hooks recorded here, with their turns (`list --sessions`)."""
    return answer(lambda: api.list_sessions(repo=folder(repo, roots)))


async def show_tool(
    *,
    roots: Roots,
    checkpoint: Named = None,
    manifest: Annotated[bool, Field(description="Only the manifest.")] = False,
    patch: Annotated[bool, Field(description="Include the patch against the base.")] = False,
    repo: Folder = None,
) -> Annotated[CallToolResult, ShowResult]:
    """Show a checkpoint: manifest, status, verifier events, diffstat, overlay files."""
    return answer(
        lambda: api.show(
            checkpoint or "@", repo=folder(repo, roots), manifest_only=manifest, patch=patch
        )
    )


async def diff_tool(
    *,
    roots: Roots,
    checkpoint: Named = None,
    other: Annotated[str | None, Field(description="A second checkpoint.")] = None,
    stat: Annotated[bool, Field(description="A diffstat instead of the patch.")] = False,
    name_only: Annotated[bool, Field(description="Only the changed files' names.")] = False,
    repo: Folder = None,
) -> Annotated[CallToolResult, DiffResult]:
    """Diff a checkpoint (default: the latest) against the workspace, or two checkpoints."""
    return answer(
        lambda: api.diff(
            checkpoint, other, repo=folder(repo, roots), stat=stat, name_only=name_only
        )
    )


async def restore_tool(
    *,
    roots: Roots,
    checkpoint: Named = None,
    dry_run: Annotated[
        bool, Field(description="Only say what would be written and removed (the default).")
    ] = True,
    move_head: Annotated[bool, Field(description="Move the branch back to its base.")] = False,
    keep_head: Annotated[bool, Field(description="Restore over the current HEAD.")] = False,
    before_turn: Annotated[
        int | None,
        Field(ge=1, description="The workspace as it was before prompt N of an agent session."),
    ] = None,
    session: Annotated[str | None, Field(description="With before_turn: the session.")] = None,
    paths: Annotated[
        list[str] | None,
        Field(description="Only these files or folders (from the top of the work tree)."),
    ] = None,
    repo: Folder = None,
) -> Annotated[CallToolResult, RestoreReport]:
    """Make the workspace equal to a checkpoint (default: the latest), or only some of its
    paths. A dry run unless dry_run is false (its answer says would_bring_back and
    would_remove); a real restore takes a safety checkpoint first, which undo goes back to."""
    return answer(
        lambda: api.restore(
            checkpoint,
            repo=folder(repo, roots),
            dry_run=dry_run,
            move_head=move_head,
            keep_head=keep_head,
            before_turn=before_turn,
            session=session,
            paths=paths or (),
        )
    )


async def undo_tool(
    *,
    roots: Roots,
    task: Annotated[str | None, Field(description="Undo this task's last restore.")] = None,
    move_head: Annotated[bool, Field(description="Move the branch back too.")] = False,
    keep_head: Annotated[bool, Field(description="Restore over the current HEAD.")] = False,
    repo: Folder = None,
) -> Annotated[CallToolResult, RestoreReport]:
    """Undo the last restore made in this worktree: restore its safety checkpoint."""
    return answer(
        lambda: api.undo(
            repo=folder(repo, roots), task=task, move_head=move_head, keep_head=keep_head
        )
    )


async def verify_tool(
    *,
    roots: Roots,
    checkpoint: Annotated[
        str | None, Field(description="A checkpoint (default: the workspace, saved first).")
    ] = None,
    verifiers: Annotated[list[str] | None, Field(description="Only these verifiers.")] = None,
    repo: Folder = None,
) -> Annotated[CallToolResult, VerifyResult]:
    """Run the verifiers (all, or those named) on the workspace (saved first) or on a
    checkpoint in a temporary worktree; promote or reject by the rule. exit_code 1 in
    the answer: a required verifier failed."""
    return answer(
        lambda: api.verify(
            checkpoint,
            repo=folder(repo, roots),
            verifiers=verifiers or (),
            progress=progress,
            handle_signals=True,
        )
    )


async def promote_tool(
    *,
    roots: Roots,
    checkpoint: Annotated[str, Field(description="The checkpoint to promote.")],
    force: Annotated[bool, Field(description="Without passing evidence.")] = False,
    reason: Annotated[str | None, Field(description="Why (required with force).")] = None,
    repo: Folder = None,
) -> Annotated[CallToolResult, PromoteResult]:
    """Promote a checkpoint on its passing evidence; force (with a reason) records that
    it was forced, and why."""
    return answer(
        lambda: api.promote(checkpoint, repo=folder(repo, roots), force=force, reason=reason)
    )


async def status_tool(
    *, roots: Roots, task: TaskName = None, repo: Folder = None
) -> Annotated[CallToolResult, StatusResult]:
    """Task, latest and last good checkpoint, drift since the latest, verifier results."""
    return answer(lambda: api.status(repo=folder(repo, roots), task=task))


async def resume_tool(
    *, roots: Roots, task: TaskName = None, repo: Folder = None
) -> Annotated[CallToolResult, ResumeBrief]:
    """The task record as a brief: last failing verifier, hypothesis, next safe move."""
    return answer(lambda: api.resume(repo=folder(repo, roots), task=task))


async def review_tool(
    *,
    roots: Roots,
    task: Annotated[str | None, Field(description="TASK or REMOTE/TASK.")] = None,
    repo: Folder = None,
) -> Annotated[CallToolResult, ReviewResult]:
    """A task's timeline for a reviewer (default: the current task): attempts, statuses,
    verifier evidence from every machine, diffstats."""
    return answer(lambda: api.review(task, repo=folder(repo, roots)))


async def log_tool(
    *,
    roots: Roots,
    limit: Annotated[int | None, Field(ge=1, description="At most this many entries.")] = None,
    repo: Folder = None,
) -> Annotated[CallToolResult, LogResult]:
    """The operation log, newest first."""
    return answer(lambda: log_cmd.run(context(folder(repo, roots)), limit=limit))


async def task_set_tool(
    *,
    roots: Roots,
    task: TaskName = None,
    hypothesis: Annotated[str | None, Field(description="The current hypothesis.")] = None,
    next_move: Annotated[str | None, Field(description="The next safe move.")] = None,
    repo: Folder = None,
) -> Annotated[CallToolResult, TaskSetResult]:
    """Record the hypothesis and/or the next safe move in the task record (`task set`);
    a restore never rewinds them."""

    def run() -> task_cmd.TaskSetResult:
        if hypothesis is None and next_move is None:
            raise UsageError("task_set: give hypothesis and/or next_move")
        ctx = context(folder(repo, roots))
        return task_cmd.run(ctx, task=task, hypothesis=hypothesis, next_move=next_move)

    return answer(run)


async def drop_tool(
    *,
    roots: Roots,
    checkpoints: Annotated[list[str], Field(min_length=1, description="The checkpoints.")],
    repo: Folder = None,
) -> Annotated[CallToolResult, DropResult]:
    """Delete checkpoints (the answer says how each can be brought back)."""
    return answer(lambda: drop_cmd.run(context(folder(repo, roots)), list(checkpoints)))


async def scan_tool(
    *, roots: Roots, checkpoint: Named = None, repo: Folder = None
) -> Annotated[CallToolResult, ScanResult]:
    """Scan what a checkpoint stores for secrets; exit_code 1 in the answer: found some."""
    return answer(lambda: scan_cmd.run(context(folder(repo, roots)), checkpoint or "@"))


async def push_tool(
    *,
    roots: Roots,
    remote: Annotated[str, Field(description="The remote.")] = "origin",
    checkpoints: Annotated[list[str] | None, Field(description="Only these.")] = None,
    tasks: Annotated[list[str] | None, Field(description="These tasks' checkpoints.")] = None,
    all_tasks: Annotated[bool, Field(description="Every local task.")] = False,
    as_name: Annotated[str | None, Field(description="The task's name on the remote.")] = None,
    allow_secrets: Annotated[bool, Field(description="Push despite the scan.")] = False,
    repo: Folder = None,
) -> Annotated[CallToolResult, PushResult]:
    """Push checkpoints and their notes (default: the current task's) with git's own
    push; never overwrites a checkpoint on the remote, refuses (exit 3) on secrets."""
    return answer(
        lambda: push_cmd.run(
            context(folder(repo, roots)),
            remote,
            names=tuple(checkpoints or ()),
            tasks=tuple(tasks or ()),
            all_tasks=all_tasks,
            as_name=as_name,
            allow_secrets=allow_secrets,
            progress=progress,
        )
    )


async def fetch_tool(
    *,
    roots: Roots,
    remote: Annotated[str, Field(description="The remote.")] = "origin",
    prune: Annotated[bool, Field(description="Drop those the remote no longer has.")] = False,
    repo: Folder = None,
) -> Annotated[CallToolResult, FetchResult]:
    """Fetch a remote's checkpoints into REMOTE/<task>/cp_NNN and merge their notes."""
    return answer(
        lambda: fetch_cmd.run(context(folder(repo, roots)), remote, progress=progress, prune=prune)
    )


async def evidence_tool(
    *,
    roots: Roots,
    commit: Annotated[str, Field(description="A commit (default: HEAD).")] = "HEAD",
    repo: Folder = None,
) -> Annotated[CallToolResult, EvidenceResult]:
    """The verifier evidence for a commit's tree, found by tree (it survives a rebase or
    a squash); exit_code 1 in the answer: none."""
    return answer(lambda: evidence_cmd.evidence(context(folder(repo, roots)), commit))


async def bisect_tool(
    *,
    roots: Roots,
    good: Annotated[str | None, Field(description="A checkpoint that passed.")] = None,
    bad: Annotated[str | None, Field(description="A checkpoint that failed.")] = None,
    verifier: Annotated[str | None, Field(description="The verifier to follow.")] = None,
    task: TaskName = None,
    repo: Folder = None,
) -> Annotated[CallToolResult, BisectResult]:
    """The first checkpoint of a task where a verifier started failing (recorded results
    reused, the others verified in temporary worktrees); exit_code 1 in the answer: none."""
    return answer(
        lambda: bisect_cmd.bisect(
            context(folder(repo, roots)), good, bad, verifier=verifier, task=task, progress=progress
        )
    )


READ_ONLY = ToolAnnotations(read_only_hint=True)
TOOLS: dict[str, tuple[Any, ToolAnnotations | None]] = {
    "save": (save_tool, None),
    "list": (list_tool, READ_ONLY),
    "list_sessions": (list_sessions_tool, READ_ONLY),
    "show": (show_tool, READ_ONLY),
    "diff": (diff_tool, READ_ONLY),
    "restore": (restore_tool, None),
    "undo": (undo_tool, None),
    "verify": (verify_tool, None),
    "promote": (promote_tool, None),
    "status": (status_tool, READ_ONLY),
    "resume": (resume_tool, READ_ONLY),
    "review": (review_tool, READ_ONLY),
    "log": (log_tool, READ_ONLY),
    "task_set": (task_set_tool, None),
    "drop": (drop_tool, None),
    "scan": (scan_tool, READ_ONLY),
    "push": (push_tool, None),
    "fetch": (fetch_tool, None),
    "evidence": (evidence_tool, READ_ONLY),
    "bisect": (bisect_tool, None),
}


class CheckpointServer(MCPServer[Any]):
    """The SDK's server, with each call's arguments checked against the schema its tool
    publishes before the SDK sees them: a bad one is answered with the error object."""

    def __init__(self) -> None:
        tools = [
            Tool.from_function(fn, name=name, annotations=notes)
            for name, (fn, notes) in TOOLS.items()
        ]
        self.arguments: dict[str, type[BaseModel]] = {t.name: strict_arguments(t) for t in tools}
        published = [
            t.model_copy(update={"parameters": self.arguments[t.name].model_json_schema()})
            for t in tools
        ]
        super().__init__(
            name="git-checkpoint",
            version=__version__,
            instructions=INSTRUCTIONS,
            log_level="WARNING",
            tools=published,
        )

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: ToolContext[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        model = self.arguments.get(name)
        if model is None:
            return failure(f"unknown tool {name!r} (tools: {', '.join(self.arguments)})", 2)
        problem = checked(name, model, arguments)
        if problem is not None:
            return failure(problem, 2)
        return await super().call_tool(name, arguments, context)


def build_server() -> CheckpointServer:
    """The server with every tool registered (the `mcp` extra must be installed)."""
    return CheckpointServer()


def serve() -> None:
    # The agent's terminal is the user's: a git asking there for a password would hold
    # the tool call for ever, seen by nobody. A remote that wants one fails at once
    # (a credential helper or an ssh agent answers without asking).
    os.environ["GIT_TERMINAL_PROMPT"] = "0"
    os.environ["GCM_INTERACTIVE"] = "never"
    build_server().run("stdio")
