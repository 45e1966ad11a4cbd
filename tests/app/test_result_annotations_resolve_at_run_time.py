"""Every dataclass of the package has annotations a run-time reader can resolve
(`typing.get_type_hints`): the MCP server builds its tools' schemas from the result
dataclasses so, and a program using the Python API may too. The save, restore and hook
paths do not load typing; their `Any` resolves to `object`, which reads as any value."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import typing

import pytest

import git_checkpoint


def _dataclasses() -> list[type]:
    found = []
    for info in pkgutil.walk_packages(git_checkpoint.__path__, "git_checkpoint."):
        if info.name.endswith("__main__"):
            continue  # it runs the command line
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # an optional extra (mcp) that is not installed
            continue
        for obj in vars(module).values():
            if (
                isinstance(obj, type)
                and dataclasses.is_dataclass(obj)
                and obj.__module__ == module.__name__
            ):
                found.append(obj)
    return found


DATACLASSES = _dataclasses()


def test_the_package_has_its_dataclasses_to_check() -> None:
    assert len(DATACLASSES) > 90


@pytest.mark.parametrize("cls", DATACLASSES, ids=lambda c: f"{c.__module__}.{c.__qualname__}")
def test_its_annotations_resolve_at_run_time(cls: type) -> None:
    hints = typing.get_type_hints(cls)
    assert set(hints) >= {f.name for f in dataclasses.fields(cls)}


def test_any_reads_as_any_value_to_pydantic() -> None:
    pydantic = pytest.importorskip("pydantic")
    from git_checkpoint.core.anytype import Any

    plain = pydantic.TypeAdapter(dict[str, typing.Any]).json_schema()
    assert pydantic.TypeAdapter(dict[str, Any]).json_schema() == plain
