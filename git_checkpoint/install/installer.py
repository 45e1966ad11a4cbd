"""Which installer put this copy of the tool in place (pip into an environment, pipx, uv
tool, install.sh), and the commands that add an extra or reinstall it in that installer's
own words: a hint that names another installer's command changes nothing the user runs.
"""

from __future__ import annotations

import json
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

DIST = "git-agent-checkpoint"  # the distribution's name (`git-checkpoint` is another project)
# install.sh writes this file into its virtual environment: the clone it installed from.
INSTALL_SH_RECEIPT = "install.sh-receipt"


@dataclass(frozen=True)
class Installation:
    kind: str  # pip | pipx | uv tool | install.sh
    prefix: Path  # the environment the tool runs in
    python: str  # its interpreter
    name: str  # the pipx venv's or uv tool's name, which their commands take
    source: str | None  # the folder it was installed from, when not a package index


def detect(prefix: Path | None = None) -> Installation:
    """Read the installer from the environment: pipx and uv leave a receipt in the
    environment they make (and keep them under `…/pipx/venvs/` and `…/uv/tools/`)."""
    python = sys.executable if prefix is None else str(prefix / "bin" / "python")
    prefix = _environment() if prefix is None else prefix
    if (prefix / "pipx_metadata.json").is_file() or _under(prefix, ("pipx", ".pipx"), "venvs"):
        kind = "pipx"
    elif (prefix / "uv-receipt.toml").is_file() or _under(prefix, ("uv",), "tools"):
        kind = "uv tool"
    elif (prefix / INSTALL_SH_RECEIPT).is_file():
        kind = "install.sh"
    else:
        kind = "pip"
    return Installation(kind, prefix, python, prefix.name, _source(prefix, kind))


def _environment() -> Path:
    """This process's environment. install.sh's launchers start the venv's Python with -S,
    and without the site module sys.prefix stays the base Python's: the venv is the folder
    above the interpreter's (unresolved) bin/ that holds pyvenv.cfg."""
    above = Path(sys.executable).parent.parent
    return above if (above / "pyvenv.cfg").is_file() else Path(sys.prefix)


def _under(prefix: Path, homes: tuple[str, ...], folder: str) -> bool:
    return prefix.parent.name == folder and prefix.parent.parent.name in homes


def _source(prefix: Path, kind: str) -> str | None:
    if kind == "install.sh":
        try:
            return (prefix / INSTALL_SH_RECEIPT).read_text(encoding="utf-8").strip() or None
        except OSError:
            return None
    from importlib import metadata
    from urllib.parse import unquote, urlsplit

    try:  # PEP 610: pip and uv record where a package not from an index came from
        raw = metadata.distribution(DIST).read_text("direct_url.json")
        url = urlsplit(str(json.loads(raw or "{}").get("url", "")))
    except (metadata.PackageNotFoundError, ValueError, AttributeError):
        return None
    return unquote(url.path) if url.scheme == "file" and url.path else None


def requirement(extra: str) -> str:
    """What the extra brings, as the installed metadata pins it (`mcp>=2,<3`)."""
    from importlib import metadata

    try:
        requires = metadata.requires(DIST) or []
    except metadata.PackageNotFoundError:
        requires = []
    for line in requires:
        spec, _, marker = line.partition(";")
        if marker.replace(" ", "").replace("'", '"') == f'extra=="{extra}"':
            return spec.strip()
    return extra


def extra_hint(extra: str, found: Installation | None = None) -> str:
    """The command that adds an optional extra (`mcp`) to this installation."""
    found = detect() if found is None else found
    packages = shlex.quote(requirement(extra))
    if found.kind == "pipx":
        return f"pipx inject {shlex.quote(found.name)} {packages}"
    if found.kind == "uv tool":
        return f"uv tool install --with {packages} {shlex.quote(found.source or DIST)}"
    return f"{shlex.quote(found.python)} -m pip install {shlex.quote(f'{DIST}[{extra}]')}"


def reinstall_hint(found: Installation | None = None) -> str:
    """The command that puts this installation back whole."""
    found = detect() if found is None else found
    source = shlex.quote(found.source or DIST)
    if found.kind == "pipx":
        return f"reinstall it: pipx reinstall {shlex.quote(found.name)}"
    if found.kind == "uv tool":
        return f"reinstall it: uv tool install --reinstall {source}"
    if found.kind == "install.sh":
        where = f" in {shlex.quote(found.source)}" if found.source else ""
        return f"run ./install.sh again{where}"
    return f"reinstall it: {shlex.quote(found.python)} -m pip install --force-reinstall {source}"
