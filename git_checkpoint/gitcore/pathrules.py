"""The paths git itself refuses to put in an index or check out: what every checkpoint
from elsewhere is checked against before anything is written. Standard library only."""

from __future__ import annotations


def _ntfs_dotgit(part: str) -> bool:
    """git's `is_ntfs_dotgit` (core.protectNTFS, on by default everywhere): `.git` or
    `git~1`, any case, followed only by spaces and dots up to a `\\`, `:` or the end.
    """
    for sep in ("\\", ":"):
        part = part.split(sep, 1)[0]
    low = part.lower()
    return any(
        low.startswith(name) and not low[len(name) :].strip(" .") for name in (".git", "git~1")
    )


def git_refuses_path(path: str, *, symlink: bool = False) -> bool:
    """True for a path git itself will not put in an index or check out on this platform
    (read-cache.c `verify_path` on POSIX): absolute, empty, `.` or `..` components, a NUL,
    a `.git` in any NTFS disguise, or a symlink named `.gitmodules`. A backslash is an
    ordinary character here, as it is to git on Linux.
    """
    if not path or path.startswith("/") or path.endswith("/") or "\0" in path:
        return True
    parts = path.split("/")
    if any(p in ("", ".", "..") or _ntfs_dotgit(p) for p in parts):
        return True
    last = parts[-1].lower().rstrip(" .")
    return symlink and (last == ".gitmodules" or last.startswith("gitmod~"))
