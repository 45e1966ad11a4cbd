"""`git-checkpoint`, the installed command: it starts the work-tree scan of a save, a
restore or an undo (fast/prescan.py) before it loads the rest of the tool, so that git
scans while Python imports; and it runs their common forms without loading click at
all (fastcli.py), the rest through cli.py."""

from __future__ import annotations

import sys

from ..core.interrupts import interrupt_once
from ..fast.prescan import Prescan, start
from . import relay
from .cmdline import CommandLine


def main() -> None:
    cmdline = CommandLine(sys.argv[1:])
    prescan: Prescan | None = None
    try:
        if cmdline.relayed:
            how = relay.forward("cli", cmdline.words)
            if how is not None:
                relay.exit_like(how)
        interrupt_once()
        prescan = start() if cmdline.scans_early else None
        from . import console, fastcli

        call = fastcli.parse(cmdline)
        if call is None:
            from . import cli
    except KeyboardInterrupt:  # Ctrl-C before the command began: nothing to undo
        if prescan is not None:
            prescan.discard()
        from . import console

        console.entry(lambda: console.fail("git checkpoint: interrupted", 130, cmdline.as_json))
    except BaseException:
        if prescan is not None:
            prescan.discard()
        raise
    cleanup = prescan.discard if prescan is not None else None
    if call is None:
        console.entry(lambda: cli.main(cmdline, prescan), cleanup)
    console.entry(
        lambda: console.guarded(lambda: fastcli.run(call, prescan), call.as_json), cleanup
    )
