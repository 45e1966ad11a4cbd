"""core/cjson reads and writes JSON through CPython's `_json` alone (the hook path does
not import the `json` package, which loads `re`): the same values and the same text as
`json.loads` and `json.dumps`, and a ValueError for what is not one JSON value."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from git_checkpoint.core import cjson

from ..fast.test_hook_start_up import ROOT

SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text()
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@given(VALUES)
def test_what_json_writes_is_read_back_as_json_reads_it(value: object) -> None:
    for ascii_only in (True, False):
        text = json.dumps(value, ensure_ascii=ascii_only)
        assert cjson.dumps(value, ensure_ascii=ascii_only) == text
        assert cjson.loads(text) == json.loads(text)


@pytest.mark.parametrize(
    "text",
    ['  {"a": [1, 2.5e3, -0, true]}\n', "[]", '"\\ud800"', "1e400", "[NaN, -Infinity]"],
)
def test_the_forms_json_accepts_read_alike(text: str) -> None:
    assert repr(cjson.loads(text)) == repr(json.loads(text))


def test_not_a_number_is_written_as_json_writes_it() -> None:
    assert cjson.dumps([math.nan, math.inf]) == json.dumps([math.nan, math.inf])


@pytest.mark.parametrize(
    "text", ["", "   ", "[1,", '{"a" 1}', "[1] x", '"a\nb"', "{'a': 1}", "nul", "\ufeff{}"]
)
def test_what_is_not_one_json_value_is_a_value_error(text: str) -> None:
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        cjson.loads(text)


def test_what_json_cannot_write_is_refused() -> None:
    looped: list[object] = []
    looped.append(looped)
    with pytest.raises(ValueError):
        cjson.dumps(looped)
    with pytest.raises(TypeError):
        cjson.dumps({"a": object()})
    assert cjson.dumps({"a": [1]}) == '{"a": [1]}'  # a refusal leaves nothing behind


def test_reading_and_writing_loads_neither_json_nor_re() -> None:
    code = (
        f"import sys; sys.path.insert(0, {ROOT!r})\n"
        "from git_checkpoint.core import cjson\n"
        "assert cjson.loads(cjson.dumps({'a': ['é', 1.5, None]})) == {'a': ['é', 1.5, None]}\n"
        "print(sorted(m for m in ('json', 're', 'enum') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["[]"]
