"""The CLI layer: the ``dsh-fs`` command (``mcp``, ``schema``, ``demo``).

The topmost layer: it may use `dsh_fs.mcp` and `dsh_fs.adapters` (imported lazily, per
subcommand) and `dsh_fs.workspace` below them.
"""

from ._main import main

__all__ = ["main"]
