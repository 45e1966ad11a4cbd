"""A manifest or a task record is plain data, written and read back without importing
PyYAML: whatever the writer writes, PyYAML reads as the same data; whatever the reader
accepts, PyYAML reads as the data it returns; anything else it leaves to PyYAML."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from git_checkpoint.core import yamltext

_WORDS = st.sampled_from(
    ["", "main", "cp_001", "true", "No", "null", "~", "1", "-1", "0x1f", "1.5", "1e3", ".inf",
     "2026-01-01", "2026-12-06T19:50:01Z", "a: b", "- x", "#x", "x #y", "'q'", '"q"', "\\",
     "\\/", "é", "\x85", "\u2028", "\ufeff", "\x7f", "\t", "\n", "😀", "<<", "=", "?", "@x",
     "node_modules/", ".tox/", "y", "off", "_", "a b", "fix the bug", "a  b", "a b ", "a - b",
     "a #b", "a=b", "x+y ~z", "0b101101", "0acf9614", "deadbeef", "1234567e89", "1e5", "0x1f3a",
     "0acf9614134383488c5b40d8f0b78ecba4f2c0d9", "ABCDEF01", "Yes", "NULL", "=", "+", "/", "=ab",
     "+1", "012", "0o17", "+0x1f", "7Hq9vK2mXp4RtY8w"]
)  # fmt: skip
_TEXT = st.one_of(_WORDS, st.text(max_size=12), st.text(st.characters(codec="utf-8"), max_size=8))
_SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    _TEXT,
)
_DATA = st.recursive(
    _SCALAR,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_TEXT, inner, max_size=4)),
    max_leaves=20,
)
_RECORD = st.dictionaries(_TEXT, _DATA, max_size=6)


@settings(max_examples=600, deadline=None)
@given(_RECORD)
def test_what_the_writer_writes_pyyaml_reads_as_the_same_data(data: dict[str, Any]) -> None:
    try:
        text = yamltext.dump(data)
    except yamltext.Unsupported:
        return  # (the caller writes it with PyYAML)
    assert yaml.safe_load(text) == data
    assert yamltext.load(text) == data


@settings(max_examples=600, deadline=None)
@given(_RECORD)
def test_the_reader_reads_pyyamls_own_text_alike_or_leaves_it(data: dict[str, Any]) -> None:
    for style in ({}, {"default_flow_style": True}, {"width": 20}):
        text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, **style)
        read = yamltext.load(text)
        assert read is None or read == yaml.safe_load(text)


_PIECES = st.sampled_from(
    ["a", "b", ":", ": ", "- ", "  ", " ", '"', "\\", "u", "d83d", "x", "1", ".", "-", "null",
     "true", "{}", "[]", "\n", "#", "'", "\\u00e9", "\\/", "\\n", "é", "\x85", "\u2028", "_"]
)  # fmt: skip


@settings(max_examples=1500, deadline=None)
@given(st.lists(_PIECES, max_size=40))
def test_text_the_reader_accepts_pyyaml_reads_as_the_same_data(pieces: list[str]) -> None:
    text = "".join(pieces) + "\n"
    read = yamltext.load(text)
    if read is not None:
        assert yaml.safe_load(text) == read


def test_a_manifest_reads_as_block_yaml() -> None:
    manifest = {
        "run_id": "run_2026_12_06_2013",
        "repo": None,
        "task": "main",
        "base_commit": "0acf9614134383488c5b40d8f0b78ecba4f2c0d9",
        "created_at": "2026-12-06T20:13:56Z",
        "tracked_files": {"from_git": True},
        "untracked": {"include": [], "exclude": ["node_modules/", ".tox/"]},
        "overlay": {"files": 1, "bytes": 2},
        "verifiers": [{"name": "unit", "command": "pytest -q", "timeout": 600.0}],
        "notes": ['fix: the "thing" — ünïcode'],
        "left_out": [{"path": "big.bin", "reasons": ["larger than 50 MiB"]}],
        "auto": False,
    }
    assert yamltext.dump(manifest) == (
        "run_id: run_2026_12_06_2013\n"
        "repo: null\n"
        "task: main\n"
        "base_commit: 0acf9614134383488c5b40d8f0b78ecba4f2c0d9\n"
        'created_at: "2026-12-06T20:13:56Z"\n'
        "tracked_files:\n"
        "  from_git: true\n"
        "untracked:\n"
        "  include: []\n"
        "  exclude:\n"
        "  - node_modules/\n"
        '  - ".tox/"\n'
        "overlay:\n"
        "  files: 1\n"
        "  bytes: 2\n"
        "verifiers:\n"
        "- name: unit\n"
        "  command: pytest -q\n"
        "  timeout: 600.0\n"
        "notes:\n"
        '- "fix: the \\"thing\\" — ünïcode"\n'
        "left_out:\n"
        "- path: big.bin\n"
        "  reasons:\n"
        "  - larger than 50 MiB\n"
        "auto: false\n"
    )
    assert (
        yamltext.load(yamltext.dump(manifest))
        == manifest
        == yaml.safe_load(yamltext.dump(manifest))
    )


@pytest.mark.parametrize(
    "data",
    [{"x": [[1]]}, {"x": float("inf")}, {"x": 1e300}, {1: "a"}, {"x": object()}, {"x": "\ud800"},
     {"k" * 1001: 1}],
    ids=["a list in a list", "infinity", "an exponent", "a number as key", "an object",
         "a lone surrogate", "a key longer than a simple key"],
)  # fmt: skip
def test_data_outside_the_form_is_left_to_pyyaml(data: dict[Any, Any]) -> None:
    with pytest.raises(yamltext.Unsupported):
        yamltext.dump(data)


@pytest.mark.parametrize(
    "text",
    ["a: 1", "a:\n", "a: 1\n\n", "a: yes\n", "a: 'x'\n", "a: x #y\n", "a: 01\n", "a: 1e3\n",
     "a: 2026-01-01\n", "a: &x 1\n", "---\na: 1\n", "a: 1 # c\n", 'a: "\\ud83d\\ude00"\n',
     'a: "\\/"\n', "a:\n- [1]\n", "k" * 1001 + ": 1\n", "- a\n", " a: 1\n", "a: 1\na: 2\n",
     "true: 1\n"],
)  # fmt: skip
def test_text_outside_the_form_is_left_to_pyyaml(text: str) -> None:
    assert yamltext.load(text) is None


_EDIT_CHARS = st.sampled_from([*" -:\"'\\#&*!|>{}[],?\n\tu0dy.1eé\x85", "\\u", "\\ud83d"])


@settings(max_examples=1500, deadline=None)
@given(_RECORD, st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 2), _EDIT_CHARS),
                         min_size=1, max_size=3))  # fmt: skip
def test_written_text_edited_is_read_as_pyyaml_reads_it_or_left(
    data: dict[str, Any], edits: list[tuple[int, int, str]]
) -> None:
    """A hand edit or a forged manifest: one, two or three characters inserted, replaced
    or deleted anywhere in text the writer wrote."""
    try:
        text = yamltext.dump(data)
    except yamltext.Unsupported:
        return
    for where, how, char in edits:
        at = where % (len(text) + 1)
        if how == 0:
            text = text[:at] + char + text[at:]
        elif how == 1:
            text = text[:at] + char + text[at + 1 :]
        else:
            text = text[:at] + text[at + 1 :]
    read = yamltext.load(text)
    if read is not None:
        assert yaml.safe_load(text) == read
