"""The stdio server's own handshake-era path against the SDK's server: the same lines in,
the same answers out (in process, over pipes, each on a fresh workspace of the same files).

The one documented difference: for a request method this server does not serve, the SDK
first validates the params against the spec's model (``-32602`` when they do not fit),
while this server answers ``-32601 Method not found`` whatever the params.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.server.runner import _INIT_EXEMPT  # the SDK's init-gate exemptions
from mcp_types import PROTOCOL_VERSION_META_KEY
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from dsh_fs import Workspace
from dsh_fs.mcp._server import create_server
from dsh_fs.mcp.stdio._handshake import HANDSHAKE_VERSIONS, serve_lines
from dsh_fs.mcp.stdio._handshake import PROTOCOL_VERSION_META_KEY as OUR_META_KEY
from dsh_fs.mcp.stdio._lines import LineReader, LineWriter
from dsh_fs.mcp.stdio._sdk import serve_sdk

from .stdio_pipes import exchange, initialize, notification, request

pytestmark = pytest.mark.anyio

MODERN = {"_meta": {PROTOCOL_VERSION_META_KEY: "2026-07-28"}}
READ = {"name": "read", "arguments": {"file_path": "notes.txt"}}

SCRIPTS: dict[str, list[bytes]] = {
    "every handshake version, an unknown one and the modern one": [
        *(initialize(i, version) for i, version in enumerate(HANDSHAKE_VERSIONS)),
        initialize(10, "2099-01-01"),
        initialize(11, "2026-07-28"),
    ],
    "a session's requests, served and not": [
        initialize(),
        notification("notifications/initialized"),
        request(1, "tools/list"),
        request(2, "ping"),
        request(3, "tools/call", READ),
        request("three", "tools/call", {"name": "read", "arguments": {"file_path": ""}}),
        request("glob", "tools/call", {"name": "glob", "arguments": {"pattern": "*.txt"}}),
        request("grep", "tools/call", {"name": "grep", "arguments": {"pattern": "al+"}}),
        request(4, "tools/call", {"name": "chmod", "arguments": {}}),
        request(5, "tools/call", {}),
        request(6, "tools/call", {"name": "read", "arguments": [1]}),
        request(7, "tools/call", {"name": "read"}),
        request(8, "tools/call", {"name": "read", "arguments": None}),
        request(9, "tools/call", {**READ, "_meta": {"progressToken": 1.5}}),
        request(10, "tools/call", {**READ, "_meta": "x"}),
        request(11, "tools/list", {"cursor": 5}),
        request(12, "tools/list", {"cursor": "next"}),
        request(13, "tools/list", MODERN),
        request(14, "resources/list"),
        request(15, "prompts/list"),
        request(16, "logging/setLevel", {"level": "info"}),
        request(17, "server/discover"),
        request(18, "vendor/custom", {"x": 1}),
        request(19, "ping", {"_meta": {}}),
        request(20, "initialize", {}),
        b'{"jsonrpc": "2.0", "id": 98, "result": {}}',
        b'{"jsonrpc": "2.0", "id": 99, "error": {"code": 1, "message": "x"}}',
        notification("notifications/roots/list_changed"),
        notification("notifications/cancelled", {"requestId": 404}),
        request(21, "ping"),
    ],
    "requests before initialize": [
        request(1, "tools/list"),
        request(2, "ping"),
        request(3, "tools/call", READ),
        request(4, "vendor/custom"),
        initialize(5),
        request(6, "tools/list"),
    ],
    "notifications/initialized alone opens the gate": [
        notification("notifications/initialized"),
        request(1, "tools/list"),
    ],
    "initialize with params that do not fit": [
        request(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}}),
        request(2, "initialize", {"protocolVersion": 5, "capabilities": {}, "clientInfo": {}}),
        request(3, "tools/list"),
        request(4, "initialize"),
    ],
    "lines that are no valid message": [
        initialize(),
        b'{"jsonrpc": "2.0", "id": 1, "method": ',
        b"[1, 2]",
        b'{"jsonrpc": "2.0", "id": 1.5, "method": "ping"}',
        b'{"id": 2, "method": "ping"}',
        b'{"jsonrpc": "2.0", "id": 3, "method": "ping", "params": [1]}',
        b'{"jsonrpc": "2.0", "id": 4, "method": "ping", "x": "\xff"}',
        b'{"jsonrpc": "2.0", "id": null, "method": "ping"}',
        b'{"jsonrpc": "2.0", "id": true, "method": "ping"}',
        b'{"jsonrpc": "2.0", "method": 5}',
        b'{"jsonrpc": "2.0", "id": "\\ud800", "method": "ping"}',
        b'{"jsonrpc": "2.0", "id": 5, "method": "ping", "params": null}',
    ],
}


async def _answers(root: Path, serve: str, lines: list[bytes]) -> list[Any]:
    (root / "notes.txt").write_text("alpha\nbeta\n", encoding="utf-8")
    async with Workspace.sandbox(root) as workspace:

        async def lean(reader: LineReader, writer: LineWriter) -> None:
            await serve_lines(workspace, reader, writer)

        async def sdk(reader: LineReader, writer: LineWriter) -> None:
            await serve_sdk(create_server(workspace, single_session=True), reader, writer)

        with anyio.fail_after(60):
            answers = await exchange(lean if serve == "lean" else sdk, lines)
    return sorted(answers, key=lambda message: json.dumps(message.get("id")))


@pytest.mark.parametrize("script", sorted(SCRIPTS))
async def test_the_stdio_server_answers_as_the_sdk_server_does(tmp_path: Path, script: str) -> None:
    root = tmp_path / "project"
    root.mkdir()
    ours = await _answers(root, "lean", SCRIPTS[script])
    theirs = await _answers(root, "sdk", SCRIPTS[script])
    assert ours == theirs


async def test_an_unserved_method_is_not_found_whatever_its_params(tmp_path: Path) -> None:
    """The documented difference: the SDK checks the spec's params of a method it does not
    serve before saying so; both are errors, and the client learns the method is not here."""
    lines = [initialize(), request(1, "completion/complete", {})]
    ours = await _answers(tmp_path, "lean", lines)
    theirs = await _answers(tmp_path, "sdk", lines)
    assert ours[1]["error"] == {
        "code": -32601,
        "message": "Method not found",
        "data": "completion/complete",
    }
    assert theirs[1]["error"]["code"] == -32602


def test_the_protocol_facts_match_the_installed_sdk() -> None:
    assert HANDSHAKE_VERSIONS == HANDSHAKE_PROTOCOL_VERSIONS
    assert OUR_META_KEY == PROTOCOL_VERSION_META_KEY
    assert frozenset({"ping"}) == _INIT_EXEMPT
