"""The hook entry's old path, for launchers written before the package had layers."""

from .entry.hook import main

__all__ = ["main"]
