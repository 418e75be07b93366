"""examples/count_lines.py, a tool written only against the public tool API: in a
workspace, and served by ``dsh-fs mcp --plugin`` to the official MCP client over stdio."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import TextContent

from dsh_fs import Workspace
from dsh_fs.workspace import ALL_TOOLS

from .scripted import EXAMPLES, load_example

pytestmark = pytest.mark.anyio


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "three.txt").write_text("one\ntwo\nthree", encoding="utf-8")
    (tmp_path / "empty.txt").write_text("", encoding="utf-8")
    return tmp_path


async def test_the_example_tool_counts_lines_in_a_workspace_beside_the_builtin_tools(
    root: Path,
) -> None:
    example = load_example("count_lines")
    async with Workspace.local(root) as workspace:
        workspace.use(example.CountLinesPlugin(), None)
        session = workspace.session()
        counted = await session.call("count_lines", {"file_path": "three.txt"})
        empty = await session.call("count_lines", {"file_path": "empty.txt"})
        missing = await session.call("count_lines", {"file_path": "absent.txt"})
        blank = await session.call("count_lines", {"file_path": "  "})
        names = [schema["name"] for schema in workspace.tool_schemas()]
    three = str(root / "three.txt")
    assert (counted.text, counted.value) == (f"{three}: 3 lines", {"path": three, "lines": 3})
    assert empty.text == f"{root / 'empty.txt'}: 0 lines"
    assert missing.is_error
    assert missing.code == "FS_NOT_FOUND"
    assert (blank.code, blank.text) == (
        "INVALID_ARGS",
        "Error: file_path must be a non-empty string",
    )
    assert names == [*ALL_TOOLS, "count_lines"]


async def test_dsh_fs_mcp_with_the_plugin_lists_and_runs_the_example_tool(root: Path) -> None:
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "dsh_fs", "mcp", "--plugin", "count_lines:CountLinesPlugin", str(root)],
        env={**os.environ, "PYTHONPATH": str(EXAMPLES)},
    )
    with anyio.fail_after(120):
        async with Client(server, mode="legacy") as client:
            listing = await client.list_tools()
            result = await client.call_tool("count_lines", {"file_path": "three.txt"})
    tools = {tool.name: tool for tool in listing.tools}
    assert list(tools) == [*ALL_TOOLS, "count_lines"]
    assert tools["count_lines"].annotations is not None
    assert tools["count_lines"].annotations.read_only_hint is True
    assert not result.is_error
    assert result.content == [TextContent(type="text", text=f"{root / 'three.txt'}: 3 lines")]
