"""How a stdio server ends: every request read before stdin closed is answered first."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from .mcp_testing import make_root

pytestmark = pytest.mark.anyio

TIMEOUT = 30

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": "init",
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "pipelined", "version": "0"},
    },
}


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _read_call(request_id: int) -> bytes:
    arguments = {"file_path": "big.txt", "offset": request_id * 100}
    params = {"name": "read", "arguments": arguments}
    return _line({"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params})


def _pipelined(garbage_lines: int) -> bytes:
    """Handshake, ten reads of a file large enough to be streamed, then malformed lines."""
    wire = _line(INITIALIZE) + _line({"jsonrpc": "2.0", "method": "notifications/initialized"})
    wire += b"".join(_read_call(i) for i in CALLS)
    return wire + b'{"jsonrpc": "2.0", "id": 99, "method": \n' * garbage_lines


CALLS = range(1, 11)


@pytest.mark.parametrize(("stdin", "garbage_lines"), [("pipe", 1), ("file", 3)])
async def test_pipelined_requests_are_all_answered_when_stdin_closes_after_malformed_lines(
    tmp_path: Path, stdin: str, garbage_lines: int
) -> None:
    root = make_root(tmp_path)
    (root / "big.txt").write_text(f"{'x' * 99}\n" * 20_000, encoding="utf-8")
    wire = _pipelined(garbage_lines)
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(wire)
    output = b""
    with requests.open("rb") as from_file, anyio.fail_after(TIMEOUT):
        process = await anyio.open_process(
            [sys.executable, "-m", "dsh_fs", "mcp", str(root)],
            stdin=from_file if stdin == "file" else subprocess.PIPE,
            stderr=None,
        )
        async with process:
            assert process.stdout is not None
            if process.stdin is not None:
                await process.stdin.send(wire)
                await process.stdin.aclose()
            async for chunk in process.stdout:
                output += chunk
            status = await process.wait()
    replies = [json.loads(line) for line in output.splitlines()]
    answered = {reply["id"]: reply for reply in replies if reply.get("id") in CALLS}
    assert sorted(answered) == list(CALLS)
    for reply in answered.values():
        assert reply["result"]["isError"] is False, reply
    parse_errors = [r for r in replies if r.get("id") == 99]  # the id is read off the broken line
    assert [r["error"]["code"] for r in parse_errors] == [-32700] * garbage_lines
    assert status == 0
