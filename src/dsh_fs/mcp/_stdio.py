"""The stdio transport: JSON-RPC lines over stdin/stdout, without worker threads.

The SDK's `stdio_server` does three thread hops per exchange (readline, write, flush), a
large share of a small read's round trip, and its reader thread, blocked on a terminal,
kept Ctrl-C from stopping the server. Here the event loop waits for readiness on pipes,
sockets and terminals (a regular file or /dev/null is always ready), so cancellation stops
the transport at once. When stdin ends, every request already read is answered before the
server sees the end of its input (the server cancels whatever is still running then).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import logging
import os
import re
import stat
import sys
from collections.abc import AsyncIterator

import anyio
import anyio.lowlevel
import mcp_types as types
from anyio.abc import ObjectReceiveStream, ObjectSendStream
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from mcp_types.jsonrpc import JSONRPCError, JSONRPCRequest, JSONRPCResponse
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


def _waits_for_input(fd: int) -> bool:
    """Whether a read of `fd` can block (a pipe, a socket, a terminal): then the loop waits
    for readiness. A regular file or /dev/null is always ready, and epoll refuses it."""
    return _is_pipe(fd) or os.isatty(fd)


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


class _Unsettled:
    """Requests read from stdin that the server has not settled yet.

    A request settles when its answer is written, or when the server drops it unanswered
    (a request the client cancelled), which the SDK reports through
    `ServerMessageMetadata.on_request_unanswered`.
    """

    __slots__ = ("_count", "_settled")

    def __init__(self) -> None:
        self._count = 0
        self._settled = anyio.Event()
        self._settled.set()

    def metadata(self) -> ServerMessageMetadata:
        """Count one more request; its metadata reports when it goes unanswered."""
        if self._count == 0:
            self._settled = anyio.Event()
        self._count += 1
        return ServerMessageMetadata(on_request_unanswered=self._unanswered)

    def answered(self) -> None:
        """One request was answered (its response or error was written)."""
        self._count -= 1
        if self._count <= 0:
            self._count = 0
            self._settled.set()

    async def _unanswered(self) -> None:
        self.answered()

    async def wait(self) -> None:
        """Until every request counted so far has settled."""
        await self._settled.wait()


async def _read_chunk(fd: int, waits: bool) -> bytes:
    """The next bytes of `fd`; empty at the end (a hung-up terminal's EIO included)."""
    while True:
        if waits:
            await anyio.wait_readable(fd)
        else:
            await anyio.lowlevel.checkpoint()
        try:
            return os.read(fd, _PIPE_SIZE)
        except BlockingIOError:
            continue
        except OSError as exc:
            if exc.errno == errno.EIO:
                return b""
            raise


async def _read_lines(
    fd: int,
    waits: bool,
    send: ObjectSendStream[SessionMessage],
    replies: ObjectSendStream[SessionMessage],
    unsettled: _Unsettled,
) -> None:
    # The unfinished line's pieces, joined once its newline arrives: re-joining and
    # re-splitting the whole prefix per read made a 1 MB `write` message quadratic.
    pending: list[bytes] = []
    async with send, replies:
        while True:
            chunk = await _read_chunk(fd, waits)
            if not chunk:
                lines = [b"".join(pending)]
            elif b"\n" not in chunk:
                pending.append(chunk)
                continue
            else:
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
                metadata = unsettled.metadata() if isinstance(message, JSONRPCRequest) else None
                await send.send(SessionMessage(message, metadata=metadata))
            if not chunk:
                # Closing `send` ends the server, which cancels the calls still running.
                await unsettled.wait()
                return


async def _write_lines(
    fd: int, receive: ObjectReceiveStream[SessionMessage], unsettled: _Unsettled
) -> None:
    async with receive:
        async for item in receive:
            message = item.message
            data = memoryview(
                message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
            )
            while data:
                try:
                    data = data[os.write(fd, data) :]
                except BlockingIOError:
                    await anyio.wait_writable(fd)
            if isinstance(message, JSONRPCResponse | JSONRPCError) and message.id is not None:
                unsettled.answered()


@contextlib.asynccontextmanager
async def stdio_streams() -> AsyncIterator[
    tuple[ObjectReceiveStream[SessionMessage], ObjectSendStream[SessionMessage]]
]:
    """The JSON-RPC message streams over this process's stdin/stdout; a malformed line is
    answered with a protocol error (`malformed_reply`) and never reaches the server.

    While serving, fds 0 and 1 point at /dev/null and stderr, so stray output from a
    handler or a library cannot corrupt the wire (as the SDK's transport does). Pipes and
    sockets are made non-blocking (a terminal is left as it is: its mode is shared with
    the shell). At the end of stdin the input stream stays open until every request read
    has been answered.
    """
    sys.stdout.flush()
    wire_in, wire_out = os.dup(0), os.dup(1)
    saved = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(2, 1)
    os.close(null)
    waits = _waits_for_input(wire_in)
    pipes = [fd for fd in (wire_in, wire_out) if _is_pipe(fd)]
    for fd in pipes:
        _widen_pipe(fd)
        os.set_blocking(fd, False)
    unsettled = _Unsettled()
    in_send, in_receive = anyio.create_memory_object_stream[SessionMessage](0)
    out_send, out_receive = anyio.create_memory_object_stream[SessionMessage](0)
    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_read_lines, wire_in, waits, in_send, out_send.clone(), unsettled)
            tg.start_soon(_write_lines, wire_out, out_receive, unsettled)
            yield in_receive, out_send
            tg.cancel_scope.cancel()
    finally:
        for fd in pipes:
            os.set_blocking(fd, True)
        os.dup2(saved[0], 0)
        os.dup2(saved[1], 1)
        for fd in (*saved, wire_in, wire_out):
            os.close(fd)
