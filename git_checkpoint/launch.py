"""`git-checkpoint`, the installed command: it starts the work-tree scan of a save, a
restore or an undo (early.py) before it loads the rest of the tool (cli.py), so that
git scans while Python imports."""

from __future__ import annotations

import sys

from . import early


def main() -> None:
    early.start(sys.argv[1:])
    try:
        from .cli import entry
    except BaseException:
        early.discard()
        raise
    entry()
