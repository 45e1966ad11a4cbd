"""`git checkpoint doctor`: check the setup, then a real save/restore/undo round trip in
a temporary worktree (doctor/)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..config.model import Config
from ..doctor import checks
from ..doctor.checks import Check
from ..doctor.roundtrip import round_trip
from ..gitcore.repo import Repo


@dataclass(frozen=True)
class DoctorResult:
    checks: list[Check]
    exit_code: int = field(default=0)

    def lines(self) -> list[str]:
        out = [c.line() for c in self.checks]
        failed = sum(c.status == "fail" for c in self.checks)
        out.append(f"{failed} problem{'s' if failed != 1 else ''} found" if failed else "all good")
        return out


def run() -> DoctorResult:
    repo = Repo.discover()
    found = [checks.check_git(repo), checks.check_pygit2()]
    config_check, config = checks.check_config(repo)
    found += [config_check, checks.check_install(), checks.check_hooks()]
    found.append(checks.check_sharing(repo))
    found += checks.check_leftovers(repo)
    found.append(round_trip(repo, config or Config()))
    failed = any(c.status == "fail" for c in found)
    return DoctorResult(found, 1 if failed else 0)
