"""What a save starts ahead of the capture: the includes' listing (save/capture) runs
beside the listing of the task's checkpoints, once; when it fails, the capture runs it
again and reports what git says."""

from __future__ import annotations

from pathlib import Path

from ..conftest import Repo
from ..launcher import launch_via_shell as launch
from ..launcher import traced, wrapper_env


def included(repo: Repo) -> None:
    repo.write(".gitignore", "gen/\n")
    repo.write(".checkpoint.yaml", "untracked:\n  include: [gen/]\n")
    repo.commit_all("rules")
    repo.write("gen/out.txt", "generated\n")
    repo.write("gen/deep/more.txt", "more\n")


def overlay(repo: Repo, name: str) -> list[str]:
    listed = repo.git("ls-tree", "-r", "--name-only", f"refs/checkpoints/main/{name}^3")
    return sorted(listed.split())


def test_the_includes_are_listed_once(repo: Repo) -> None:
    included(repo)
    calls = traced(repo, "save", "-m", "one")
    assert len([c for c in calls if "ls-files" in c and "-o" in c and "gen/" in c]) == 1
    assert overlay(repo, "cp_001") == ["gen/deep/more.txt", "gen/out.txt"]


def test_a_listing_that_failed_ahead_runs_again(repo: Repo, tmp_path: Path) -> None:
    """The first `ls-files -o` (the one started ahead) exits 1: the capture asks again."""
    included(repo)
    marker = tmp_path / "failed-once"
    body = (
        f'case " $* " in *" ls-files -z -o "*) '
        f'[ -e "{marker}" ] || {{ : > "{marker}"; exit 1; }};; esac'
    )
    proc = launch(repo, "save", "-m", "one", env=wrapper_env(tmp_path, body))
    assert proc.returncode == 0, proc.stderr
    assert marker.exists()
    assert overlay(repo, "cp_001") == ["gen/deep/more.txt", "gen/out.txt"]


def test_a_listing_that_fails_twice_is_the_save_s_error(repo: Repo, tmp_path: Path) -> None:
    included(repo)
    body = 'case " $* " in *" ls-files -z -o "*) echo "fatal: no listing" >&2; exit 128;; esac'
    proc = launch(repo, "save", "-m", "one", env=wrapper_env(tmp_path, body))
    assert proc.returncode != 0 and "no listing" in proc.stderr
    assert proc.stderr.count("\n") == 1
    assert repo.git("for-each-ref", "refs/checkpoints") == ""
