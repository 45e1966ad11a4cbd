"""`git checkpoint hooks install|uninstall|status`: agent hooks, git hooks, the shell guard."""

from __future__ import annotations

from ..install.manage import HookChange, HooksResult, run

__all__ = ["HookChange", "HooksResult", "run"]
