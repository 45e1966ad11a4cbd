"""How a command's threads share the interpreter.

A command's threads mostly wait on git (the early scan's children, a save's listing and
its store); the one that computes, the secret scan beside the store, held the others
back 5 ms at a time at Python's default switch interval, a few times a save. Builtins
only: the hook runs this first.
"""

from __future__ import annotations

import sys

SWITCH_INTERVAL = 0.0005  # seconds a computing thread keeps the interpreter


def share_the_interpreter() -> None:
    """Set SWITCH_INTERVAL for this command: the launcher's and the hook's first step,
    in a process of their own or in a server's worker alike."""
    sys.setswitchinterval(SWITCH_INTERVAL)
