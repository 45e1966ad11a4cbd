"""`git checkpoint evidence [COMMIT]`: the verifier evidence of the checkpoints that hold a
commit's tree, found by tree, so that it survives a rebase or a squash to the same tree."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.errors import UsageError
from ..core.text import printable
from ..verify.evidence import CheckpointEvidence, evidence_for_tree
from .context import Context


@dataclass(frozen=True)
class EvidenceResult:
    commit: str
    tree: str
    checkpoints: list[CheckpointEvidence]  # every one holding the tree, verified or not
    exit_code: int = field(default=0)  # 1: none of them has verifier evidence

    def lines(self) -> list[str]:
        commit, tree = self.commit[:12], self.tree[:12]
        verified = [c for c in self.checkpoints if c.verified]
        if not self.checkpoints:
            return [f"no evidence for {commit}: no checkpoint holds its tree {tree}"]
        if not verified:
            names = " and ".join(c.checkpoint for c in self.checkpoints)
            return [f"no evidence for {commit}: its tree {tree} is {names}'s, never verified"]
        out = [f"evidence for {commit} (tree {tree}):"]
        for found in verified:
            out += found.lines()
        return out


def evidence(ctx: Context, commit: str = "HEAD") -> EvidenceResult:
    """The evidence for `commit` (any name git resolves to a commit)."""
    repo = ctx.repo
    argv = ["rev-parse", "-q", "--verify", "--end-of-options", f"{commit}^{{commit}}"]
    found = repo.run(argv, check=False)
    oid = found.stdout.decode("ascii", "replace").strip() if found.returncode == 0 else ""
    if not oid:
        raise UsageError(f"not a commit: {printable(commit, 80)!r}")
    tree = repo.git("rev-parse", f"{oid}^{{tree}}").decode("ascii").strip()
    checkpoints = evidence_for_tree(repo, tree)
    verified = any(c.verified for c in checkpoints)
    return EvidenceResult(oid, tree, checkpoints, 0 if verified else 1)
