"""Serving MCP over the stdio line transport in process: a script of lines in, every line out."""

from __future__ import annotations

import json
import os
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

from dsh_fs.mcp.stdio._lines import LineReader, LineWriter

Serve = Callable[[LineReader, LineWriter], Awaitable[None]]


def request(ident: int | str, method: str, params: dict[str, Any] | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": ident, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


def notification(method: str, params: dict[str, Any] | None = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


def initialize(ident: int | str = 0, version: str = "2025-06-18") -> bytes:
    client = {"name": "test", "version": "0"}
    params = {"protocolVersion": version, "capabilities": {}, "clientInfo": client}
    return request(ident, "initialize", params)


async def _drain(fd: int, into: bytearray) -> None:
    while True:
        await anyio.wait_readable(fd)
        try:
            data = os.read(fd, 1 << 20)
        except BlockingIOError:
            continue
        if not data:
            return
        into.extend(data)


async def exchange(serve: Serve, lines: list[bytes], *, limit: int | None = None) -> list[Any]:
    """Every message `serve` writes for `lines`, sent at once and then the end of input."""
    requests, to_server = os.pipe()
    from_server, replies = os.pipe()
    for fd in (requests, to_server, from_server, replies):
        os.set_blocking(fd, False)
    output = bytearray()
    reader = LineReader(requests) if limit is None else LineReader(requests, limit=limit)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_drain, from_server, output)
            tg.start_soon(_feed, to_server, b"".join(line + b"\n" for line in lines))
            try:
                await serve(reader, LineWriter(replies))
            finally:
                os.close(replies)  # the end of the output: the drain stops
    finally:
        reader.close()
        for fd in (requests, from_server):
            os.close(fd)
    return [json.loads(line) for line in output.splitlines()]


async def _feed(fd: int, data: bytes) -> None:
    view = memoryview(data)
    try:
        while view:
            try:
                view = view[os.write(fd, view) :]
            except BlockingIOError:
                await anyio.wait_writable(fd)
    finally:
        os.close(fd)
