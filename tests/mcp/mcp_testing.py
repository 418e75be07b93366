"""Shared pieces of the MCP server tests: a served folder and the server spawned over stdio."""

from __future__ import annotations

import sys
from pathlib import Path

from mcp.client.stdio import StdioServerParameters


def make_root(tmp_path: Path) -> Path:
    """The served folder, with one small file; its parent is outside the sandbox."""
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "notes.txt").write_text("alpha\nbeta\ngamma\n", encoding="utf-8")
    return folder


def stdio_server(*args: str) -> StdioServerParameters:
    """``python -m dsh_fs mcp ARGS`` as an MCP stdio server."""
    return StdioServerParameters(command=sys.executable, args=["-m", "dsh_fs", "mcp", *args])
