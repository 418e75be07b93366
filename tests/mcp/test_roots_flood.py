"""A client that floods ``notifications/roots/list_changed`` and answers nothing (red team
round 4: 20,000 of them grew the stdio server by ~78 MiB, one pending ``roots/list`` and one
task each): the newest question wins, so the server keeps one request pending, sends far
fewer than it was told of, and its peak memory stays flat."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import ByteReceiveStream, Process

from .mcp_testing import make_root
from .stdio_pipes import notification, request

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/PID/status"),
]

FLOOD = 20_000
TIMEOUT = 180


def peak_rss_kib(pid: int) -> int:
    """The process's peak resident set size (``VmHWM``), in KiB."""
    status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    line = next(line for line in status.splitlines() if line.startswith("VmHWM:"))
    return int(line.split()[1])


class Lines:
    """The server's output, one JSON message at a time."""

    def __init__(self, stream: ByteReceiveStream) -> None:
        self._stream = stream
        self._buffer = b""

    async def next(self) -> Any:
        while b"\n" not in self._buffer:
            self._buffer += await self._stream.receive()
        line, self._buffer = self._buffer.split(b"\n", 1)
        return json.loads(line)


async def until_answer(lines: Lines, ident: int) -> tuple[Any, list[Any]]:
    """The answer to request `ident`, and the server's own requests read before it."""
    asked: list[Any] = []
    while True:
        message = await lines.next()
        if message.get("id") == ident and "method" not in message:
            return message, asked
        asked.append(message)


async def send(process: Process, *lines: bytes) -> None:
    assert process.stdin is not None
    await process.stdin.send(b"".join(line + b"\n" for line in lines))


async def test_a_flood_of_unanswered_roots_list_changed_keeps_one_question_and_flat_memory(
    tmp_path: Path,
) -> None:
    root = make_root(tmp_path)
    initialize = {
        "protocolVersion": "2025-06-18",
        "capabilities": {"roots": {"listChanged": True}},
        "clientInfo": {"name": "flood", "version": "0"},
    }
    roots = {"roots": [{"uri": root.as_uri()}]}
    command = [sys.executable, "-m", "dsh_fs", "mcp", "--no-journal", str(root)]
    with anyio.fail_after(TIMEOUT):
        async with await anyio.open_process(command) as process:
            assert process.stdout is not None
            lines = Lines(process.stdout)
            await send(process, request(1, "initialize", initialize))
            await until_answer(lines, 1)
            await send(process, notification("notifications/initialized"))
            asked = await lines.next()
            assert asked["method"] == "roots/list"
            answer = {"jsonrpc": "2.0", "id": asked["id"], "result": roots}
            await send(process, json.dumps(answer).encode())
            read = {"name": "read", "arguments": {"file_path": "notes.txt"}}
            await send(process, request(2, "tools/call", read))
            result, _ = await until_answer(lines, 2)
            assert "1: alpha" in result["result"]["content"][0]["text"]
            before = peak_rss_kib(process.pid)

            # The flood, with nothing read meanwhile: what the server sends piles up in it.
            changed = notification("notifications/roots/list_changed")
            await send(process, *[changed] * FLOOD, request(3, "ping"))
            _, questions = await until_answer(lines, 3)
            after = peak_rss_kib(process.pid)
            # A call waits for the answer to the newest question: answer each one seen.
            await send(process, request(4, "tools/call", read))
            while True:
                message = await lines.next()
                if message.get("id") == 4:
                    break
                questions.append(message)
                answer = {"jsonrpc": "2.0", "id": message["id"], "result": roots}
                await send(process, json.dumps(answer).encode())
            process.kill()
    grown = (after - before) / 1024
    assert grown < 8, f"the server's peak memory grew by {grown:.1f} MiB"
    assert "1: alpha" in message["result"]["content"][0]["text"]
    assert all(question["method"] == "roots/list" for question in questions)
    assert 1 <= len(questions) < FLOOD // 10
