"""`.checkpoint.yaml` driven through the CLI: the files accepted, and every malformed,
unknown, duplicate or wrongly typed key refused in one line that names the file, the
line and the column."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from ..conftest import Repo
from ..helpers import checkpoint_refs
from .conftest import bad_config_error, config, location

# --- accepted files -------------------------------------------------------------------------------

DESIGN_EXAMPLE = """\
untracked:
  include: [tmp/test-fixtures/, .agent-state/]
  exclude: [node_modules/, .venv/]
verifiers:
  - name: html-link-check
    command: python3 scripts/check_blog_links.py
    required: true
    timeout: 300
  - name: visual-smoke
    command: npm run smoke
    required: false
promotion_rule: all_required_pass
retention: {keep_last: 20, max_age: 14d, keep_promoted: true}
limits: {overlay_max_bytes: 50MiB, overlay_max_files: 5000}
secrets: {on_save: warn, on_push: block, allow: []}
hooks:
  risky_commands: ["terraform apply"]   # extra patterns for the guard
"""


def test_design_example_is_accepted(repo: Repo) -> None:
    config(repo, DESIGN_EXAMPLE)
    repo.cp("save")
    m = repo.cp_json("show", "@", "--manifest")["manifest"]
    assert [v["name"] for v in m["verifiers"]] == ["html-link-check", "visual-smoke"]
    assert [v["required"] for v in m["verifiers"]] == [True, False]
    assert m["untracked"]["include"] == ["tmp/test-fixtures/", ".agent-state/"]
    assert {"node_modules/", ".venv/"} <= set(m["untracked"]["exclude"])


@pytest.mark.parametrize(
    "text",
    [
        "",
        "# only a comment\n",
        "untracked: {include: [a/]}\r\nlimits: {overlay_max_files: 3}\r\n",
        "\ufeffuntracked: {include: [a/]}\n",
        "limits: {overlay_max_bytes: 1024}\n",
        "limits: {overlay_max_bytes: 1.5MB}\n",
        "retention: {keep_last: 1, max_age: 3w, keep_promoted: false, keep_safety: 0}\n",
        "promotion_rule: all_pass\n",
        "secrets: {on_save: ignore, allow: ['.env.example']}\n",
        "verifiers: []\n",
    ],
)
def test_valid_files(repo: Repo, text: str) -> None:
    config(repo, text)
    repo.cp("list")
    repo.cp("save")


def test_explicit_empty_document_is_an_empty_config(repo: Repo) -> None:
    config(repo, "---\n# nothing configured yet\n")
    repo.cp("list")


def test_seed_single_verifier_form(repo: Repo) -> None:
    config(repo, "verifier: {command: python3 scripts/check_blog_links.py}\n")
    repo.cp("save")
    verifiers = repo.cp_json("show", "@", "--manifest")["manifest"]["verifiers"]
    assert len(verifiers) == 1
    assert verifiers[0]["command"] == "python3 scripts/check_blog_links.py"
    assert verifiers[0]["required"] is True
    shown = repo.cp_json("show", "@")
    assert [v["status"] for v in shown["verifiers"]] == ["not run"]


def test_seed_verifier_with_verifiers_list(repo: Repo) -> None:
    config(repo, "verifier: {command: make check}\nverifiers:\n  - {name: lint, command: ruff}\n")
    repo.cp("save")
    verifiers = repo.cp_json("show", "@", "--manifest")["manifest"]["verifiers"]
    assert sorted(v["command"] for v in verifiers) == ["make check", "ruff"]


def test_config_read_from_root_when_run_in_subdirectory(repo: Repo) -> None:
    config(repo, "limits: {overlay_max_files: 1}\n")
    repo.write("src/a.txt", "a\n")
    proc = repo.cp("save", cwd=repo.path / "src")  # the limit at the top applies
    assert "left out: src/" in proc.stdout and "over overlay_max_files" in proc.stdout
    config(repo, "bogus: 1\n")
    bad = repo.cp("list", expect=2, cwd=repo.path / "src")
    assert "bogus" in bad.stderr


def test_linked_worktree_reads_its_own_config(repo: Repo, tmp_path: Path) -> None:
    wt = tmp_path / "wt"
    repo.git("worktree", "add", "-q", "-b", "side", str(wt))
    (wt / ".checkpoint.yaml").write_text("bogus: 1\n")
    proc = repo.cp("list", expect=2, cwd=wt)
    assert "bogus" in proc.stderr
    repo.cp("list")  # the main worktree has no config, and is fine


# --- malformed YAML -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("untracked:\n  include: [a, b\nlimits: {}\n", 3),
        ("untracked:\n\t- a\n", 2),
        ("untracked:\n  include: [a]\n   exclude: [b]\n", 3),
        ("limits: {overlay_max_files: 3\n", 2),
        ("a: &x 1\nb: *y\n", 2),
        ("---\nuntracked: {}\n---\nlimits: {}\n", 3),
        ('hooks: {risky_commands: ["unterminated]}\n', 2),
    ],
)
def test_malformed_yaml(repo: Repo, text: str, line: int) -> None:
    config(repo, text)
    err = bad_config_error(repo)
    got_line, col = location(err)
    assert got_line == line
    assert col >= 1
    # every command reads the config: most refuse it, a save goes on with the defaults
    for args in (["log"], ["show"], ["diff"], ["drop", "cp_001"], ["verify"]):
        assert ".checkpoint.yaml" in bad_config_error(repo, *args)
    assert checkpoint_refs(repo) == []
    proc = repo.cp("save")
    assert proc.stdout.startswith("checkpoint saved: cp_001")
    assert ".checkpoint.yaml" in proc.stderr and "using the default settings" in proc.stderr


def test_not_utf8(repo: Repo) -> None:
    config(repo, b"untracked: {include: [\xff\xfe]}\n")
    assert ".checkpoint.yaml" in bad_config_error(repo)


# --- unknown keys ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "key", "line"),
    [
        ("bogus: 1\n", "bogus", 1),
        ("untracked: {include: [a]}\nverifers: []\n", "verifers", 2),
        ("untracked: {inclde: [x]}\n", "inclde", 1),
        ("untracked:\n  include: [a]\n  exclud: [b]\n", "exclud", 3),
        ("limits: {max_files: 3}\n", "max_files", 1),
        ("verifiers:\n  - name: a\n    command: b\n    requird: true\n", "requird", 4),
        ("verifier: {cmd: make}\n", "cmd", 1),
        ("retention: {keep: 3}\n", "keep", 1),
        ("secrets: {alow: []}\n", "alow", 1),
        ("hooks: {risky: []}\n", "risky", 1),
    ],
)
def test_unknown_keys(repo: Repo, text: str, key: str, line: int) -> None:
    config(repo, text)
    err = bad_config_error(repo)
    assert key in err
    assert location(err)[0] == line


def test_duplicate_key(repo: Repo) -> None:
    config(repo, "untracked:\n  include: [a]\n  include: [b]\n")
    err = bad_config_error(repo)
    assert "include" in err
    assert location(err)[0] == 3


# --- wrong types and values -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("- a\n- b\n", "config"),
        ("just a string\n", "config"),
        ("untracked: [a, b]\n", "untracked"),
        ("untracked: {include: tmp/}\n", "untracked.include"),
        ("untracked: {include: [[a]]}\n", "untracked.include"),
        ("untracked: {exclude: [{a: 1}]}\n", "untracked.exclude"),
        ("untracked: {include: ['']}\n", "untracked.include"),
        ("limits: {overlay_max_files: many}\n", "limits.overlay_max_files"),
        ("limits: {overlay_max_files: true}\n", "limits.overlay_max_files"),
        ("limits: {overlay_max_files: 0}\n", "limits.overlay_max_files"),
        ("limits: {overlay_max_files: -5}\n", "limits.overlay_max_files"),
        ("limits: {overlay_max_files: 2.5}\n", "limits.overlay_max_files"),
        ("limits: {overlay_max_bytes: lots}\n", "limits.overlay_max_bytes"),
        ("limits: {overlay_max_bytes: 5 parsecs}\n", "limits.overlay_max_bytes"),
        ("limits: {overlay_max_bytes: [1]}\n", "limits.overlay_max_bytes"),
        ("limits: 5\n", "limits"),
        ("verifiers: {name: a, command: b}\n", "verifiers"),
        ("verifiers: [{name: a}]\n", "command"),
        ("verifiers: [{name: a, command: [x]}]\n", "command"),
        ("verifiers: [{name: a, command: b, required: maybe}]\n", "required"),
        ("verifiers: [{name: a, command: b, timeout: soon}]\n", "timeout"),
        ("verifiers: [{name: a, command: b, timeout: -1}]\n", "timeout"),
        ("verifiers: [{name: 'has space', command: b}]\n", "name"),
        ("verifiers: [{name: a, command: b}, {name: a, command: c}]\n", "a"),
        ("verifier: make test\n", "verifier"),
        ("promotion_rule: sometimes\n", "promotion_rule"),
        ("promotion_rule: [all_pass]\n", "promotion_rule"),
        ("retention: {keep_last: 0}\n", "retention.keep_last"),
        ("retention: {max_age: forever}\n", "retention.max_age"),
        ("retention: {keep_promoted: sure}\n", "retention.keep_promoted"),
        ("secrets: {on_save: maybe}\n", "secrets.on_save"),
        ("secrets: {on_push: allow}\n", "secrets.on_push"),
        ("secrets: {allow: .env}\n", "secrets.allow"),
        ("hooks: {risky_commands: rm -rf}\n", "hooks.risky_commands"),
    ],
)
def test_wrong_types(repo: Repo, text: str, field: str) -> None:
    config(repo, text)
    err = bad_config_error(repo, "verify")
    assert field in err
    location(err)
    assert checkpoint_refs(repo) == []


@pytest.mark.parametrize(
    "text",
    [
        "promotion_rule: !!python/name:os.system x\n",
        'limits: {overlay_max_files: !!int "x"}\n',
    ],
)
def test_unconstructable_yaml_tag_is_a_config_error(repo: Repo, text: str) -> None:
    config(repo, text)
    err = bad_config_error(repo)
    location(err)


def test_include_outside_the_repository_is_a_config_error(repo: Repo) -> None:
    (repo.path.parent / "outside.txt").write_text("not ours\n")
    config(repo, "untracked:\n  include: [../outside.txt]\n")
    err = bad_config_error(repo, "verify")
    assert ".checkpoint.yaml" in err


def test_no_traceback_for_bad_config_even_in_json_mode(repo: Repo) -> None:
    config(repo, "untracked: {inclde: [x]}\n")
    proc = repo.cp("verify", "--json", expect=2)
    assert "Traceback" not in proc.stderr
    assert "inclde" in proc.stderr
    if proc.stdout.strip():
        assert isinstance(json.loads(proc.stdout), dict)


def test_debug_shows_traceback_for_bad_config(repo: Repo) -> None:
    config(repo, "bogus: 1\n")
    proc = repo.cp("list", expect=None, env={"GIT_CHECKPOINT_DEBUG": "1"})
    assert proc.returncode != 0
    assert "Traceback" in proc.stderr


def test_config_change_alone_does_not_break_dedupe(repo: Repo) -> None:
    """Saving twice with the same committed config and nothing else changed dedupes."""
    config(repo, DESIGN_EXAMPLE)
    repo.git("add", ".checkpoint.yaml")
    repo.git("commit", "-q", "-m", "config")
    repo.cp("save")
    assert repo.cp("save").stdout.strip() == "unchanged since cp_001"
    assert subprocess.run(["git", "fsck", "--strict"], cwd=repo.path, check=False).returncode == 0


@pytest.mark.parametrize(
    ("text", "where", "what"),
    [
        (
            'verifiers:\n  - {name: a, command: "x"}\n  - {name: a, command: "y"}\n',
            ":3:5:",
            "verifier name 'a' is used twice",
        ),
        ('verifiers:\n  - {name: a, command: "x", timeout: 1e300}\n', ":2:", "text '1e300'"),
        ("verifiers:\n  - {name: a, command: true}\n", ":2:", "must be a string, not true"),
    ],
)
def test_errors_point_at_the_value_and_say_what_yaml_read(
    repo: Repo, text: str, where: str, what: str
) -> None:
    """Each error points at the value it is about and says what YAML read there: a second
    verifier of the same name at its own line (not 1:1), `1e300` (text to YAML 1.1) and
    `command: true` (a boolean) as what they are, not only as 'must be ...'."""
    config(repo, text)
    error = bad_config_error(repo)
    assert where in error and what in error, error
