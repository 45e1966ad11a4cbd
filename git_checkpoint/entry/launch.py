"""`git-checkpoint`, the installed command: it starts the work-tree scan of a save, a
restore or an undo (fast/prescan.py) before it loads the rest of the tool, so that git
scans while Python imports; and it runs their common forms without loading click at
all (fastcli.py), the rest through cli.py."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import signal as _signal
    from types import FrameType
else:
    import _signal  # the C part alone: `signal` loads enum


def interrupted_early(signum: int, frame: FrameType | None) -> None:
    """A Ctrl-C before main() sets the command's own handling: nothing has begun, so
    the one line and exit 130 of any interrupted command (entry/console.py), at once
    and with no traceback."""
    words = sys.argv[1 : sys.argv.index("--") if "--" in sys.argv else None]
    if "--json" in words:
        os.write(1, b'{"error": "interrupted", "exit_code": 130}\n')
    os.write(2, b"git checkpoint: interrupted\n")
    os._exit(130)


# First, before the rest of the launcher loads (over Python's own handler, or what a
# launcher script set for its own first lines: an ignored SIGINT stays ignored).
if _signal.getsignal(_signal.SIGINT) is not _signal.SIG_IGN:
    _signal.signal(_signal.SIGINT, interrupted_early)

from ..core.interrupts import interrupt_once
from ..core.threads import share_the_interpreter
from ..fast.prescan import Prescan, start
from . import relay
from .cmdline import CommandLine


def main() -> None:
    cmdline = CommandLine(sys.argv[1:])
    prescan: Prescan | None = None
    try:
        interrupt_once()
        share_the_interpreter()
        if cmdline.relayed:
            how = relay.forward("cli", cmdline.words)
            if how is not None:
                relay.exit_like(how)
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
