"""The MCP server over streamable HTTP on loopback (``dsh-fs mcp --http 127.0.0.1:0``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp_types import TextContent

from .http_testing import TIMEOUT, client, headers, http_server
from .mcp_testing import make_root

pytestmark = pytest.mark.anyio


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_root(tmp_path)


@pytest.fixture
async def url(root: Path) -> AsyncIterator[str]:
    """Start the server on a free loopback port; its URL is announced on stderr."""
    async with http_server(root) as server:
        yield server.url


async def test_http_server_lists_the_ten_tools_on_loopback(url: str) -> None:
    assert url.startswith("http://127.0.0.1:")
    with anyio.fail_after(TIMEOUT):
        async with client(url) as mcp:
            listing = await mcp.list_tools()
    assert [t.name for t in listing.tools] == [
        "read",
        "write",
        "edit",
        "edit_files",
        "glob",
        "grep",
        "list",
        "move",
        "delete",
        "mkdir",
    ]


async def test_two_http_clients_have_separate_observations(url: str, root: Path) -> None:
    edit = {"file_path": "notes.txt", "old_string": "beta", "new_string": "BETA"}
    with anyio.fail_after(TIMEOUT):
        async with client(url) as reader, client(url) as other:
            await reader.call_tool("read", {"file_path": "notes.txt"})
            refused = await other.call_tool("edit", edit)
            accepted = await reader.call_tool("edit", edit)
            stale = await other.call_tool(
                "edit", {"file_path": "notes.txt", "old_string": "gamma", "new_string": "x"}
            )
    assert refused.is_error
    assert (refused.meta or {})["dsh-fs/code"] == "FS_NOT_OBSERVED"
    assert not accepted.is_error
    block = accepted.content[0]
    assert isinstance(block, TextContent)
    assert block.text == f"The file {root / 'notes.txt'} has been updated successfully."
    assert (stale.meta or {})["dsh-fs/code"] == "FS_NOT_OBSERVED"
    assert (root / "notes.txt").read_text(encoding="utf-8") == "alpha\nBETA\ngamma\n"


async def test_edit_after_external_change_over_http_is_stale(url: str, root: Path) -> None:
    with anyio.fail_after(TIMEOUT):
        async with client(url) as mcp:
            await mcp.call_tool("read", {"file_path": "notes.txt"})
            (root / "notes.txt").write_text("changed\n", encoding="utf-8")
            result = await mcp.call_tool(
                "edit", {"file_path": "notes.txt", "old_string": "changed", "new_string": "x"}
            )
    assert result.is_error
    assert (result.meta or {})["dsh-fs/code"] == "FS_STALE_VERSION"


async def test_malformed_http_request_is_a_protocol_error_and_the_server_keeps_serving(
    url: str,
) -> None:
    with anyio.fail_after(TIMEOUT):
        async with httpx2.AsyncClient() as http:
            response = await http.post(
                url, content=b'{"jsonrpc": "2.0", "id": 1,', headers=headers()
            )
        assert response.status_code == 400
        assert response.json()["error"]["code"] == -32700
        async with client(url) as mcp:
            result = await mcp.call_tool("read", {"file_path": "notes.txt"})
    assert not result.is_error


async def test_http_server_refuses_a_foreign_host_header(url: str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with httpx2.AsyncClient() as http:
            response = await http.post(
                url,
                json={"jsonrpc": "2.0", "id": 1, "method": "ping"},
                headers=headers(host="evil.example"),
            )
    assert response.status_code in (400, 403, 421)
