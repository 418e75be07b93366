"""The MCP server over stdio, driven by the real MCP client SDK (``python -m dsh_fs mcp``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process
from mcp import Client
from mcp_types import CallToolResult, TextContent

from dsh_fs import Workspace

from .mcp_testing import BOTH_ERAS, HANDSHAKE, Era, make_root, stdio_server

pytestmark = pytest.mark.anyio


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_root(tmp_path)


TIMEOUT = 60
"""A guard against a hang, not a speed target (the server is a child process)."""


def text_of(result: CallToolResult) -> str:
    assert len(result.content) == 1
    block = result.content[0]
    assert isinstance(block, TextContent)
    return block.text


def code_of(result: CallToolResult) -> Any:
    return (result.meta or {}).get("dsh-fs/code")


@BOTH_ERAS
async def test_tools_are_the_ten_file_tools_with_the_workspace_schemas(
    root: Path, era: Era
) -> None:
    workspace = Workspace.local(root)
    expected = workspace.tool_schemas()
    with anyio.fail_after(TIMEOUT):
        async with Client(stdio_server(str(root)), mode=era) as client:
            listing = await client.list_tools()
            instructions = client.instructions
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
    for tool, schema in zip(listing.tools, expected, strict=True):
        assert tool.description == schema["description"]
        assert tool.input_schema == schema["parameters"]
    assert instructions == workspace.system_prompt()
    await workspace.aclose()
    # Hosts auto-approve read-only tools by these hints: they must be true to the tools.
    hints = {
        t.name: (
            t.title,
            t.annotations.title if t.annotations else None,
            t.annotations.read_only_hint if t.annotations else None,
            t.annotations.destructive_hint if t.annotations else None,
            t.annotations.idempotent_hint if t.annotations else None,
            t.annotations.open_world_hint if t.annotations else None,
        )
        for t in listing.tools
    }
    assert hints == {
        "read": ("Read file", "Read file", True, None, None, False),
        "write": ("Write file", "Write file", False, True, True, False),
        "edit": ("Edit file", "Edit file", False, True, False, False),
        "edit_files": ("Edit files", "Edit files", False, False, False, False),
        "glob": ("Find files", "Find files", True, None, None, False),
        "grep": ("Search file contents", "Search file contents", True, None, None, False),
        "list": ("List directory", "List directory", True, None, None, False),
        "move": ("Move file", "Move file", False, True, False, False),
        "delete": ("Delete file", "Delete file", False, True, False, False),
        "mkdir": ("Create directory", "Create directory", False, False, True, False),
    }


@BOTH_ERAS
async def test_read_edit_and_stale_edit_round_trip_with_exact_text(root: Path, era: Era) -> None:
    notes = root / "notes.txt"
    with anyio.fail_after(TIMEOUT):
        async with Client(stdio_server(str(root)), mode=era) as client:
            read = await client.call_tool("read", {"file_path": "notes.txt", "limit": 2})
            assert not read.is_error
            assert text_of(read) == (
                f"<path>{notes}</path>\n<type>file</type>\n<content>\n1: alpha\n2: beta\n\n"
                "(Showing lines 1-2 of 3. Use offset=3 to continue.)\n</content>"
            )
            assert read.structured_content is None

            edit = await client.call_tool(
                "edit", {"file_path": "notes.txt", "old_string": "beta", "new_string": "BETA"}
            )
            assert text_of(edit) == f"The file {notes} has been updated successfully."
            assert not edit.is_error

            notes.write_text("alpha\nBETA\ngamma\ndelta\n", encoding="utf-8")
            stale = await client.call_tool(
                "edit", {"file_path": "notes.txt", "old_string": "gamma", "new_string": "GAMMA"}
            )
            assert stale.is_error
            assert code_of(stale) == "FS_STALE_VERSION"
            assert (stale.meta or {})["dsh-fs/error"] == "FsError"
            assert text_of(stale) == (
                f'Error: cannot edit "{notes}": file changed since it was read'
                " — re-read the file, then retry"
            )

            await client.call_tool("read", {"file_path": "notes.txt"})
            retry = await client.call_tool(
                "edit", {"file_path": "notes.txt", "old_string": "gamma", "new_string": "GAMMA"}
            )
            assert not retry.is_error
    assert notes.read_text(encoding="utf-8") == "alpha\nBETA\nGAMMA\ndelta\n"


async def test_edit_and_overwrite_without_a_read_are_not_observed(root: Path) -> None:
    notes = root / "notes.txt"
    with anyio.fail_after(TIMEOUT):
        async with Client(stdio_server(str(root)), mode=HANDSHAKE) as client:
            edit = await client.call_tool(
                "edit", {"file_path": "notes.txt", "old_string": "beta", "new_string": "x"}
            )
            write = await client.call_tool("write", {"file_path": "notes.txt", "content": "x"})
            created = await client.call_tool("write", {"file_path": "new.txt", "content": "x\n"})
    assert (code_of(edit), text_of(edit)) == (
        "FS_NOT_OBSERVED",
        f'Error: edit requires reading "{notes}" first — read the file, then retry',
    )
    assert code_of(write) == "FS_NOT_OBSERVED"
    assert text_of(created).splitlines()[3] == "Created file"
    assert notes.read_text(encoding="utf-8") == "alpha\nbeta\ngamma\n"


async def test_write_outside_the_workspace_is_refused_by_the_sandbox(root: Path) -> None:
    outside = root.parent / "outside.txt"
    with anyio.fail_after(TIMEOUT):
        async with Client(stdio_server(str(root)), mode=HANDSHAKE) as client:
            result = await client.call_tool("write", {"file_path": str(outside), "content": "x"})
    assert result.is_error
    assert code_of(result) == "FS_SANDBOX_DENIED"
    assert text_of(result).startswith(f'Error: cannot write "{outside}": outside the sandbox')
    assert not outside.exists()


async def test_read_only_server_refuses_writes(root: Path) -> None:
    with anyio.fail_after(TIMEOUT):
        async with Client(stdio_server("--read-only", str(root)), mode=HANDSHAKE) as client:
            read = await client.call_tool("read", {"file_path": "notes.txt"})
            write = await client.call_tool("write", {"file_path": "new.txt", "content": "x"})
    assert not read.is_error
    assert code_of(write) == "FS_SANDBOX_DENIED"
    assert not (root / "new.txt").exists()


@BOTH_ERAS
async def test_unknown_tool_and_bad_arguments_are_answered_without_killing_the_server(
    root: Path, era: Era
) -> None:
    from mcp.shared.exceptions import MCPError

    with anyio.fail_after(TIMEOUT):
        async with Client(stdio_server(str(root)), mode=era) as client:
            with pytest.raises(MCPError, match="Unknown tool: chmod"):
                await client.call_tool("chmod", {"file_path": "notes.txt"})
            bad = await client.call_tool("read", {"file_path": ""})
            read = await client.call_tool("read", {"file_path": "notes.txt"})
    assert (bad.is_error, code_of(bad), text_of(bad)) == (
        True,
        "INVALID_ARGS",
        "Error: file_path must be a non-empty string",
    )
    assert not read.is_error


async def _exchange(process: Process, line: bytes) -> dict[str, Any]:
    assert process.stdin is not None
    assert process.stdout is not None
    await process.stdin.send(line + b"\n")
    buffer = b""
    while b"\n" not in buffer:
        buffer += await process.stdout.receive()
    reply: dict[str, Any] = json.loads(buffer.split(b"\n", 1)[0])
    return reply


async def test_malformed_messages_get_protocol_errors_and_the_server_keeps_serving(
    root: Path,
) -> None:
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }
    process = await anyio.open_process(
        [sys.executable, "-m", "dsh_fs", "mcp", str(root)], stderr=None
    )
    try:
        with anyio.fail_after(TIMEOUT):
            reply = await _exchange(process, json.dumps(initialize).encode())
            assert reply["result"]["serverInfo"]["name"] == "dsh-fs"
            assert process.stdin is not None
            await process.stdin.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')

            garbage = await _exchange(process, b'{"jsonrpc": "2.0", "id": 2, "method": ')
            assert (garbage["id"], garbage["error"]["code"]) == (2, -32700)  # the id is found

            no_name = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {}}
            invalid = await _exchange(process, json.dumps(no_name).encode())
            assert invalid["id"] == 3
            assert invalid["error"]["code"] == -32602  # invalid params

            call = {
                "jsonrpc": "2.0",
                "id": 4,
                "method": "tools/call",
                "params": {"name": "read", "arguments": {"file_path": "notes.txt"}},
            }
            ok = await _exchange(process, json.dumps(call).encode())
            assert ok["id"] == 4
            assert ok["result"]["isError"] is False
            assert "1: alpha" in ok["result"]["content"][0]["text"]
    finally:
        process.kill()
        await process.aclose()


async def test_a_negative_zero_sent_over_the_pipe_is_refused_as_upstream_refuses_it(
    root: Path,
) -> None:
    """``-0`` is written raw (``json.dumps`` never writes it): pydantic alone would read 0."""
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }
    process = await anyio.open_process(
        [sys.executable, "-m", "dsh_fs", "mcp", str(root)], stderr=None
    )
    try:
        with anyio.fail_after(TIMEOUT):
            await _exchange(process, json.dumps(initialize).encode())
            assert process.stdin is not None
            await process.stdin.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
            replies = []
            for ident, arguments in (
                (2, b'{"file_path": "notes.txt", "offset": -0}'),
                (3, b'{"file_path": "notes.txt", "offset": 1, "x": [-0]}'),
                (4, b'{"file_path": "notes-0.txt", "offset": 1}'),
            ):
                line = (
                    b'{"jsonrpc": "2.0", "id": %d, "method": "tools/call", "params": '
                    b'{"name": "read", "arguments": %s}}' % (ident, arguments)
                )
                replies.append((await _exchange(process, line))["result"])
    finally:
        process.kill()
        await process.aclose()
    lossy = "Error: tool execution arguments must be losslessly JSON-serializable"
    assert [r["content"][0]["text"] for r in replies[:2]] == [lossy, lossy]
    assert replies[2]["content"][0]["text"].endswith('notes-0.txt": not found')
