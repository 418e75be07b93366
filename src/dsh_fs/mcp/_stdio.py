"""A stdio transport without worker threads, for pipes (what MCP hosts give a server).

The SDK's `stdio_server` does three thread hops per exchange (readline, write, flush),
a large share of a small read's round trip. On a pipe, waiting for readiness on the event
loop and reading/writing the non-blocking descriptor needs no thread.
Anything else (a terminal, a file) falls back to the SDK's transport.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import re
import stat
import sys
from collections.abc import AsyncIterator

import anyio
import mcp_types as types
from anyio.abc import ObjectReceiveStream, ObjectSendStream
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types.jsonrpc import JSONRPCError
from pydantic import ValidationError

from dsh_fs.runtime import parse_json

__all__ = ["malformed_reply", "stdio_streams"]

logger = logging.getLogger("dsh_fs.mcp")


_PIPE_SIZE = 1 << 20
"""Bytes read at once, and the capacity asked of the pipes (Linux's default limit for
unprivileged processes, ``/proc/sys/fs/pipe-max-size``)."""


_JSON_LOADS_BYTES = 1 << 16
"""Lines longer than this are parsed with `json.loads` (see `_parse`)."""

_NEGATIVE_ZERO = re.compile(rb"-0(?![0-9.eE])")
"""The integer token ``-0`` (or the same characters inside a string: harmless)."""


def _widen_pipe(fd: int) -> None:
    """Ask for a 1 MiB pipe buffer (Linux): a 1 MB `write` then crosses in a few reads and
    wake-ups instead of 16+ of 64 KiB each. Best effort: other systems keep their size."""
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None)
    if set_size is not None and stat.S_ISFIFO(os.fstat(fd).st_mode):
        with contextlib.suppress(OSError):
            fcntl.fcntl(fd, set_size, _PIPE_SIZE)


def _is_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def _parse(line: bytes) -> types.JSONRPCMessage:
    """One JSON-RPC message. A long line is parsed by `json.loads` (through `parse_json`),
    then validated as Python data, which is about twice as fast for a large `write` message;
    under 64 KiB pydantic's JSON path is the faster one. A line `json.loads` refuses goes
    through the JSON path too, so a parse error is reported the same way. A line that may hold
    the number ``-0`` takes the `parse_json` path whatever its length: pydantic reads ``-0``
    as ``0``, and the runtime must see the negative zero to refuse it as upstream does."""
    if len(line) > _JSON_LOADS_BYTES or _NEGATIVE_ZERO.search(line):
        try:
            data = parse_json(line)
        except ValueError:
            pass
        else:
            return types.jsonrpc_message_adapter.validate_python(data, by_name=False)
    return types.jsonrpc_message_adapter.validate_json(line, by_name=False)


def malformed_reply(error: Exception) -> SessionMessage:
    """The JSON-RPC answer to a line that is no JSON-RPC message: a null id, -32700 for
    invalid JSON, -32600 for JSON that is not a message. (The SDK's stdio transport drops
    such a line silently.)"""
    invalid_json = isinstance(error, ValidationError) and any(
        e["type"] == "json_invalid" for e in error.errors()
    )
    code, message = (
        (types.PARSE_ERROR, "Parse error")
        if invalid_json
        else (types.INVALID_REQUEST, "Invalid Request")
    )
    logger.warning("answered a malformed message with %s: %s", code, message)
    reply = JSONRPCError(jsonrpc="2.0", id=None, error=types.ErrorData(code=code, message=message))
    return SessionMessage(reply)


async def _answer_malformed(
    lines: ObjectReceiveStream[SessionMessage | Exception],
    messages: ObjectSendStream[SessionMessage],
    replies: ObjectSendStream[SessionMessage],
) -> None:
    """Forward parsed messages and answer malformed lines (for the SDK's transport, which
    passes them on as exceptions)."""
    async with messages:
        async for item in lines:
            if isinstance(item, Exception):
                with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                    await replies.send(malformed_reply(item))
            else:
                await messages.send(item)


async def _read_lines(
    fd: int,
    send: ObjectSendStream[SessionMessage],
    replies: ObjectSendStream[SessionMessage],
) -> None:
    # The unfinished line's pieces, joined once its newline arrives: re-joining and
    # re-splitting the whole prefix per read made a 1 MB `write` message quadratic.
    pending: list[bytes] = []
    async with send, replies:
        while True:
            await anyio.wait_readable(fd)
            try:
                chunk = os.read(fd, _PIPE_SIZE)
            except BlockingIOError:
                continue
            if not chunk:
                return
            if b"\n" not in chunk:
                pending.append(chunk)
                continue
            pending.append(chunk)
            *lines, rest = b"".join(pending).split(b"\n")
            pending = [rest] if rest else []
            for line in lines:
                if not line.strip():
                    continue
                try:
                    message = _parse(line)
                except Exception as exc:  # a protocol error, answered right here
                    await replies.send(malformed_reply(exc))
                    continue
                await send.send(SessionMessage(message))


async def _write_lines(fd: int, receive: ObjectReceiveStream[SessionMessage]) -> None:
    async with receive:
        async for item in receive:
            data = memoryview(
                item.message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
            )
            while data:
                try:
                    data = data[os.write(fd, data) :]
                except BlockingIOError:
                    await anyio.wait_writable(fd)


@contextlib.asynccontextmanager
async def stdio_streams() -> AsyncIterator[
    tuple[ObjectReceiveStream[SessionMessage], ObjectSendStream[SessionMessage]]
]:
    """The JSON-RPC message streams over this process's stdin/stdout; a malformed line is
    answered with a protocol error (`malformed_reply`) and never reaches the server.

    While serving, fds 0 and 1 point at /dev/null and stderr, so stray output from a
    handler or a library cannot corrupt the wire (as the SDK's transport does). On a pipe
    the reader answers malformed lines itself: a relay task in between cost a task switch
    per message.
    """
    if not (_is_pipe(0) and _is_pipe(1)):
        async with stdio_server() as (lines, replies), anyio.create_task_group() as tg:
            send, receive = anyio.create_memory_object_stream[SessionMessage](0)
            tg.start_soon(_answer_malformed, lines, send, replies)
            yield receive, replies
            tg.cancel_scope.cancel()
        return
    sys.stdout.flush()
    wire_in, wire_out = os.dup(0), os.dup(1)
    saved = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)
    os.close(null)
    _widen_pipe(wire_in)
    _widen_pipe(wire_out)
    os.set_blocking(wire_in, False)
    os.set_blocking(wire_out, False)
    in_send, in_receive = anyio.create_memory_object_stream[SessionMessage](0)
    out_send, out_receive = anyio.create_memory_object_stream[SessionMessage](0)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_read_lines, wire_in, in_send, out_send.clone())
            tg.start_soon(_write_lines, wire_out, out_receive)
            yield in_receive, out_send
            tg.cancel_scope.cancel()
    finally:
        os.set_blocking(wire_in, True)
        os.set_blocking(wire_out, True)
        os.dup2(saved[0], 0)
        os.dup2(saved[1], 1)
        for fd in (*saved, wire_in, wire_out):
            os.close(fd)
