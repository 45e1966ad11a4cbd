"""Sharing checkpoints through git remotes (design.md §9): push and fetch.

Both go through the user's own `git push` / `git fetch`, so credentials, SSH config,
URLs and `pushurl` behave as they do for git. Push never overwrites a name on the
remote (a lease that says "must not exist") and merges notes instead of forcing them.
Fetch is hostile-input handling: only refs named like checkpoints are asked for, each
with an explicit refspec into `refs/checkpoints/remotes/<remote>/`, and notes come in
through a temporary ref that is merged line-wise (`cat_sort_uniq`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from ..core.errors import GitFailed, Refused, UsageError
from ..gitcore.repo import Repo
from ..storage.notes import NOTES_REF
from ..storage.refs import ID, REF_ROOT, REMOTE_ROOT, Checkpoint, validate_task

REMOTE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*$")
_HEX40 = re.compile(r"^[0-9a-f]{40}$")
PUSH_ATTEMPTS = 3  # a notes race with another pusher is retried this often

Progress = Callable[[str], None]


def check_remote(repo: Repo, remote: str) -> str:
    if not REMOTE_NAME.match(remote) or remote.endswith((".lock", ".")):
        raise UsageError(f"bad remote name {remote!r}: use a configured remote, e.g. origin")
    known = repo.git("remote").decode("utf-8", "replace").split()
    if remote not in known:
        have = f" (configured: {', '.join(known)})" if known else " (none configured)"
        raise UsageError(f"no remote named {remote!r}{have}; add one with git remote add")
    return remote


def remote_checkpoint_refs(repo: Repo, remote: str) -> dict[str, str]:
    """ref -> commit for every `refs/checkpoints/*` and the notes ref on the remote (a
    remote name, or the URL a push goes to).
    """
    out = repo.git("ls-remote", remote, f"{REF_ROOT}*", NOTES_REF)
    refs: dict[str, str] = {}
    for line in out.decode("utf-8", "surrogateescape").splitlines():
        oid, _, ref = line.partition("\t")
        if _HEX40.match(oid) and (ref.startswith(REF_ROOT) or ref == NOTES_REF):
            refs[ref] = oid
    return refs


def _ident_env(repo: Repo) -> dict[str, str]:
    """A fallback identity for the notes merge commit when git has none configured."""
    try:
        repo.git("var", "GIT_COMMITTER_IDENT")
        return {}
    except GitFailed:
        return {
            f"GIT_{who}_{what}": value
            for who in ("AUTHOR", "COMMITTER")
            for what, value in (("NAME", "git-checkpoint"), ("EMAIL", "git-checkpoint@localhost"))
        }


def _temp_notes_ref(kind: str, remote: str) -> str:
    return f"refs/notes/checkpoint-{kind}/{remote}/{os.getpid()}"


def _drop_ref(repo: Repo, ref: str) -> None:
    oid = repo.resolve_ref(ref)
    if oid:
        repo.git("update-ref", "-d", ref, oid)


def merge_notes(repo: Repo, into: str, other: str) -> None:
    """Merge notes ref `other` into `into` line by line; never forced, never lossy."""
    if repo.resolve_ref(other) is None:
        return
    repo.git(
        "notes", f"--ref={into}", "merge", "-q", "-s", "cat_sort_uniq", other, env=_ident_env(repo)
    )


# --- push ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PushOutcome:
    remote: str
    pushed: list[str]  # names on the remote, task/cp_NNN
    already_there: list[str]
    notes_pushed: int  # checkpoints whose notes went along
    secret_warnings: list[str] = field(default_factory=list)


def remote_task_name(cp: Checkpoint, remote: str, prefix: str, as_name: str | None) -> str:
    """The task name a checkpoint gets on the remote."""
    if as_name is not None:
        return validate_task(as_name)
    if cp.remote == remote:  # fetched from there: its notes go back under its own name
        return cp.task[len(f"remotes/{remote}/") :]
    if cp.remote is not None:
        raise UsageError(f"{cp.name} was fetched from {cp.remote!r}; push it there, or save it")
    try:
        return validate_task(prefix + cp.task)
    except UsageError:
        raise UsageError(
            f"checkpoint.taskPrefix {prefix!r} + task {cp.task!r} is not a task name"
        ) from None


def _note_blobs(repo: Repo, commits: Iterable[str]) -> dict[str, str]:
    """commit -> note blob in our notes ref, for the commits that have one."""
    wanted = set(commits)
    if repo.resolve_ref(NOTES_REF) is None or not wanted:
        return {}
    out = repo.git("notes", f"--ref={NOTES_REF}", "list").decode().split()
    pairs = zip(out[1::2], out[0::2], strict=True)  # lines are "<note blob> <commit>"
    return {commit: blob for commit, blob in pairs if commit in wanted}


def _notes_for_push(
    repo: Repo, commits: list[str], remote: str, url: str, remote_notes: str | None
) -> str | None:
    """A notes commit holding only the notes of `commits`, merged over the remote's
    notes (fetched into a temporary ref), so pushing it is a fast-forward there.
    Returns the temporary notes ref to push, or None when there is nothing to send.
    """
    blobs = _note_blobs(repo, commits)
    if not blobs:
        return None
    rows = "".join(f"100644 blob {blob}\t{commit}\n" for commit, blob in sorted(blobs.items()))
    tree = repo.git("mktree", stdin=rows.encode()).decode().strip()
    commit = repo.commit_tree(tree, [], "Notes added by 'git checkpoint push'\n")
    ours = _temp_notes_ref("push", remote)
    repo.git("update-ref", ours, commit)
    if remote_notes is not None:
        theirs = _temp_notes_ref("remote", remote)
        repo.git(
            "fetch",
            "-q",
            "--no-tags",
            "--no-write-fetch-head",
            "--refmap=",
            url,
            f"+{NOTES_REF}:{theirs}",
        )
        try:
            merge_notes(repo, ours, theirs)
            if repo.resolve_ref(f"{ours}^{{tree}}") == repo.resolve_ref(f"{theirs}^{{tree}}"):
                _drop_ref(repo, ours)  # the remote has every line already
                return None
        finally:
            _drop_ref(repo, theirs)
    return ours


def push(
    repo: Repo,
    chosen: list[Checkpoint],
    remote: str,
    *,
    prefix: str,
    as_name: str | None,
    check_secrets: Callable[[list[Checkpoint]], list[str]],
    progress: Progress,
) -> PushOutcome:
    """Push `chosen` and their notes; refuse (nothing pushed) if any name is taken."""
    check_remote(repo, remote)
    if as_name is not None and len({c.task for c in chosen}) > 1:
        raise UsageError("--as names one task: push one task at a time with --as")
    for cp in chosen:
        if cp.problem:
            raise UsageError(f"checkpoint {cp.name} is malformed ({cp.problem}): not pushed")
    dest = {
        cp.ref: f"{REF_ROOT}{remote_task_name(cp, remote, prefix, as_name)}/{cp.id}"
        for cp in chosen
    }
    # Ask where the push goes (pushurl, pushInsteadOf), not where fetches come from.
    url = repo.git("remote", "get-url", "--push", remote).decode("utf-8", "replace").strip()
    warnings: list[str] = []
    for attempt in range(PUSH_ATTEMPTS):
        progress(f"asking {remote} which checkpoints it has")
        there = remote_checkpoint_refs(repo, url)
        taken = [
            (cp, dest[cp.ref]) for cp in chosen if there.get(dest[cp.ref], cp.commit) != cp.commit
        ]
        if taken:
            cp, ref = taken[0]
            name = ref[len(REF_ROOT) :]
            task = name.rsplit("/", 1)[0]
            raise Refused(
                f"{remote} already has {name} holding another checkpoint than {cp.name} "
                f"({len(taken)} name(s) taken); nothing pushed. Another machine pushed task "
                f"{task!r}: push under another name with --as {task}-<machine>, or give "
                "each machine a prefix: git config checkpoint.taskPrefix <machine>/"
            )
        new = [cp for cp in chosen if dest[cp.ref] not in there]
        if attempt == 0 and new:
            progress(f"scanning {len(new)} checkpoint(s) for secrets")
            warnings = check_secrets(new)
        commits = [c.commit for c in chosen]
        notes_ref = _notes_for_push(repo, commits, remote, url, there.get(NOTES_REF))
        argv = ["push", "--porcelain", "--no-follow-tags"]
        if len(new) + (notes_ref is not None) > 1:
            argv.append("--atomic")
        for cp in new:
            argv.append(f"--force-with-lease={dest[cp.ref]}:")  # must not exist yet
        refspecs = [f"{cp.commit}:{dest[cp.ref]}" for cp in new]
        if notes_ref is not None:
            refspecs.append(f"{notes_ref}:{NOTES_REF}")
        if not refspecs:
            return PushOutcome(remote, [], sorted(_short(dest.values())), 0, warnings)
        progress(f"pushing {len(new)} checkpoint(s) and their notes to {remote}")
        try:
            repo.git(*argv, remote, *refspecs)
        except GitFailed as exc:
            raced = any(w in exc.stderr for w in ("stale info", "fetch first", "non-fast-forward"))
            if not raced or attempt == PUSH_ATTEMPTS - 1:
                raise
            progress(f"{remote} changed while pushing; trying again")
            continue
        finally:
            if notes_ref is not None:
                _drop_ref(repo, notes_ref)
        pushed = [dest[cp.ref] for cp in new]
        already = [dest[cp.ref] for cp in chosen if cp not in new]
        notes = len(_note_blobs(repo, [c.commit for c in chosen])) if notes_ref else 0
        return PushOutcome(remote, _short(pushed), _short(already), notes, warnings)
    raise Refused(f"{remote} kept changing while pushing; try again")  # pragma: no cover


def _short(refs: Iterable[str]) -> list[str]:
    return [r[len(REF_ROOT) :] for r in refs]


# --- fetch ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class FetchOutcome:
    remote: str
    new: list[str]  # local names, origin/task/cp_NNN
    updated: list[str]
    refused: list[str]  # remote refs whose names are not checkpoint names: not fetched
    notes_merged: bool


def checkpoint_name_problem(ref: str) -> str | None:
    """Why a remote ref is not fetched as a checkpoint, or None when it is fine."""
    rest = ref[len(REF_ROOT) :]
    task, _, cp_id = rest.rpartition("/")
    if not ID.match(cp_id):
        return "not a checkpoint id"
    try:
        validate_task(task)  # refuses remotes/…, .., .lock, odd characters
    except UsageError:
        return "not a task name"
    return None


def _local_remote_refs(repo: Repo, remote: str) -> dict[str, tuple[str, str]]:
    out = repo.git(
        "for-each-ref",
        "--format=%(refname)%00%(objectname)%00%(objecttype)",
        f"{REMOTE_ROOT}{remote}/",
    )
    refs: dict[str, tuple[str, str]] = {}
    for line in out.decode("utf-8", "surrogateescape").splitlines():
        ref, oid, kind = line.split("\0")
        refs[ref] = (oid, kind)
    return refs


def fetch(repo: Repo, remote: str, *, progress: Progress) -> FetchOutcome:
    """Bring the remote's checkpoints and notes in (caller holds the lock)."""
    check_remote(repo, remote)
    progress(f"asking {remote} which checkpoints it has")
    there = remote_checkpoint_refs(repo, remote)
    local_root = f"{REMOTE_ROOT}{remote}/"
    wanted: dict[str, str] = {}
    refused: list[str] = []
    for ref in sorted(there):
        if ref == NOTES_REF:
            continue
        if checkpoint_name_problem(ref):
            refused.append(ref[len(REF_ROOT) :][:200])
            continue
        wanted[ref] = local_root + ref[len(REF_ROOT) :]
    before = _local_remote_refs(repo, remote)
    refspecs = [f"+{src}:{dst}" for src, dst in wanted.items()]
    notes_tmp = _temp_notes_ref("fetch", remote)
    if NOTES_REF in there:
        refspecs.append(f"+{NOTES_REF}:{notes_tmp}")
    if refspecs:
        progress(f"fetching {len(wanted)} checkpoint(s) from {remote}")
        repo.git(
            "fetch",
            "-q",
            "--no-tags",
            "--no-write-fetch-head",
            "--no-recurse-submodules",
            "--refmap=",
            "--stdin",
            remote,
            stdin="".join(f"{r}\n" for r in refspecs).encode(),
        )
    after = _local_remote_refs(repo, remote)
    for ref, (oid, kind) in after.items():
        if kind != "commit":  # a tree or blob under a checkpoint name: never a checkpoint
            repo.git("update-ref", "-d", ref, oid)
            refused.append(ref[len(local_root) :])
    merged = False
    try:
        if repo.resolve_ref(notes_tmp) is not None:
            progress(f"merging {remote}'s notes")
            notes_before = repo.resolve_ref(NOTES_REF)
            merge_notes(repo, NOTES_REF, notes_tmp)
            merged = repo.resolve_ref(NOTES_REF) != notes_before
    finally:
        _drop_ref(repo, notes_tmp)

    def name(ref: str) -> str:
        return f"{remote}/{ref[len(local_root) :]}"

    new = [
        name(r)
        for r in wanted.values()
        if r not in before and after.get(r, ("", ""))[1] == "commit"
    ]
    updated = [
        name(r)
        for r in wanted.values()
        if r in before and r in after and after[r][0] != before[r][0] and after[r][1] == "commit"
    ]
    return FetchOutcome(remote, new, updated, refused, merged)
