"""`git checkpoint diff [CP] [CP2]`: a checkpoint against the workspace, or two
checkpoints; the overlay is part of both sides.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..core.errors import UsageError
from ..core.text import quote_path
from ..save.capture import capture_workspace
from ..storage.commits import combined_tree, managed_tree
from ..storage.refs import resolve
from .context import Context


@dataclass(frozen=True)
class ChangedFile:
    status: str  # git's letter: A, D, M, T
    path: str


@dataclass(frozen=True)
class DiffResult:
    source: str
    target: str
    files: list[ChangedFile]
    patch: str  # the patch, or with --stat the diffstat; empty with --name-only
    form: str = "patch"  # patch | stat | name-only

    def lines(self) -> list[str]:
        if not self.files:
            return [f"no differences between {self.source} and {self.target}"]
        if self.form == "name-only":
            return [quote_path(f.path) for f in self.files]
        return self.patch.rstrip("\n").splitlines()


def run(
    ctx: Context,
    first: str | None,
    second: str | None,
    *,
    color: bool,
    stat: bool = False,
    name_only: bool = False,
) -> DiffResult:
    if stat and name_only:
        raise UsageError("--stat and --name-only exclude each other")
    repo = ctx.repo
    task = ctx.task()
    source_cp = resolve(repo, first or "@", task)
    source = managed_tree(repo, source_cp)
    if second is not None:
        target_cp = resolve(repo, second, task)
        target, target_name = managed_tree(repo, target_cp), target_cp.name
    else:
        snap = capture_workspace(repo, ctx.config, allow_unmerged=True)
        target, target_name = (
            combined_tree(repo, snap.worktree_tree, snap.overlay_tree),
            "workspace",
        )
    names = repo.git("diff", "--no-renames", "--name-status", "-z", source, target)
    fields = [f for f in names.decode("utf-8", "surrogateescape").split("\0") if f]
    files = [ChangedFile(fields[i], fields[i + 1]) for i in range(0, len(fields) - 1, 2)]
    form = "stat" if stat else "name-only" if name_only else "patch"
    patch = ""
    if form != "name-only" and files:
        shape = ["--stat=100"] if stat else []
        patch = repo.git(
            "diff",
            "--no-renames",
            *shape,
            "--color=always" if color else "--no-color",
            source,
            target,
        ).decode("utf-8", "replace")
    return DiffResult(
        source=source_cp.name, target=target_name, files=files, patch=patch, form=form
    )
