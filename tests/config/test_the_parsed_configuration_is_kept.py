"""What `.checkpoint.yaml` parsed to is kept in the git dir with the text it came from:
later commands and every hook's save read it back without PyYAML; a file that differs by
a byte is parsed again; a refused file is refused again with the same line; a cache that
is old, made by other code, broken or another work tree's is no cache."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from git_checkpoint.config.cache import CACHE_NAME
from git_checkpoint.config.parse import load_config, parse_config_text

from ..conftest import Repo
from .conftest import bad_config_error, config

CONFIG = """\
verifiers:
  - name: unit
    command: python -c 'print(1)'
    timeout: 30
  - {name: lint, command: 'true', required: false}
untracked:
  include: [notes/]
limits:
  overlay_max_bytes: 2 MiB
retention:
  keep_last: 7
secrets:
  allow: [fixtures/*.pem]
"""


def _cache(repo: Repo) -> Path:
    return repo.path / ".git" / "checkpoint" / CACHE_NAME


def _loaded(repo: Repo) -> object:
    return load_config(repo.path, [], cache=_cache(repo).parent)


def test_a_command_keeps_what_the_file_parsed_to_and_the_next_reads_it(repo: Repo) -> None:
    config(repo, CONFIG)
    repo.cp("save", "-m", "one")
    record = json.loads(_cache(repo).read_text())
    assert record["text"] == CONFIG
    assert _loaded(repo) == parse_config_text(CONFIG, repo.path / ".checkpoint.yaml")
    # (the same answer from the cache: a cache that read otherwise would differ here)
    record["config"]["retention"]["keep_last"] = 99
    _cache(repo).write_text(json.dumps(record))
    assert _loaded(repo).retention.keep_last == 99  # type: ignore[attr-defined]


def test_a_file_that_differs_by_a_byte_is_parsed_again(repo: Repo) -> None:
    config(repo, CONFIG)
    repo.cp("save", "-m", "one")
    config(repo, CONFIG.replace("keep_last: 7", "keep_last: 8"))
    assert _loaded(repo).retention.keep_last == 8  # type: ignore[attr-defined]
    assert json.loads(_cache(repo).read_text())["text"].count("keep_last: 8") == 1


def test_a_refused_file_is_refused_again_with_the_same_line(repo: Repo) -> None:
    config(repo, "retention:\n  keep_lats: 3\n")
    first = bad_config_error(repo)
    assert "error" in json.loads(_cache(repo).read_text())
    assert bad_config_error(repo) == first
    assert "keep_lats" in first and ".checkpoint.yaml:2:3" in first


def test_an_old_broken_or_other_cache_is_no_cache(repo: Repo) -> None:
    config(repo, CONFIG)
    repo.cp("save", "-m", "one")
    good = json.loads(_cache(repo).read_text())
    for changed in (
        {**good, "version": "0.0.1"},
        {**good, "shape": [["include"]]},
        {**good, "shape": [good["shape"][0], [[1, 1], [1, 1]]]},  # made by other code
        {**good, "path": "/elsewhere/.checkpoint.yaml"},
        {**good, "config": {"include": 1}},
        "not json {",
    ):
        _cache(repo).write_text(changed if isinstance(changed, str) else json.dumps(changed))
        assert _loaded(repo).retention.keep_last == 7  # type: ignore[attr-defined]


def test_a_save_after_the_first_does_not_import_pyyaml(repo: Repo) -> None:
    """A hook's save and a restore pay no PyYAML import: the configuration comes from the
    cache, the manifest and the task record are written and read as plain YAML."""
    config(repo, CONFIG)
    repo.cp("save", "-m", "one")
    repo.write("src/app.py", "print('two')\n")
    script = (
        "import sys\n"
        "from git_checkpoint.save.session import auto_save\n"
        "saved = auto_save(sys.argv[1], 'before Edit', found=None, lock_wait=30)\n"
        "print(saved.created, 'yaml' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", script, str(repo.path)], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["True", "False"]
    assert "cp_002" in repo.git("for-each-ref", "refs/checkpoints")
    proc = repo.cp("restore", "cp_001")
    assert "restored" in proc.stdout
