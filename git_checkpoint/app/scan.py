"""`git checkpoint scan [CP]`: secrets in what a checkpoint stores (exit 1 when found)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..core.text import counted
from ..save.secrets import Finding, scan_checkpoint
from ..storage.refs import resolve
from .context import Context


@dataclass(frozen=True)
class ScanResult:
    checkpoint: str
    findings: list[Finding]
    exit_code: int = field(default=0)

    def lines(self) -> list[str]:
        if not self.findings:
            return [f"no secrets found in {self.checkpoint}"]
        out = [f"{counted(len(self.findings), 'possible secret')} in {self.checkpoint}:"]
        out += [f"  {f.describe()}" for f in self.findings]
        out.append("false positives: list the path or the fingerprint under secrets.allow")
        return out


def run(ctx: Context, name: str) -> ScanResult:
    cp = resolve(ctx.repo, name, ctx.task())
    found = scan_checkpoint(ctx.repo, cp, ctx.config.secrets_allow)
    found = [Finding(f.path, f.line, f.kind, f.fingerprint, f.where) for f in found]
    return ScanResult(cp.name, found, 1 if found else 0)
