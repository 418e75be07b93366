"""Shared pieces of the MCP server tests: a served folder and the server spawned over stdio."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Final, Literal

import pytest
from mcp.client.stdio import StdioServerParameters

Era = Literal["legacy", "auto"]

HANDSHAKE: Final[Era] = "legacy"
"""The official client's mode that speaks the handshake era (``initialize``), as every host
does: the stdio server answers it without the SDK."""

BOTH_ERAS = pytest.mark.parametrize(
    "era", [HANDSHAKE, "auto"], ids=["handshake-era", "2026-07-28-era"]
)
"""Run a test with the official client in both eras: ``auto`` opens with the 2026-07-28
``server/discover``, which the stdio server hands to the SDK's server."""


def make_root(tmp_path: Path) -> Path:
    """The served folder, with one small file; its parent is outside the sandbox."""
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "notes.txt").write_text("alpha\nbeta\ngamma\n", encoding="utf-8")
    return folder


def stdio_server(*args: str) -> StdioServerParameters:
    """``python -m dsh_fs mcp ARGS`` as an MCP stdio server."""
    return StdioServerParameters(command=sys.executable, args=["-m", "dsh_fs", "mcp", *args])
