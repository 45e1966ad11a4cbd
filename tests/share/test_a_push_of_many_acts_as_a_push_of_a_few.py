"""A push of many checkpoints acts as a push of a few for what a careful user of git
relies on: the pre-push hook runs in this repository, the config git would read for this
repository applies, a name taken while pushing is said to be taken, and doctor names what
a killed push leaves. A case of the hooks or the config runs just under and at
PUSH_ELSEWHERE_FROM: both ways of pushing must agree."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from git_checkpoint.share.remotes import PUSH_ELSEWHERE_FROM

from ..conftest import Repo, make_repo
from ..servers import bare_repo, publish
from .test_pushing_many_checkpoints import _many, _refs, _server_saying_push_options

COUNTS = pytest.mark.parametrize("count", [PUSH_ELSEWHERE_FROM - 1, PUSH_ELSEWHERE_FROM])


def _hook(repo: Repo, name: str, body: str) -> None:
    hook = repo.path / ".git" / "hooks" / name
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(f"#!/bin/sh\n{body}")
    hook.chmod(0o755)


@COUNTS
def test_the_pre_push_hook_runs_in_this_repository(repo: Repo, tmp_path: Path, count: int) -> None:
    # What hooks such as git-lfs's rely on: HEAD, their own state under the git dir,
    # refs they write kept, and git run elsewhere acting there.
    other = make_repo(tmp_path / "other")
    other.git("config", "remote.origin.url", "/srv/other.git")
    server = bare_repo(tmp_path / "server.git")
    a = publish(repo, server.as_uri())
    wanted = _many(a, count)
    seen, elsewhere = tmp_path / "seen", tmp_path / "elsewhere"
    _hook(
        a,
        "pre-push",
        f'git rev-parse -q --verify HEAD >> "{seen}"\n'
        f'git rev-parse --absolute-git-dir >> "{seen}"\n'
        "while read local lsha remote rsha; do\n"
        '  git update-ref "refs/pushed/${remote##*/}" "$lsha" || exit 1\n'
        "done\n"
        f'cd "{other.path}" && git config --get-all remote.origin.url > "{elsewhere}"\n',
    )

    a.cp("push")

    head = a.git("rev-parse", "HEAD").strip()
    assert seen.read_text().split() == [head, str((a.path / ".git").resolve())]
    marked = a.git("for-each-ref", "--format=%(refname)", "refs/pushed/").split()
    assert len(marked) == count
    assert elsewhere.read_text().split() == ["/srv/other.git"]
    assert _refs(server) == wanted


@COUNTS
def test_config_git_reads_for_this_repository_reaches_the_push(
    repo: Repo, tmp_path: Path, count: int
) -> None:
    # A push option from each place git finds config for this repository beside its
    # .git/config: a global include on its git dir, one on its branch, its worktree's.
    server, said = _server_saying_push_options(tmp_path)
    a = publish(repo, server.as_uri())
    wanted = _many(a, count)
    a.git("checkout", "-q", "-b", "feature")
    a.git("config", "extensions.worktreeConfig", "true")
    a.git("config", "--worktree", "push.pushOption", "worktree")
    for name, condition in [
        ("gitdir", f"gitdir:{(a.path / '.git').resolve()}"),
        ("onbranch", "onbranch:feature"),
    ]:
        included = tmp_path / f"{name}.gitconfig"
        included.write_text(f"[push]\n\tpushOption = {name}\n")
        subprocess.run(
            ["git", "config", "--global", f"includeIf.{condition}.path", str(included)],
            check=True,
        )

    a.cp("push", "--task", "main")

    assert said.read_text().split() == ["gitdir", "onbranch", "worktree"]
    assert _refs(server) == wanted


@pytest.mark.parametrize("count", [1, PUSH_ELSEWHERE_FROM])
def test_a_name_taken_while_pushing_is_said_to_be_taken(
    repo: Repo, tmp_path: Path, count: int
) -> None:
    # Another machine creates a name after our push read the remote's refs and before
    # it updates them: the remote refuses our create of that name.
    server = bare_repo(tmp_path / "server.git")
    a = publish(repo, server.as_uri())
    wanted = _many(a, count)
    other = tmp_path / "other"
    subprocess.run(["git", "clone", "-q", server.as_uri(), str(other)], check=True)
    (other / "other.txt").write_text("another machine\n")
    subprocess.run(["git", "add", "other.txt"], cwd=other, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "other"], cwd=other, check=True)
    _hook(
        a,
        "pre-push",
        "cat > /dev/null\nunset GIT_DIR GIT_WORK_TREE GIT_INDEX_FILE GIT_CONFIG_PARAMETERS\n"
        f'cd "{other}" && git push --no-verify -q origin HEAD:refs/checkpoints/main/cp_001\n',
    )

    refused = a.cp("push", expect=3)

    assert "main/cp_001" in refused.stderr and "taken while pushing" in refused.stderr, (
        refused.stderr
    )
    if count > 1:
        assert f"the others were pushed ({count - 1}" in refused.stderr, refused.stderr
    theirs = _refs(server)
    assert {ref: oid for ref, oid in theirs.items() if ref != "refs/checkpoints/main/cp_001"} == {
        ref: oid for ref, oid in wanted.items() if ref != "refs/checkpoints/main/cp_001"
    }


def test_doctor_names_what_a_killed_push_of_many_left_at_once(repo: Repo, tmp_path: Path) -> None:
    # As it names the temporary refs of a killed push of a few
    # (test_a_killed_push_or_fetch_is_finished_by_the_next).
    server = bare_repo(tmp_path / "server.git")
    a = publish(repo, server.as_uri())
    _many(a)
    started = tmp_path / "started"
    _hook(a, "pre-push", f'cat > /dev/null\ntouch "{started}"\nsleep 30\n')
    # Not through `git checkpoint`: killed, the push is then our child, reaped by the
    # wait below, and its pid no longer names a running process.
    push = subprocess.Popen(
        ["git-checkpoint", "push"],
        cwd=a.path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 20
    while not started.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    os.killpg(push.pid, signal.SIGKILL)
    push.wait()
    assert started.exists()

    doctor = a.cp("doctor", expect=None)

    left = [p.name for p in (a.path / ".git").glob("checkpoint-refs-*")]
    assert left, "the kill came after the push removed its scratch repository"
    assert left[0] in doctor.stdout, doctor.stdout


@COUNTS
def test_a_config_entry_named_alone_with_an_equals_sign_in_its_subsection_is_read_as_git_reads_it(
    repo: Repo, tmp_path: Path, count: int
) -> None:
    # A boolean written as its name alone, under a URL with a query: git reads
    # http.<url>.sslVerify as true; split at its "=", it is no key git accepts.
    server = bare_repo(tmp_path / "server.git")
    a = publish(repo, server.as_uri())
    wanted = _many(a, count)
    with (a.path / ".git" / "config").open("a") as config:
        config.write('[http "https://example.com/?a=b"]\n\tsslVerify\n')

    a.cp("push")

    assert _refs(server) == wanted


@COUNTS
def test_a_config_larger_than_one_environment_variable_holds_reaches_the_push(
    repo: Repo, tmp_path: Path, count: int
) -> None:
    # A long-lived clone's tracking config, thousands of branches: more than Linux lets
    # one environment variable or argument hold (MAX_ARG_STRLEN, 128 KiB).
    server, said = _server_saying_push_options(tmp_path)
    a = publish(repo, server.as_uri())
    wanted = _many(a, count)
    with (a.path / ".git" / "config").open("a") as config:
        for n in range(2000):
            config.write(
                f'[branch "feature/{n:05d}"]\n\tremote = origin\n'
                f"\tmerge = refs/heads/feature/{n:05d}\n"
            )
        config.write("[push]\n\tpushOption = after-the-branches\n")
    assert len(a.git("config", "--list", "-z").encode()) > 128 * 1024

    a.cp("push")

    assert said.read_text().split() == ["after-the-branches"]
    assert _refs(server) == wanted


@COUNTS
def test_a_pre_push_hook_without_an_interpreter_line_runs_in_the_shell(
    repo: Repo, tmp_path: Path, count: int
) -> None:
    # git runs an executable hook the kernel cannot start (no #! line) with /bin/sh.
    server = bare_repo(tmp_path / "server.git")
    a = publish(repo, server.as_uri())
    wanted = _many(a, count)
    seen = tmp_path / "seen"
    hook = a.path / ".git" / "hooks" / "pre-push"
    hook.parent.mkdir(exist_ok=True)
    hook.write_text(f'cat > "{seen}"\n')
    hook.chmod(0o755)

    a.cp("push")

    assert len(seen.read_text().splitlines()) == count
    assert _refs(server) == wanted


@COUNTS
def test_git_config_in_the_environment_leaves_the_push_reading_this_repositorys_config(
    repo: Repo, tmp_path: Path, count: int
) -> None:
    # GIT_CONFIG names the one file `git config` reads (as --file would); git push
    # ignores it and reads this repository's config.
    server, said = _server_saying_push_options(tmp_path)
    a = publish(repo, server.as_uri())
    wanted = _many(a, count)
    a.git("config", "push.pushOption", "from-this-repository")
    elsewhere = tmp_path / "elsewhere.gitconfig"
    elsewhere.write_text("[user]\n\tname = Someone Else\n")

    a.cp("push", env={"GIT_CONFIG": str(elsewhere)})

    assert said.read_text().split() == ["from-this-repository"]
    assert _refs(server) == wanted
