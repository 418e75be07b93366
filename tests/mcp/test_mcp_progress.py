"""Long calls over MCP stdio: progress when the client asks, and cancellation that stops a
call and leaves nothing behind (the official SDK client, and raw JSON-RPC lines)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import ByteReceiveStream
from mcp import Client

from .mcp_testing import BOTH_ERAS, Era, make_root, stdio_server

pytestmark = pytest.mark.anyio

TIMEOUT = 60

LINE = b"the quick brown fox jumps over the lazy dog, again and again: " + b"x" * 36 + b"\n"


def _big_file(root: Path, megabytes: int) -> Path:
    """A text file of `megabytes` MiB (streamed by read: far above its whole-read size)."""
    block = LINE * (1024 * 1024 // len(LINE)) + b"y" * (1024 * 1024 % len(LINE))
    path = root / "big.txt"
    with path.open("wb") as file:
        for _ in range(megabytes):
            file.write(block)
    return path


@BOTH_ERAS
async def test_a_large_read_reports_growing_progress_up_to_the_file_size(
    tmp_path: Path, era: Era
) -> None:
    root = make_root(tmp_path)
    size = _big_file(root, 8).stat().st_size
    reports: list[tuple[float, float | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        reports.append((progress, total))

    with anyio.fail_after(TIMEOUT):
        async with Client(stdio_server(str(root)), mode=era) as client:
            result = await client.call_tool(
                "read", {"file_path": "big.txt", "limit": 1}, progress_callback=on_progress
            )
            quiet = await client.call_tool("read", {"file_path": "big.txt", "limit": 1})
    assert not result.is_error
    assert not quiet.is_error
    assert reports, "no notifications/progress for a streamed 8 MiB read"
    assert reports[-1] == (float(size), float(size))
    assert all(total == size for _, total in reports)
    progress = [done for done, _ in reports]
    assert progress == sorted(set(progress))


@BOTH_ERAS
async def test_a_cancelled_read_stops_and_authorizes_no_edit(tmp_path: Path, era: Era) -> None:
    root = make_root(tmp_path)
    _big_file(root, 128)
    started = anyio.Event()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        started.set()

    edit = {"file_path": "big.txt", "old_string": "y", "new_string": "z"}
    with anyio.fail_after(TIMEOUT):
        async with Client(stdio_server(str(root)), mode=era) as client:
            async with anyio.create_task_group() as calls:
                calls.start_soon(
                    lambda: client.call_tool(
                        "read", {"file_path": "big.txt"}, progress_callback=on_progress
                    )
                )
                await started.wait()
                calls.cancel_scope.cancel()  # the SDK client sends notifications/cancelled
            refused = await client.call_tool("edit", edit)
            still_serving = await client.call_tool("read", {"file_path": "notes.txt"})
    assert (refused.meta or {})["dsh-fs/code"] == "FS_NOT_OBSERVED"
    assert not still_serving.is_error


INITIALIZE = {
    "jsonrpc": "2.0",
    "id": "init",
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _cancel(request_id: int) -> bytes:
    params = {"requestId": request_id, "reason": "the user pressed stop"}
    return _line({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": params})


async def _lines(stdout: ByteReceiveStream) -> Any:
    buffer = b""
    async for chunk in stdout:
        buffer += chunk
        *complete, buffer = buffer.split(b"\n")
        for line in complete:
            yield json.loads(line)


async def test_a_server_whose_input_ends_after_a_cancelled_call_exits_without_answering_it(
    tmp_path: Path,
) -> None:
    root = make_root(tmp_path)
    _big_file(root, 128)
    read = {"name": "read", "arguments": {"file_path": "big.txt"}, "_meta": {"progressToken": 7}}
    process = await anyio.open_process(
        [sys.executable, "-m", "dsh_fs", "mcp", str(root)], stderr=None
    )
    seen: list[Any] = []
    async with process:
        assert process.stdin is not None
        assert process.stdout is not None
        try:
            with anyio.fail_after(TIMEOUT):
                await process.stdin.send(
                    _line(INITIALIZE)
                    + _line({"jsonrpc": "2.0", "method": "notifications/initialized"})
                    + _line({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": read})
                )
                async for message in _lines(process.stdout):
                    seen.append(message)
                    # On the first progress (after the answer to initialize):
                    if message.get("method") == "notifications/progress" and len(seen) == 2:
                        await process.stdin.send(_cancel(1))
                        await process.stdin.aclose()
                status = await process.wait()
        finally:
            if process.returncode is None:
                process.kill()  # a server that never exits fails, not hangs
    progress = [m for m in seen if m.get("method") == "notifications/progress"]
    assert progress
    assert progress[0]["params"]["progressToken"] == 7
    assert [m for m in seen if m.get("id") == 1] == []  # a cancelled request is never answered
    assert status == 0


async def test_a_cancelled_write_leaves_the_file_whole_or_absent_and_no_staging(
    tmp_path: Path,
) -> None:
    root = make_root(tmp_path)
    content = LINE.decode() * 200_000  # about 20 MB of JSON to parse, stage and publish
    write = {"name": "write", "arguments": {"file_path": "out.txt", "content": content}}
    process = await anyio.open_process(
        [sys.executable, "-m", "dsh_fs", "mcp", str(root)], stderr=None
    )
    async with process:
        assert process.stdin is not None
        assert process.stdout is not None
        try:
            with anyio.fail_after(TIMEOUT):
                await process.stdin.send(
                    _line(INITIALIZE)
                    + _line({"jsonrpc": "2.0", "method": "notifications/initialized"})
                    + _line({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": write})
                    + _cancel(1)
                )
                await process.stdin.aclose()
                async for _ in process.stdout:
                    pass
                status = await process.wait()
        finally:
            if process.returncode is None:
                process.kill()  # a server that never exits fails, not hangs
    assert status == 0
    entries = sorted(path.name for path in root.iterdir())
    assert entries in (["notes.txt"], ["notes.txt", "out.txt"])
    if "out.txt" in entries:
        assert (root / "out.txt").read_text(encoding="utf-8") == content
