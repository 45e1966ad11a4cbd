"""Git hooks: the templates in `templates/git/` (package data, so every installer ships
them; the repository's top-level `hooks/` is a link to `templates/`), installed into the
folder git runs hooks from (`git rev-parse --git-path hooks`, so `core.hooksPath` is
respected) and chained with a hook already there, which moves aside to
`<hook>.checkpoint-legacy` and keeps running. Uninstall moves it back: same bytes, same
mode, same file.

Only hooks that run before git changes the work tree are worth it: `pre-rebase`,
`pre-merge-commit`, and `pre-push` (for pushing checkpoints with the branch). Not
`reference-transaction` or `post-checkout`: `git reset --hard` and `git checkout`
write the work tree before they update a ref, so those hooks see the work already gone.
With `--trailers`, also `prepare-commit-msg`: the Checkpoint and Verified-by trailers of
a commit whose tree has verifier evidence. It stays until uninstalled.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..core.errors import Refused, UsageError
from ..gitcore.repo import Repo
from ..storage.refs import task_from_branch
from . import hook_files, installer

GIT_HOOKS = ("pre-rebase", "pre-merge-commit", "pre-push")
TRAILER_HOOK = "prepare-commit-msg"  # installed when asked for (--trailers) only
MARK = b"# git-checkpoint hook"
LEGACY = ".checkpoint-legacy"


@dataclass(frozen=True)
class GitHookState:
    hook: str
    path: str
    state: str  # installed | outdated | not installed | other hook
    chained: bool  # a hook that was there before runs after ours


def data_dir() -> Path:
    """The tool's own data folder under the user's home: records of hooks installed in
    user-wide settings (and, for install.sh, its virtual environment)."""
    explicit = os.environ.get("GIT_CHECKPOINT_HOME")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local/share")
    return Path(base) / "git-checkpoint"


def templates_dir() -> Path:
    """The hook templates (`git/`, `shell/`): package data of the installed package, read
    where the installer put them (a path the shell guard's line can name)."""
    folder = Path(str(resources.files("git_checkpoint.install") / "templates"))
    if not (folder / "git" / GIT_HOOKS[0]).is_file():
        raise UsageError(
            f"the hook templates are missing from {folder}: this installation of "
            f"git-checkpoint is incomplete; {installer.reinstall_hint()}"
        )
    return folder


def template(name: str) -> bytes:
    return (templates_dir() / "git" / name).read_bytes()


def hooks_dir(repo: Repo) -> Path:
    out = repo.git("rev-parse", "--git-path", "hooks").decode().strip()
    path = Path(out)
    return path if path.is_absolute() else repo.root / path


def _record_path(repo: Repo) -> Path:
    return repo.state_dir() / "hooks" / "git.json"


@dataclass(frozen=True)
class _Record:
    dir: str
    created_dirs: tuple[str, ...]  # folders install made, outermost first
    chained: tuple[str, ...]  # hooks that were there and moved aside


def _load_record(repo: Repo) -> _Record | None:
    try:
        raw = json.loads(_record_path(repo).read_text(encoding="utf-8"))
        return _Record(
            str(raw["dir"]),
            tuple(str(d) for d in raw["created_dirs"]),
            tuple(str(c) for c in raw["chained"]),
        )
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise UsageError(f"unreadable install record {_record_path(repo)}: {exc}") from None


def _save_record(repo: Repo, record: _Record) -> None:
    entry = {
        "dir": record.dir,
        "created_dirs": list(record.created_dirs),
        "chained": list(record.chained),
    }
    _record_path(repo).parent.mkdir(parents=True, exist_ok=True)
    hook_files.write_atomic(_record_path(repo), (json.dumps(entry, indent=2) + "\n").encode())


def _is_ours(path: Path) -> bool:
    try:
        return MARK in path.read_bytes()[:400]
    except OSError:
        return False


def _ours_in(folder: Path, trailers: bool) -> tuple[str, ...]:
    """The hooks to write or take out in `folder`: the trailers hook when asked for, or
    when ours is there already (so that an install keeps it current)."""
    wanted = trailers or _is_ours(folder / TRAILER_HOOK)
    return GIT_HOOKS + ((TRAILER_HOOK,) if wanted else ())


def status(repo: Repo) -> list[GitHookState]:
    """Each of our hooks; the trailers hook only when ours is installed."""
    folder = hooks_dir(repo)
    out = []
    for name in _ours_in(folder, trailers=False):
        path = folder / name
        chained = os.path.lexists(folder / (name + LEGACY))
        if not os.path.lexists(path):
            state = "not installed"
        elif not _is_ours(path):
            state = "other hook"
        else:
            state = "installed" if path.read_bytes() == template(name) else "outdated"
        out.append(GitHookState(name, str(path), state, chained))
    return out


def install(repo: Repo, *, trailers: bool = False) -> list[str]:
    """Write our hooks (chaining any hook already there), the trailers hook too when
    asked for; return the hooks changed."""
    folder = hooks_dir(repo)
    record = _load_record(repo) or _Record(str(folder), (), ())
    if record.dir != str(folder):
        raise Refused(f"our git hooks are installed in {record.dir}: uninstall them first")
    if os.path.lexists(folder) and not folder.is_dir():
        raise UsageError(f"the hooks folder {folder} is not a folder")
    names = _ours_in(folder, trailers)
    for name in names:  # check everything before changing anything
        path, legacy = folder / name, folder / (name + LEGACY)
        if not os.path.lexists(path) or _is_ours(path):
            continue
        if os.path.lexists(legacy):
            raise Refused(f"{legacy} exists already: move it away, then install again")
        if _runs_by_its_name(path):
            raise Refused(
                f"{path} finds its work by its own file name (husky?), so it cannot move "
                f'aside: call `git-checkpoint-hook git {name} "$@"` from the script it runs'
            )
    created = record.created_dirs
    if not folder.exists():
        created = hook_files.make_parents(folder / GIT_HOOKS[0])
    chained = set(record.chained)
    changed = []
    for name in names:
        path, body = folder / name, template(name)
        if os.path.lexists(path) and _is_ours(path):
            if path.read_bytes() == body:
                continue
        elif os.path.lexists(path):
            os.rename(path, folder / (name + LEGACY))  # same file: bytes, mode, inode
            chained.add(name)
        hook_files.write_atomic(path, body)
        os.chmod(path, 0o755)
        changed.append(name)
    _save_record(repo, _Record(str(folder), created, tuple(sorted(chained))))
    return changed


def _runs_by_its_name(path: Path) -> bool:
    """husky's hooks (`.husky/_/*`) dispatch on `basename "$0"`: renamed, they do nothing."""
    try:
        body = path.read_bytes()[:4096]
    except OSError:
        return False
    if ".husky" in path.parts or b"husky" in body:
        return True
    return b"$0" in body and (b"basename" in body or b'dirname "$0")/h"' in body)


def uninstall(repo: Repo, *, only_trailers: bool = False) -> list[str]:
    """Remove our hooks (`only_trailers`: the trailers hook alone) and move chained ones
    back; return the hooks changed."""
    record = _load_record(repo)
    folder = Path(record.dir) if record else hooks_dir(repo)
    changed = []
    for name in (TRAILER_HOOK,) if only_trailers else (*GIT_HOOKS, TRAILER_HOOK):
        path, legacy = folder / name, folder / (name + LEGACY)
        if os.path.lexists(path) and _is_ours(path):
            path.unlink()
            changed.append(name)
        if os.path.lexists(legacy) and not os.path.lexists(path):
            os.rename(legacy, path)
    if record is not None and only_trailers:
        chained = tuple(c for c in record.chained if c != TRAILER_HOOK)
        _save_record(repo, _Record(record.dir, record.created_dirs, chained))
    elif record is not None:
        hook_files.remove_created_dirs(record.created_dirs)
        _record_path(repo).unlink()
    return changed


def tasks_pushed_with(cwd: str, remote: str, refs: list[str]) -> list[str]:
    """pre-push: with `checkpoint.pushWithBranch`, the tasks whose checkpoints go with
    the branches being pushed to `remote`; `refs` are pre-push's input lines."""
    branches = []
    for line in refs:  # <local ref> <local oid> <remote ref> <remote oid>
        fields = line.split()
        if len(fields) == 4 and fields[0].startswith("refs/heads/") and fields[1].strip("0"):
            branches.append(fields[0][len("refs/heads/") :])
    if not branches or not remote:
        return []
    repo = Repo.discover(cwd)
    wanted = repo.run(["config", "--type=bool", "--get", "checkpoint.pushWithBranch"], check=False)
    if wanted.stdout.strip() != b"true":
        return []
    found = []
    for task in dict.fromkeys(task_from_branch(b) for b in branches):
        if repo.git("for-each-ref", "--count=1", f"refs/checkpoints/{task}/").strip():
            found.append(task)
    return found
