"""`git-checkpoint`, the installed command: it starts the work-tree scan of a save, a
restore or an undo (early.py) before it loads the rest of the tool, so that git scans
while Python imports; and it runs their common forms without loading click at all
(direct.py), the rest through cli.py."""

from __future__ import annotations

import sys

from ..fast import prescan as early


def main() -> None:
    argv = sys.argv[1:]
    early.interrupt_once()
    try:
        early.start(argv)
        from . import console
        from . import fastcli as direct

        call = direct.parse(argv)
        if call is None:
            from .cli import entry
    except KeyboardInterrupt:  # Ctrl-C before the command began: nothing to undo
        early.discard()
        from . import console

        as_json = console.wants_json(argv)
        console.entry(lambda: console.fail("git checkpoint: interrupted", 130, as_json))
    except BaseException:
        early.discard()
        raise
    if call is None:
        entry()
    console.entry(lambda: console.guarded(lambda: direct.run(call), call.as_json))
