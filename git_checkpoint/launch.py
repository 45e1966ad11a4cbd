"""The launcher's old path, for launchers written before the package had layers."""

from .entry.launch import main

__all__ = ["main"]
