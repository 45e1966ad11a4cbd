"""What `.checkpoint.yaml` parsed to, kept in the git dir with the text it was parsed
from: a hook's save, a restore and every command after the first read it back as JSON
instead of importing PyYAML and walking the file. Text that differs by a byte is parsed
again; a cache that is missing, old or unreadable is no cache."""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from .. import __version__
from ..core.errors import UsageError
from ..core.records import read_regular_file, write_atomic
from .model import Config, Retention, Verifier

TYPE_CHECKING = False  # typing is not imported at run time
if TYPE_CHECKING:
    from typing import Any

CACHE_NAME = "config-parsed.json"
CACHE_MAX_BYTES = 4 * 1024 * 1024  # the file's text (at most 1 MiB) and what it parsed to


def _shape() -> list[Any]:
    """The fields a cached Config is made of, and the code that made it (the parser and
    the defaults, by size and time): a tool that has others, or was changed in place as
    an editable install is, parses again."""
    fields = [list(kind.__dataclass_fields__) for kind in (Config, Retention, Verifier)]
    here = os.path.dirname(__file__)
    code: list[list[int] | None] = []
    for name in ("model.py", "yaml_file.py"):
        try:
            st = os.stat(os.path.join(here, name))
            code.append([st.st_size, st.st_mtime_ns])
        except OSError:  # (run from a zip or the like: the version alone)
            code.append(None)
    return [fields, code]


def cached(folder: Path, path: Path, text: str) -> Config | None:
    """The Config `text` at `path` parsed to when it was last parsed here; raises the
    UsageError it raised then. None when it was not, or not by this version."""
    try:
        data = read_regular_file(folder / CACHE_NAME, CACHE_MAX_BYTES)
    except UsageError:  # a link, a FIFO, a device, too large: no cache
        return None
    try:
        record = json.loads(data) if data is not None else {}
        if (
            record.get("version") != __version__
            or record.get("shape") != _shape()
            or record.get("path") != str(path)
            or record.get("text") != text
        ):
            return None
        if "error" in record:
            raise UsageError(str(record["error"]))
        return _config(record["config"])
    except (OSError, ValueError, TypeError, KeyError, AttributeError, RecursionError):
        return None  # (UsageError is not among them: a cached error is raised again)


def keep(folder: Path, path: Path, text: str, parsed: Config | UsageError) -> None:
    """Remember what `text` parsed to (a Config, or the error it raised). Best effort: a
    git dir that cannot be written is read from the file every time."""
    record: dict[str, Any] = {
        "version": __version__,
        "shape": _shape(),
        "path": str(path),
        "text": text,
    }
    if isinstance(parsed, UsageError):
        record["error"] = str(parsed)
    else:
        record["config"] = _data(parsed)
    if not os.path.isdir(folder):
        return
    with contextlib.suppress(OSError):
        text_out = json.dumps(record, ensure_ascii=False).encode()
        write_atomic(folder / CACHE_NAME, text_out, durable=False)


def _data(config: Config) -> dict[str, Any]:
    values = {name: getattr(config, name) for name in Config.__dataclass_fields__}
    values["verifiers"] = [
        {name: getattr(v, name) for name in Verifier.__dataclass_fields__} for v in config.verifiers
    ]
    values["retention"] = {
        name: getattr(config.retention, name) for name in Retention.__dataclass_fields__
    }
    return values


def _config(data: dict[str, Any]) -> Config:
    values = dict(data)
    values["verifiers"] = tuple(Verifier(**v) for v in values["verifiers"])
    values["retention"] = Retention(**values["retention"])
    defaults = Config()
    for name in Config.__dataclass_fields__:
        if isinstance(getattr(defaults, name), tuple) and name != "verifiers":
            values[name] = tuple(values[name])
    return Config(**values)
