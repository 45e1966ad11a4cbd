"""Sharing checkpoints through git remotes (design.md §9): push and fetch.

Both go through the user's own `git push` / `git fetch`, so credentials, SSH config,
URLs and `pushurl` behave as they do for git, and both cost what git's own push or
fetch of those refs costs: one wildcard refspec, never one per checkpoint (git matches
each explicit refspec against every ref: the square of their number).

Push never takes a name on the remote another checkpoint holds: it asks first, and
pushes without force, so a name taken meanwhile is rejected by the remote (only a fast
forward, to a commit that keeps theirs, is taken). Notes go on their own, merged
over the remote's under a lease, again until they land (a fleet pushes at the same
moment: each merge is retried with a fresh fetch, a bounded number of times, after a
random pause). The notes of checkpoints fetched from the remote go back the same way
(a reviewer's verify of them): only notes, for checkpoints the remote still holds.
Fetch is hostile-input handling: the notes ref is fetched and checked before anything
else is written, objects are checked as `transfer.fsckObjects` checks them, and refs
not named like checkpoints, or not commits, are dropped. With prune, fetched
checkpoints the remote no longer has are dropped, each logged with its commit first.

Temporary refs (`refs/notes/checkpoint-tmp/<kind>/<pid>/…`) of a push or fetch that was
killed are removed by the next one, and `doctor` names them meanwhile.
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ..core.errors import GitFailed, Refused, UsageError
from ..core.procs import running
from ..core.text import counted, printable
from ..gitcore.formats import ZERO_OID
from ..gitcore.repo import REFS_ELSEWHERE, Repo
from ..gitcore.spawn import remove_folder
from ..storage import oplog
from ..storage.notes import NOTES_REF, record_fetched
from ..storage.refs import ID, REF_ROOT, REMOTE_ROOT, Checkpoint, load_checkpoints, validate_task

REMOTE_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*$")
_HEX40 = re.compile(r"^[0-9a-f]{40}$")
# A notes merge another pusher raced is tried again this often, after a pause of up to
# NOTES_PAUSE × the try (seconds, random): 32 machines at once all land.
NOTES_ATTEMPTS = 40
NOTES_PAUSE = 0.05
# Under refs/notes/: `git notes` takes any other name as one below it.
TMP_ROOT = "refs/notes/checkpoint-tmp/"
# From this many new checkpoints, a push names them in a scratch repository's one
# packed-refs file (Repo.refs_elsewhere) rather than as temporary refs here, one file each.
PUSH_ELSEWHERE_FROM = 200
# Where earlier versions kept them: refs/notes/checkpoint-<kind>/<remote>/<pid>.
_OLD_TMP_ROOTS = tuple(f"refs/notes/checkpoint-{kind}/" for kind in ("push", "remote", "fetch"))
# What git says when another push moved or locked a ref between our look and our push.
_RACED = (
    "stale info",
    "fetch first",
    "non-fast-forward",
    "cannot lock ref",
    "but expected",
    "reference already exists",
    "failed to update ref",
    "failed to lock",
    "incorrect old value",
)

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


def temp_root(kind: str) -> str:
    """This process's temporary refs of one kind (push, notes, fetch), ending in "/"."""
    return f"{TMP_ROOT}{kind}/{os.getpid()}/"


def leftover_refs(repo: Repo) -> list[str]:
    """Temporary refs of pushes and fetches that are no longer running (killed)."""
    out = repo.git("for-each-ref", "--format=%(refname)", TMP_ROOT, *_OLD_TMP_ROOTS)
    left = []
    for ref in out.decode("utf-8", "surrogateescape").split():
        if ref.startswith(TMP_ROOT):
            parts = ref[len(TMP_ROOT) :].split("/")
            pid = parts[1] if len(parts) > 1 else ""
        else:
            pid = ref.rsplit("/", 1)[-1]
        if not (pid.isdigit() and running(int(pid))):
            left.append(ref)
    return left


def drop_refs(repo: Repo, refs: Iterable[str]) -> None:
    """Delete these refs in one transaction (whatever they point at)."""
    lines = "".join(f"delete {ref}\n" for ref in refs)
    if lines:
        repo.git("update-ref", "--stdin", stdin=lines.encode())


def _clean_leftovers(repo: Repo) -> None:
    left = leftover_refs(repo)
    if left:
        drop_refs(repo, left)
    for folder in leftover_folders(repo):
        remove_folder(folder)


def leftover_folders(repo: Repo) -> list[Path]:
    """Scratch repositories of pushes that are no longer running (killed)."""
    left = []
    for folder in sorted(repo.common_dir.glob(f"{REFS_ELSEWHERE}*")):
        pid = folder.name[len(REFS_ELSEWHERE) :].partition("-")[0]
        if not (pid.isdigit() and running(int(pid))):
            left.append(folder)
    return left


def _drop_root(repo: Repo, root: str) -> None:
    out = repo.git("for-each-ref", "--format=%(refname)", root)
    drop_refs(repo, out.decode("utf-8", "surrogateescape").split())


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
    notes_pushed: int  # checkpoints whose notes the remote lacked a line of
    secret_warnings: list[str] = field(default_factory=list)
    notes_of: list[str] = field(default_factory=list)  # their names on the remote
    gone: list[str] = field(default_factory=list)  # fetched ones the remote no longer has


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


def _note_blobs(repo: Repo, commits: Iterable[str], ref: str = NOTES_REF) -> dict[str, str]:
    """commit -> note blob in a notes ref, for the commits that have one."""
    wanted = set(commits)
    if repo.resolve_ref(ref) is None or not wanted:
        return {}
    return {commit: blob for commit, blob in _all_notes(repo, ref).items() if commit in wanted}


def _all_notes(repo: Repo, ref: str) -> dict[str, str]:
    """commit -> note blob, every note of a notes ref (whatever its fan-out)."""
    out = repo.git("notes", f"--ref={ref}", "list").decode().split()
    return dict(zip(out[1::2], out[0::2], strict=True))  # lines are "<note blob> <commit>"


def fetched_with_notes(repo: Repo, remote: str) -> list[Checkpoint]:
    """The checkpoints fetched from `remote` that carry a note here: the evidence a
    push can send back (what this machine verified, promoted or said of them)."""
    fetched = load_checkpoints(repo, f"{REMOTE_ROOT}{remote}/")
    noted = _note_blobs(repo, [cp.commit for cp in fetched])
    return [cp for cp in fetched if cp.commit in noted and not cp.problem]


def _notes_commit(repo: Repo, blobs: dict[str, str]) -> str:
    """A notes commit holding exactly these notes (commit -> note blob)."""
    rows = "".join(f"100644 blob {blob}\t{commit}\n" for commit, blob in sorted(blobs.items()))
    tree = repo.git("mktree", stdin=rows.encode()).decode().strip()
    return repo.commit_tree(tree, [], "Notes added by 'git checkpoint push'\n")


def push(
    repo: Repo,
    chosen: list[Checkpoint],
    remote: str,
    *,
    prefix: str,
    as_name: str | None,
    check_secrets: Callable[[list[Checkpoint]], list[str]],
    progress: Progress,
    evidence: Iterable[Checkpoint] = (),
) -> PushOutcome:
    """Push `chosen`, then their notes; refuse (nothing pushed) if any name is taken.
    `evidence`: checkpoints fetched from `remote` whose notes go back along with those
    (the checkpoints are there already); one the remote no longer holds is left out."""
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
    _clean_leftovers(repo)
    # Ask where the push goes (pushurl, pushInsteadOf), not where fetches come from.
    url = repo.git("remote", "get-url", "--push", remote).decode("utf-8", "replace").strip()
    progress(f"asking {remote} which checkpoints it has")
    there = remote_checkpoint_refs(repo, url)
    taken = [(cp, dest[cp.ref]) for cp in chosen if there.get(dest[cp.ref], cp.commit) != cp.commit]
    if taken:
        raise _taken(remote, taken)
    new = [cp for cp in chosen if dest[cp.ref] not in there]
    warnings = check_secrets(new) if new else []
    if new:
        progress(f"pushing {counted(len(new), 'checkpoint')} to {remote}")
        rejected = _push_new(repo, url, {dest[cp.ref]: cp.commit for cp in new})
        if rejected:
            lost = [(cp, dest[cp.ref]) for cp in new if dest[cp.ref] in rejected]
            raise _taken(remote, lost, meanwhile=len(new) - len(lost))
    new_refs = {cp.ref for cp in new}
    already = [dest[cp.ref] for cp in chosen if cp.ref not in new_refs]
    named = {cp.commit: dest[cp.ref] for cp in chosen}
    gone = []
    for cp in evidence:
        if cp.ref in dest or cp.commit in named:
            continue
        there_as = f"{REF_ROOT}{remote_task_name(cp, remote, '', None)}/{cp.id}"
        if there.get(there_as) == cp.commit:
            named[cp.commit] = there_as
        else:
            gone.append(cp.name)
    blobs = _note_blobs(repo, named)
    changed = _push_notes(repo, url, remote, blobs, progress) if blobs else set()
    return PushOutcome(
        remote,
        _short(dest[cp.ref] for cp in new),
        _short(already),
        len(changed),
        warnings,
        sorted(_short(named[c] for c in changed)),
        gone,
    )


def _taken(remote: str, taken: list[tuple[Checkpoint, str]], meanwhile: int = -1) -> Refused:
    cp, ref = taken[0]
    name = ref[len(REF_ROOT) :]
    task = name.rsplit("/", 1)[0]
    what = (
        "nothing pushed"
        if meanwhile < 0
        else f"taken while pushing; the others were pushed ({counted(meanwhile, 'checkpoint')})"
    )
    return Refused(
        f"{remote} already has {name} holding another checkpoint than {cp.name} "
        f"({counted(len(taken), 'name')} taken); {what}. Another machine pushed task "
        f"{task!r}: push under another name with --as {task}-<machine>, or give "
        "each machine a prefix: git config checkpoint.taskPrefix <machine>/"
    )


def _push_new(repo: Repo, url: str, wanted: dict[str, str]) -> set[str]:
    """Create these refs (remote name -> commit) on the remote with one wildcard
    refspec from temporary refs (git's refspecs by name cost a scan of every local ref
    each), without force: the names refused because the remote holds another commit
    there (taken meanwhile). Many go through a scratch repository (Repo.refs_elsewhere),
    whose push this repository's pre-push hook vets first, as git would."""
    push = ["push", "--porcelain", "--no-follow-tags"]
    if len(wanted) >= PUSH_ELSEWHERE_FROM:
        with repo.refs_elsewhere(wanted) as (options, env):
            lines = "".join(f"{ref} {commit} {ref} {ZERO_OID}\n" for ref, commit in wanted.items())
            vetted = repo.run_hook("pre-push", [url, url], lines.encode())
            if vetted is not None and vetted.returncode != 0:
                said = (vetted.stderr or vetted.stdout).decode("utf-8", "replace").strip()
                why = f": {said}" if said else f" (exit {vetted.returncode})"
                raise GitFailed(["push", url], 1, f"the pre-push hook refused the push{why}")
            argv = [*options, *push, "--no-verify", url, f"{REF_ROOT}*:{REF_ROOT}*"]
            proc = repo.run(argv, env=env, check=False)
    else:
        root = temp_root("push")
        lines = "".join(
            f"create {root}{ref[len(REF_ROOT) :]} {commit}\n" for ref, commit in wanted.items()
        )
        repo.git("update-ref", "--stdin", stdin=lines.encode())
        try:
            proc = repo.run([*push, url, f"{root}*:{REF_ROOT}*"], check=False)
        finally:
            _drop_root(repo, root)
    return _refused(proc, url, len(wanted))


# How a remote refuses a create it lost a race for: the name came to hold a commit
# between the ref listing it sent and the update (receive-pack's own words).
_LOST_RACE = ("failed to update ref", "failed to lock", "cannot lock ref", "incorrect old value")


def _refused(proc: subprocess.CompletedProcess[bytes], url: str, count: int) -> set[str]:
    """From a `push --porcelain` of `count` creates: the names the remote holds another
    commit under (git's "[rejected]", or a lost race); GitFailed for any other refusal
    (a hook's, a rule's), with git's reason and how many were pushed all the same."""
    taken, other = set(), []
    for line in proc.stdout.decode("utf-8", "surrogateescape").splitlines():
        flag, _, rest = line.partition("\t")
        if flag != "!":
            continue
        names, _, summary = rest.partition("\t")
        ref = names.partition(":")[2]
        if summary.startswith("[rejected]") or any(w in summary for w in _LOST_RACE):
            taken.add(ref)
        else:
            other.append(f"{ref[len(REF_ROOT) :]}: {summary}")
    if other:
        pushed = count - len(taken) - len(other)
        why = f"{other[0]}" + (f" (and {len(other) - 1} more)" if len(other) > 1 else "")
        why += f"; the others were pushed ({counted(pushed, 'checkpoint')})" if pushed else ""
        raise GitFailed(["push", url], proc.returncode or 1, printable(why, 400))
    if proc.returncode != 0 and not taken:
        raise GitFailed(["push", url], proc.returncode, proc.stderr.decode("utf-8", "replace"))
    return taken


def _push_notes(
    repo: Repo, url: str, remote: str, blobs: dict[str, str], progress: Progress
) -> set[str]:
    """Merge these notes over the remote's and push the result under a lease on what the
    remote had; when another push got there first, again from a fresh fetch. The
    checkpoints (commits) whose notes the remote lacked a line of: none when it had
    every line already, and then nothing is pushed. A round is three git processes
    (fetch, merge, push): a fleet pushing at once takes a round each."""
    import pygit2

    root = temp_root("notes")
    ours, theirs = f"{root}ours", f"{root}theirs"
    base = _notes_commit(repo, blobs)
    refs = repo.odb.references
    try:
        for attempt in range(NOTES_ATTEMPTS):
            if attempt:
                time.sleep(random.uniform(0, NOTES_PAUSE * min(attempt, 20)))
            remote_notes = _fetch_notes(repo, url, theirs)
            refs.create(ours, pygit2.Oid(hex=base), force=True)
            changed = set(blobs)
            if remote_notes is not None:
                merge_notes(repo, ours, theirs)
                merged, had = (refs[r].peel(pygit2.Commit) for r in (ours, theirs))
                if merged.tree_id == had.tree_id:
                    return set()  # the remote has every line already
                changed = {c for c in blobs if _note_id(repo, c, ours) != _note_id(repo, c, theirs)}
                if not changed:  # the same notes, another fan-out
                    return set()
            lease = f"--force-with-lease={NOTES_REF}:{remote_notes or ''}"
            proc = repo.run(["push", "--porcelain", lease, url, f"{ours}:{NOTES_REF}"], check=False)
            if proc.returncode == 0:
                return changed
            said = proc.stdout.decode("utf-8", "replace") + proc.stderr.decode("utf-8", "replace")
            if not any(w in said for w in _RACED):
                raise GitFailed(["push", url, NOTES_REF], proc.returncode, said)
            progress(f"{remote}'s notes changed while pushing; merging again")
    finally:
        _drop_root(repo, root)
    raise Refused(
        f"the checkpoints are on {remote}, but their notes could not be merged into "
        f"{remote}'s: it changed on each of {NOTES_ATTEMPTS} tries; push again"
    )


def _fetch_notes(repo: Repo, url: str, into: str) -> str | None:
    """The remote's notes commit, fetched into `into`; None when it has no notes."""
    proc = repo.run(
        ["fetch", "-q", "--no-tags", "--no-write-fetch-head", "--refmap=", url,
         f"+{NOTES_REF}:{into}"],
        check=False,
    )  # fmt: skip
    if proc.returncode != 0:
        said = proc.stderr.decode("utf-8", "replace")
        if "couldn't find remote ref" in said:
            return None
        raise GitFailed(["fetch", url, NOTES_REF], proc.returncode, said)
    return str(repo.odb.references[into].target)


def _note_id(repo: Repo, commit: str, ref: str) -> str | None:
    try:
        return str(repo.odb.lookup_note(commit, ref).id)
    except KeyError:
        return None


def _short(refs: Iterable[str]) -> list[str]:
    return [r[len(REF_ROOT) :] for r in refs]


# --- fetch ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pruned:
    name: str  # origin/task/cp_NNN
    ref: str
    commit: str


@dataclass(frozen=True)
class FetchOutcome:
    remote: str
    new: list[str]  # local names, origin/task/cp_NNN
    updated: list[str]
    refused: list[str]  # remote refs whose names are not checkpoint names: not fetched
    notes_merged: bool
    unsafe: list[str] = field(default_factory=list)  # failed git's object check: not fetched
    pruned: list[Pruned] = field(default_factory=list)  # gone from the remote: dropped here


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


# A fetch checks what it receives as `git fsck --strict` would (a `.git` in a tree,
# duplicate entries, zero-padded modes…): a remote's trees reach our work tree.
_CHECKED = ("-c", "fetch.fsckObjects=true")


def fetch(repo: Repo, remote: str, *, progress: Progress, prune: bool = False) -> FetchOutcome:
    """Bring the remote's checkpoints and notes in (caller holds the lock); `prune`: drop
    the fetched checkpoints the remote no longer has, each logged with its commit first."""
    check_remote(repo, remote)
    _clean_leftovers(repo)
    progress(f"asking {remote} which checkpoints it has")
    there = remote_checkpoint_refs(repo, remote)
    local_root = f"{REMOTE_ROOT}{remote}/"
    refused = [
        ref[len(REF_ROOT) :][:200]
        for ref in sorted(there)
        if ref != NOTES_REF and checkpoint_name_problem(ref)
    ]
    root = temp_root("fetch")
    notes_tmp = f"{root}notes"
    try:
        if NOTES_REF in there:  # first, alone: a notes ref that is no commit stops it all
            try:
                _fetch(repo, remote, [f"+{NOTES_REF}:{notes_tmp}"])
            except GitFailed as exc:
                found = _FSCK_ERROR.search(exc.stderr)
                if found is None:
                    raise
                raise Refused(
                    f"{remote}'s {NOTES_REF} fails git's object check ({found[1][:120]}): "
                    "nothing fetched"
                ) from None
            kind = repo.git("cat-file", "-t", notes_tmp).decode().strip()
            if kind != "commit":
                raise Refused(
                    f"{remote}'s {NOTES_REF} is a {kind}, not a notes commit: nothing fetched"
                )
            odd = _not_a_note(repo, notes_tmp)
            if odd is not None:
                raise Refused(
                    f"{remote}'s {NOTES_REF} holds {odd}, which no note is (git cannot merge "
                    "it): nothing fetched"
                )
        before = _local_remote_refs(repo, remote)
        unsafe: list[str] = []
        if len(there) > (NOTES_REF in there):
            progress(
                f"fetching {counted(len(there) - (NOTES_REF in there), 'checkpoint')} from {remote}"
            )
            unsafe = _fetch_checked(repo, remote, there, local_root)
        after = _local_remote_refs(repo, remote)
        wrong = [
            (ref, oid)
            for ref, (oid, kind) in after.items()
            if kind != "commit" or (ref not in before and _local_name_problem(ref, local_root))
        ]
        if wrong:  # not named like checkpoints, or no commits: never checkpoints
            repo.git(
                "update-ref", "--stdin",
                stdin="".join(f"delete {ref} {oid}\n" for ref, oid in wrong).encode(),
            )  # fmt: skip
            for ref, _ in wrong:
                refused.append(ref[len(local_root) :][:200])
                after.pop(ref, None)
        pruned = _prune(repo, remote, there, before, after) if prune else []
        merged = False
        if repo.resolve_ref(notes_tmp) is not None:
            progress(f"merging {remote}'s notes")
            notes_before = repo.resolve_ref(NOTES_REF)
            # Before the merge: killed between the two, a forged date would stand for good
            # (the next fetch finds those lines merged already).
            record_fetched(repo, notes_before, repo.resolve_ref(notes_tmp))
            merge_notes(repo, NOTES_REF, notes_tmp)
            notes_after = repo.resolve_ref(NOTES_REF)
            # A merge commit is made even when nothing new came: compare what they hold.
            merged = notes_after != notes_before and repo.resolve_ref(
                f"{notes_after}^{{tree}}"
            ) != (repo.resolve_ref(f"{notes_before}^{{tree}}") if notes_before else None)
    finally:
        _drop_root(repo, root)

    new = [_fetched_name(r) for r in sorted(after) if r not in before]
    updated = [
        _fetched_name(r) for r in sorted(after) if r in before and after[r][0] != before[r][0]
    ]
    return FetchOutcome(remote, new, updated, sorted(set(refused)), merged, unsafe, pruned)


def _fetched_name(ref: str) -> str:
    """refs/checkpoints/remotes/origin/task/cp_001 -> origin/task/cp_001."""
    return ref[len(REMOTE_ROOT) :]


def _prune(
    repo: Repo,
    remote: str,
    there: dict[str, str],
    before: dict[str, tuple[str, str]],
    after: dict[str, tuple[str, str]],
) -> list[Pruned]:
    """Drop the fetched checkpoints `remote` no longer has: those here before this fetch,
    left as they were by it, and not among the refs the remote listed (one that came in
    with this fetch is there, even if pushed after the listing). Each is logged with its
    commit before it goes, as `drop` does, so `git update-ref` brings it back."""
    local_root = f"{REMOTE_ROOT}{remote}/"
    gone = [
        Pruned(_fetched_name(ref), ref, oid)
        for ref, (oid, _) in sorted(after.items())
        if ref in before
        and before[ref][0] == oid
        and f"{REF_ROOT}{ref[len(local_root) :]}" not in there
    ]
    for p in gone:
        oplog.log_event(
            repo, "fetch-prune", remote=remote, checkpoint=p.name, commit=p.commit, ref=p.ref
        )
    if gone:
        repo.git(
            "update-ref", "--stdin",
            stdin="".join(f"delete {p.ref} {p.commit}\n" for p in gone).encode(),
        )  # fmt: skip
        for p in gone:
            after.pop(p.ref, None)
    return gone


_NOTE_MODES = (0o100644, 0o100755)


def _not_a_note(repo: Repo, ref: str) -> str | None:
    """An entry of a notes commit's tree that is neither a note (a file) nor a fan-out
    folder, named; None when every entry is one of those."""
    import pygit2

    folders = [repo.odb.references[ref].peel(pygit2.Commit).tree]
    while folders:
        for entry in folders.pop():
            if entry.filemode == pygit2.GIT_FILEMODE_TREE:
                folders.append(repo.odb[entry.id].peel(pygit2.Tree))
            elif entry.filemode not in (
                pygit2.GIT_FILEMODE_BLOB,
                pygit2.GIT_FILEMODE_BLOB_EXECUTABLE,
            ):
                return f"{printable(entry.name or '', 60)!r} (mode {entry.filemode:o})"
    return None


def _fetch(repo: Repo, remote: str, refspecs: list[str]) -> None:
    repo.git(
        *_CHECKED, "fetch", "-q", "--no-tags", "--no-write-fetch-head",
        "--no-recurse-submodules", "--refmap=", "--stdin", remote,
        stdin="".join(f"{spec}\n" for spec in refspecs).encode(),
    )  # fmt: skip


# How git's object check names what it refused: "error: object <id>: <check>: <why>".
_FSCK_ERROR = re.compile(r"error: object [0-9a-f]+: (\w+: [^\n]*)")


def _fetch_checked(repo: Repo, remote: str, there: dict[str, str], local_root: str) -> list[str]:
    """Fetch the remote's checkpoints in one go; when git's object check refuses what
    one of them holds (the whole fetch then writes nothing), fetch them again in halves
    until each refused one is found, so the others still come in. The refused ones,
    named with git's reason; none of their objects is written."""
    try:
        _fetch(repo, remote, [f"+{REF_ROOT}*:{local_root}*"])
        return []
    except GitFailed as exc:
        if not _FSCK_ERROR.search(exc.stderr):
            raise
    wanted = [r for r in sorted(there) if r != NOTES_REF and not checkpoint_name_problem(r)]
    refused: list[str] = []
    groups = [wanted] if wanted else []  # (none: what failed is named as no checkpoint)
    while groups:
        group = groups.pop()
        try:
            _fetch(repo, remote, [f"+{r}:{local_root}{r[len(REF_ROOT) :]}" for r in group])
        except GitFailed as exc:
            found = _FSCK_ERROR.search(exc.stderr)
            if found is None:
                raise
            if len(group) == 1:
                refused.append(f"{group[0][len(REF_ROOT) :][:200]} ({found[1][:120]})")
            else:
                groups += [group[: len(group) // 2], group[len(group) // 2 :]]
    return refused


def _local_name_problem(ref: str, local_root: str) -> str | None:
    """checkpoint_name_problem of the remote ref a fetched one came from."""
    return checkpoint_name_problem(REF_ROOT + ref[len(local_root) :])
