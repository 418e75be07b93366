"""How tool results map to MCP results (in process: the server object and the SDK client)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp import Client

from dsh_fs import Workspace
from dsh_fs.mcp import CODE_META_KEY, ERROR_META_KEY, create_server

from .mcp_testing import make_root

pytestmark = pytest.mark.anyio


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_root(tmp_path)


async def test_structured_mode_returns_the_canonical_value_and_the_error_object(
    root: Path,
) -> None:
    async with Workspace.sandbox(root) as workspace:
        server = create_server(workspace, structured=True)
        with anyio.fail_after(60):
            async with Client(server, mode="legacy") as client:
                read = await client.call_tool("read", {"file_path": "notes.txt", "limit": 1})
                edit = await client.call_tool(
                    "edit", {"file_path": "missing.txt", "old_string": "a", "new_string": "b"}
                )
    value = read.structured_content
    assert isinstance(value, dict)
    assert (value["path"], value["offset"], value["lines"], value["total_lines"]) == (
        str(root / "notes.txt"),
        1,
        [{"number": 1, "text": "alpha"}],
        3,
    )
    assert edit.is_error
    assert edit.structured_content == {"error": {"name": "FsError", "code": "FS_NOT_OBSERVED"}}
    assert edit.meta == {CODE_META_KEY: "FS_NOT_OBSERVED", ERROR_META_KEY: "FsError"}


async def test_one_connection_is_one_observation_owner(root: Path) -> None:
    async with Workspace.sandbox(root) as workspace:
        server = create_server(workspace)
        edit = {"file_path": "notes.txt", "old_string": "beta", "new_string": "BETA"}
        with anyio.fail_after(60):
            async with Client(server, mode="legacy") as first:
                await first.call_tool("read", {"file_path": "notes.txt"})
                async with Client(server, mode="legacy") as second:
                    refused = await second.call_tool("edit", edit)
                accepted = await first.call_tool("edit", edit)
    assert (refused.meta or {})[CODE_META_KEY] == "FS_NOT_OBSERVED"
    assert not accepted.is_error


async def test_server_instructions_are_the_workspace_system_prompt(root: Path) -> None:
    async with Workspace.sandbox(root) as workspace:
        server = create_server(workspace)
        with anyio.fail_after(60):
            async with Client(server, mode="legacy") as client:
                assert client.instructions == workspace.system_prompt()
