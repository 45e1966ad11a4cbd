"""What a project configures, and its defaults (design.md §6): `Config` and its parts,
as parse.py reads them from `.checkpoint.yaml` and `git config checkpoint.*`."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field, replace

from ..core.errors import UsageError

CONFIG_NAME = ".checkpoint.yaml"

# Dependency trees and tool caches by their names; a virtualenv (pyvenv.cfg), a folder
# marked with CACHEDIR.TAG and compiled Python in __pycache__/ are recognised by what
# they hold (save/overlay.py). Never a folder of source by its name alone: a file git
# does not ignore below a build/, dist/ or target/ folder is work.
DEFAULT_EXCLUDE = (
    "node_modules/",
    ".tox/",
    ".mypy_cache/",
    ".pytest_cache/",
)

# Untracked files that look like secrets are never captured, never touched, unless
# `secrets.allow` names them. Matched without regard to case; a pattern with a `/` matches
# the end of the path, any other the file name. README.md lists them: keep the two equal.
SECRET_PATTERNS = (
    # environment and tool credentials
    ".env*",
    "*.env",
    ".netrc",
    "_netrc",
    ".pgpass",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".htpasswd",
    ".dockercfg",
    ".aws/credentials",
    ".docker/config.json",
    ".kube/config",
    "credentials.json",
    "client_secret*.json",
    "*service?account*.json",
    "*serviceaccount*.json",
    "secrets.y*ml",
    "secrets.json",
    "secrets.toml",
    # keys, certificates and key stores
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.jks",
    "*.keystore",
    "*.kdbx",
    "*.ppk",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
)

# Templates of secret files are saved: `.env.example` holds the names, not the values.
SECRET_TEMPLATES = ("*.example", "*.sample", "*.template", "*.tmpl", "*.dist", ".env.defaults")

PROMOTION_RULES = ("all_required_pass", "all_pass")
OVERLAY_ON_EXCEED = ("leave_out", "refuse")


@dataclass(frozen=True)
class Verifier:
    """A test command whose exit status is evidence about a checkpoint (`verifiers:`)."""

    name: str
    command: str
    required: bool = True
    timeout: float = 600.0


@dataclass(frozen=True)
class Retention:
    """Which checkpoints `prune` keeps (`retention:`)."""

    keep_last: int = 20
    max_age_seconds: int = 14 * 86400
    keep_promoted: bool = True
    keep_safety: int = 10
    auto: bool = False  # prune the task after each save


@dataclass(frozen=True)
class Config:
    """`.checkpoint.yaml` as parsed, with the defaults for what it leaves out."""

    include: tuple[str, ...] = ()
    # Some includes are one command's (`save --include P`), not the configuration's:
    # what that save keeps for the quick check would not hold for the next one.
    one_off_include: bool = False
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    verifiers: tuple[Verifier, ...] = ()
    promotion_rule: str = "all_required_pass"
    retention: Retention = field(default_factory=Retention)
    overlay_max_bytes: int = 50 * 1024 * 1024
    overlay_max_files: int = 5000
    overlay_on_exceed: str = "leave_out"  # or "refuse": the save refuses past a limit
    secrets_on_save: str = "warn"
    secrets_on_push: str = "block"
    secrets_allow: tuple[str, ...] = ()
    risky_commands: tuple[str, ...] = ()
    harmless_commands: tuple[str, ...] = ()
    lock_timeout: float = 30.0
    task_prefix: str = ""  # put before task names on push: one machine's names in a fleet
    source: str | None = None  # the file read, if any

    def counts_for_promotion(self, verifier: Verifier) -> bool:
        return verifier.required or self.promotion_rule == "all_pass"

    def with_include(self, extra: tuple[str, ...]) -> Config:
        for path in extra:
            problem = include_problem(path)
            if problem:
                raise UsageError(f"--include {path}: {problem}")
        return replace(self, include=self.include + tuple(extra), one_off_include=bool(extra))


def include_problem(path: str) -> str | None:
    """Why an include path is unusable, or None: includes stay inside the work tree."""
    import posixpath

    if not path.strip():
        return "empty path"
    if path.startswith("/"):
        return "use a path relative to the repository root"
    normal = posixpath.normpath(path)
    if normal == ".." or normal.startswith("../"):
        return "outside the repository"
    if normal.split("/")[0].lower() == ".git":
        return "inside .git"
    return None


# Sizes (`50 MiB`) and ages (`14d`), in the file and in `git config`.
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(B|KB|KiB|MB|MiB|GB|GiB)?\s*$", re.IGNORECASE)
_SIZE_UNITS = {
    "b": 1,
    "kb": 1000,
    "kib": 1024,
    "mb": 1000**2,
    "mib": 1024**2,
    "gb": 1000**3,
    "gib": 1024**3,
}
_AGE = re.compile(r"^\s*(\d+)\s*([smhdw])\s*$")
_AGE_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_size(text: str) -> int | None:
    m = _SIZE.match(text)
    if not m:
        return None
    size = float(m.group(1)) * _SIZE_UNITS[(m.group(2) or "b").lower()]
    return int(size) if math.isfinite(size) else None  # 400 nines is no size either


def parse_age(text: str) -> int | None:
    m = _AGE.match(text)
    return int(m.group(1)) * _AGE_UNITS[m.group(2)] if m else None
