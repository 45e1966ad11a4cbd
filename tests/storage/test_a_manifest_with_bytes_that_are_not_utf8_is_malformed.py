"""A checkpoint's commit message is read with undecodable bytes kept as lone surrogates.
A manifest holding such bytes is no YAML (YAML text is Unicode): the reader of what this
tool writes leaves it to PyYAML, which refuses it, and the checkpoint is malformed, as a
fetched, hostile one must be."""

from __future__ import annotations

import pytest
import yaml

from git_checkpoint.core import yamltext
from git_checkpoint.storage.manifest import parse_manifest

from ..conftest import Repo

LATEST = "refs/checkpoints/main/cp_001"
NOT_UTF8 = b"caf\xe9 \xff".decode("utf-8", "surrogateescape")


@pytest.mark.parametrize(
    "body",
    [
        f'task: main\nhypothesis: "{NOT_UTF8}"\n',
        f'task: main\n"{NOT_UTF8}": 1\n',
        f'task: main\nnotes:\n- "{NOT_UTF8}"\n',
    ],
    ids=["a value", "a key", "a list item"],
)
def test_text_with_a_lone_surrogate_is_left_to_pyyaml(body: str) -> None:
    with pytest.raises(yaml.YAMLError):
        yaml.safe_load(body)
    assert yamltext.load(body) is None
    assert parse_manifest(f"checkpoint cp_001 on main: x\n\n{body}") == (
        {},
        "manifest is not valid YAML",
    )


def test_a_checkpoint_whose_manifest_holds_bytes_that_are_not_utf8_is_malformed(
    repo: Repo,
) -> None:
    repo.write("src/app.py", "print('changed')\n")
    repo.cp("save", "-m", "plain", "--hypothesis", "café")
    raw = repo.git("cat-file", "commit", LATEST).encode("utf-8", "surrogateescape")
    assert b'hypothesis: "caf\xc3\xa9"' in raw
    forged = raw.replace(b'hypothesis: "caf\xc3\xa9"', b'hypothesis: "caf\xe9 \xff"')
    oid = repo.git("hash-object", "-t", "commit", "-w", "--stdin", input=forged).strip()
    repo.git("update-ref", LATEST, oid)
    listed = repo.cp_json("list")["checkpoints"]
    assert [c["id"] for c in listed] == ["cp_001"]
    assert "manifest is not valid YAML" in repo.cp("list").stdout
    shown = repo.cp("show", "cp_001", expect=2)
    assert "malformed: manifest is not valid YAML" in shown.stderr
