"""Whether the verifiers' environment would run the main work tree's code whatever
folder they run in: a project installed in editable mode (`pip install -e .`) puts a
`.pth` file, an import finder or an `.egg-link` naming the work tree into the
site-packages of the Python that installed it. A verifier run in a temporary worktree
then imports the main workspace, not the checkpoint it is about.

The Pythons looked at are the ones a verifier's shell finds (`python3`, `python` on
PATH, the active virtualenv), and the virtualenvs inside the work tree. Each is asked
for its site folders (one short process each); their files that point at the work tree are
read, not imported.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

# The files of a site folder that can make an import resolve elsewhere.
_POINTERS = ("*.pth", "*.egg-link", "__editable__*finder.py", "*.dist-info/direct_url.json")
_READ_MAX = 256 * 1024  # bytes of one such file (ours are a line or two)
_SITE_FOLDERS = (
    "import json, site, sys; "
    "print(json.dumps([*site.getsitepackages(), site.getusersitepackages(), *sys.path]))"
)


def imports_from(root: Path, env: dict[str, str] | None = None) -> str | None:
    """A file of the verifiers' Python environments that points into `root` (shown as
    `path: why`), or None when none does. `env`: the verifiers' environment."""
    env = dict(os.environ) if env is None else env
    top = os.path.realpath(root)
    for folder in _site_folders(Path(top), env):
        if folder == top:
            continue  # (sys.path's current folder)
        found = _pointing_into(Path(folder), top)
        if found is not None:
            return found
    return None


def _site_folders(root: Path, env: dict[str, str]) -> list[str]:
    pythons: list[str] = []
    for name in ("python3", "python"):
        found = shutil.which(name, path=env.get("PATH"))
        if found:
            pythons.append(found)
    active = env.get("VIRTUAL_ENV")
    if active:
        pythons.append(os.path.join(active, "bin", "python"))
    for cfg in [*root.glob("*/pyvenv.cfg"), *root.glob("*/*/pyvenv.cfg")]:
        pythons.append(str(cfg.parent / "bin" / "python"))
    folders: list[str] = []
    for python in dict.fromkeys(pythons):
        for folder in _asked(python, env):
            if folder not in folders:
                folders.append(folder)
    return folders


def _asked(python: str, env: dict[str, str]) -> list[str]:
    """The site folders `python` reads (its sys.path too); none when it cannot say."""
    if not os.access(python, os.X_OK):
        return []
    try:
        proc = subprocess.run(
            [python, "-c", _SITE_FOLDERS],
            env={k: v for k, v in env.items() if k != "PYTHONPATH"},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=20,
            check=False,
        )
        listed = json.loads(proc.stdout) if proc.returncode == 0 else []
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return []
    return [os.path.realpath(p) for p in listed if isinstance(p, str) and p and os.path.isdir(p)]


def _pointing_into(folder: Path, top: str) -> str | None:
    for pattern in _POINTERS:
        for path in sorted(folder.glob(pattern)):
            try:
                with open(path, "rb") as fh:
                    text = fh.read(_READ_MAX).decode("utf-8", "replace")
            except OSError:
                continue
            if _names(text, top):
                return f"{path}: names {top}"
    return None


def _names(text: str, top: str) -> bool:
    """Whether `top` appears in `text` as a path (itself, or a folder below it), also as
    a file:// URL (direct_url.json)."""
    for form in (top, "file://" + top):
        start = text.find(form)
        while start >= 0:
            end = start + len(form)
            if end == len(text) or text[end] in "/\\\"'\n\r\t ,]}":
                return True
            start = text.find(form, end)
    return False
