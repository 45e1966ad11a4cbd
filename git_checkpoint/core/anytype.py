"""`Any` for the annotations of dataclasses that are read at run time, without loading
typing: the MCP server builds its tools' schemas from the result dataclasses with
`get_type_hints`, and the save, restore and hook paths never import typing otherwise.
The type checker sees typing.Any; a run-time reader sees `object`, which
get_type_hints and pydantic take as any value alike."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any as Any
else:
    Any = object
