"""Files that `hooks install` writes into, and the record that lets `hooks uninstall` put
each one back byte for byte: the bytes it had before (or that it did not exist, and
which folders install created), and a digest of what install left there.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..core.errors import UsageError


@dataclass(frozen=True)
class FileRecord:
    path: str
    before: bytes | None  # None: the file did not exist
    after_sha256: str
    created_dirs: tuple[str, ...]  # outermost first

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "before": None if self.before is None else base64.b64encode(self.before).decode(),
            "after_sha256": self.after_sha256,
            "created_dirs": list(self.created_dirs),
        }


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None


def load_record(record_path: Path) -> FileRecord | None:
    try:
        raw = json.loads(record_path.read_text(encoding="utf-8"))
        before = raw["before"]
        return FileRecord(
            path=str(raw["path"]),
            before=None if before is None else base64.b64decode(before),
            after_sha256=str(raw["after_sha256"]),
            created_dirs=tuple(str(d) for d in raw.get("created_dirs", [])),
        )
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"unreadable install record {record_path}: {exc}") from None


def save_record(record_path: Path, record: FileRecord) -> None:
    record_path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(record_path, (json.dumps(record.to_json(), indent=2) + "\n").encode())


def make_parents(path: Path) -> tuple[str, ...]:
    """Create the missing folders above `path`; return them, outermost first."""
    missing: list[Path] = []
    parent = path.parent
    while not parent.exists():
        missing.append(parent)
        parent = parent.parent
    for folder in reversed(missing):
        folder.mkdir()
    return tuple(str(f) for f in reversed(missing))


def remove_created_dirs(created: tuple[str, ...]) -> None:
    """Remove the folders install created, innermost first, when they are empty again."""
    for folder in reversed(created):
        try:
            os.rmdir(folder)
        except OSError:
            return  # not empty: something else lives there now; leave it and its parents


def write_atomic(path: Path, data: bytes) -> None:
    """Write through a temporary file and a rename, keeping the file's mode; a symlinked
    settings file (dotfiles) is written where it points, the link kept.
    """
    target = Path(os.path.realpath(path))
    try:
        mode: int | None = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = None
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        if mode is None:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def put_back(path: Path, record: FileRecord) -> None:
    """Make `path` what it was before install: its old bytes, or gone with its folders."""
    if record.before is None:
        with contextlib.suppress(OSError):
            os.unlink(path)
        remove_created_dirs(record.created_dirs)
    else:
        write_atomic(path, record.before)


# A settings file of this clone alone (Claude Code's settings.local.json) must stay out
# of git's sight: as an untracked file it would be captured in every checkpoint's
# overlay, pushed with them, and removed by restoring a checkpoint older than it.
EXCLUDE_NOTE = "# git checkpoint hooks install --local: settings of this clone only"


def _exclude_lines(exclude_file: Path) -> list[str]:
    try:
        return exclude_file.read_text(encoding="utf-8", errors="surrogateescape").splitlines()
    except FileNotFoundError:
        return []


def is_excluded(exclude_file: Path, rel: str) -> bool:
    """Whether `exclude_file` (a repository's info/exclude) has the line for `rel`."""
    wanted = {rel.lstrip("/"), "/" + rel.lstrip("/")}
    return any(line.rstrip() in wanted for line in _exclude_lines(exclude_file))


def exclude_locally(exclude_file: Path, rel: str) -> bool:
    """Add `/rel` (a path from the work-tree root) to `exclude_file`, the repository's own
    unshared ignore file; False when a line for it is there already."""
    if is_excluded(exclude_file, rel):
        return False
    exclude_file.parent.mkdir(parents=True, exist_ok=True)
    try:
        old = exclude_file.read_bytes()
    except FileNotFoundError:
        old = b""
    lead = b"\n" if old and not old.endswith(b"\n") else b""
    addition = f"{EXCLUDE_NOTE}\n/{rel.lstrip('/')}\n".encode()
    with open(exclude_file, "ab") as fh:
        fh.write(lead + addition)
    return True
