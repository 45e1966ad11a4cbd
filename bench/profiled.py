"""Run an installed launcher (a `python -IS` script) under cProfile and write the stats,
also when the command ends in `os._exit` (the hook does, skipping interpreter teardown).

    python -IS bench/profiled.py STATS LAUNCHER [ARGS...]

Standard library only, nothing imported before the profile starts but cProfile: the
profile is the command's own. Only the main thread is profiled (cProfile's limit).
"""

from __future__ import annotations

import cProfile
import os
import sys

TYPE_CHECKING = False  # typing, imported here, would leave the command's profile
if TYPE_CHECKING:
    from typing import NoReturn


def main() -> None:
    stats, launcher, *args = sys.argv[1:]
    with open(launcher, encoding="utf-8") as f:
        code = compile(f.read(), launcher, "exec")
    sys.argv = [launcher, *args]
    profile = cProfile.Profile()
    exit_now = os._exit

    def dump_then_exit(status: int) -> NoReturn:
        profile.disable()
        profile.dump_stats(stats)
        exit_now(status)

    os._exit = dump_then_exit
    profile.enable()
    try:
        exec(code, {"__name__": "__main__", "__file__": launcher})
    finally:
        profile.disable()
        profile.dump_stats(stats)


if __name__ == "__main__":
    main()
