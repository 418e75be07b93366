"""The stdio transport with messages longer than a pipe read: a 1 MB write, a broken long line."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process

from .mcp_testing import make_root

pytestmark = pytest.mark.anyio

TIMEOUT = 60
"""A guard against a hang, not a speed target (the server is a child process)."""


async def _exchange(process: Process, line: bytes) -> dict[str, Any]:
    assert process.stdin is not None
    assert process.stdout is not None
    await process.stdin.send(line + b"\n")
    buffer = b""
    while b"\n" not in buffer:
        buffer += await process.stdout.receive()
    reply: dict[str, Any] = json.loads(buffer.split(b"\n", 1)[0])
    return reply


def _request(ident: int, method: str, params: dict[str, Any]) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params}).encode()


async def test_a_megabyte_write_and_a_broken_long_line_cross_the_pipe(tmp_path: Path) -> None:
    root = make_root(tmp_path)
    content = "".join(f"line {n}: déjà vu ≈ {n}\n" for n in range(40_000))
    assert len(content.encode()) > 1_000_000
    process = await anyio.open_process(
        [sys.executable, "-m", "dsh_fs", "mcp", str(root)], stderr=None
    )
    try:
        with anyio.fail_after(TIMEOUT):
            initialize = {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "0"},
            }
            await _exchange(process, _request(1, "initialize", initialize))
            assert process.stdin is not None
            await process.stdin.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')

            write = {"name": "write", "arguments": {"file_path": "big.txt", "content": content}}
            reply = await _exchange(process, _request(2, "tools/call", write))
            assert reply["result"]["isError"] is False
            assert (root / "big.txt").read_text(encoding="utf-8") == content

            broken = _request(3, "tools/call", write)[:-1]  # no closing brace
            garbage = await _exchange(process, broken)
            assert (garbage["id"], garbage["error"]["code"]) == (3, -32700)  # as for a short line

            read = {"name": "read", "arguments": {"file_path": "big.txt", "limit": 1}}
            reply = await _exchange(process, _request(4, "tools/call", read))
            assert "1: line 0: déjà vu ≈ 0" in reply["result"]["content"][0]["text"]
    finally:
        process.kill()
        await process.aclose()
