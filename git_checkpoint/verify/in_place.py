"""A checkpoint verified in place: restored over the workspace (after its safety
checkpoint, as every restore), verified there, and the workspace put back from that
safety checkpoint, HEAD too. For verifiers whose Python imports the main work tree's
code from any folder (environment.py): in a temporary worktree they would test that
code, not the checkpoint's.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path

from ..config.model import Config
from ..core.errors import Refused
from ..gitcore.repo import Repo
from ..restore.run import restore_to
from ..save.capture import capture_workspace
from ..storage import journal as journals
from ..storage.commits import same_state
from ..storage.refs import Checkpoint, resolve
from .verifiers import VerifierResult


def verify_in_place(
    repo: Repo,
    config: Config,
    cp: Checkpoint,
    *,
    task: str,
    verified: Callable[[Path], list[VerifierResult]],
    progress: Callable[[str], None],
    locked: Callable[[], AbstractContextManager[None]],
) -> list[VerifierResult]:
    """`verified(folder)`'s results on `cp`, put in place over the workspace of `task`:
    under the lock throughout (`locked`), so that no save or restore comes in between. A
    Ctrl-C or a failing verifier still puts the workspace back."""
    with locked():
        head, _ = repo.head()
        try:
            there = restore_to(repo, config, task, cp, move_head=head != cp.base, kind="verify")
        except Refused as exc:
            raise Refused(
                f"{cp.name} is not verified: in a temporary worktree its verifiers would "
                f"test this work tree's code, and it cannot be put in place: {exc}"
            ) from None
        assert there.safety_checkpoint is not None
        back = resolve(repo, there.safety_checkpoint, task)
        # Said by every later command until the workspace is back, should this one be
        # killed (until now, a kill leaves the restore's own journal, or nothing done).
        journals.mark_in_place(repo, cp.name, back)
        progress(f"restored {cp.name} in place (the workspace is kept in {back.name})")
        try:
            results = verified(repo.root)
            if not same_state(repo, capture_workspace(repo, config), cp):
                progress(f"warning: the verifiers changed the workspace; evidence is for {cp.name}")
        finally:
            head, _ = repo.head()
            done = restore_to(repo, config, task, back, move_head=head != back.base, kind="verify")
            journals.clear_in_place(repo)
            progress(
                f"put back: workspace matches {back.name} "
                f"(what the verifiers left is in {done.safety_checkpoint})"
            )
    return results
