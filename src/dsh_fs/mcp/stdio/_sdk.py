"""The SDK's server on the stdio lines: what serves a client that opens in the 2026-07-28
protocol era (imported only then), and the reference the stdio server is checked against.

The lines are parsed as the stdio server parses them (`_wire.parse_line`: every request
whose id can be found gets its answer), then validated into the SDK's messages. When the
input ends, every request already read is answered before the SDK's server sees the end
(which cancels whatever is still running).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import anyio
import mcp_types as types
from anyio.abc import ObjectReceiveStream, ObjectSendStream
from mcp.server import Server
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from mcp_types.jsonrpc import JSONRPCError, JSONRPCRequest, JSONRPCResponse
from pydantic import ValidationError

from .._request_id import is_request_id
from .._wire import INVALID_REQUEST, Malformed, Message, encode, error_response
from ._lines import LineReader, LineWriter, Oversized, message_of

__all__ = ["serve_sdk"]

logger = logging.getLogger("dsh_fs.mcp")


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


async def _refuse(writer: LineWriter, malformed: Malformed) -> None:
    logger.warning("answered a malformed message with %s: %s", malformed.code, malformed.message)
    await writer.send(encode(error_response(malformed.id, malformed.code, malformed.message)))


async def _forward(
    data: Message,
    send: ObjectSendStream[SessionMessage],
    writer: LineWriter,
    unsettled: _Unsettled,
) -> None:
    try:
        message = types.jsonrpc_message_adapter.validate_python(data, by_name=False)
    except ValidationError:
        ident = data.get("id")
        if "method" in data and is_request_id(ident):
            await _refuse(
                writer, Malformed(id=ident, code=INVALID_REQUEST, message="Invalid Request")
            )
        return
    metadata = unsettled.metadata() if isinstance(message, JSONRPCRequest) else None
    await send.send(SessionMessage(message, metadata=metadata))


async def _read(
    reader: LineReader,
    writer: LineWriter,
    opening: Sequence[Message],
    rest: Sequence[bytes | Oversized],
    send: ObjectSendStream[SessionMessage],
    unsettled: _Unsettled,
) -> None:
    async with send:
        for data in opening:
            await _forward(data, send, writer, unsettled)
        batch = rest
        while True:
            for line in batch:
                message = message_of(line)
                if isinstance(message, Malformed):
                    await _refuse(writer, message)
                else:
                    await _forward(message, send, writer, unsettled)
            batch = await reader.batch()
            if not batch:
                break
        # Closing `send` ends the server, which cancels the calls still running.
        await unsettled.wait()


async def _write(
    writer: LineWriter, receive: ObjectReceiveStream[SessionMessage], unsettled: _Unsettled
) -> None:
    async with receive:
        async for item in receive:
            message = item.message
            # Through `encode`: a lone surrogate (in an id, a path) is escaped, not an error.
            await writer.send(
                encode(message.model_dump(mode="json", by_alias=True, exclude_unset=True))
            )
            if isinstance(message, JSONRPCResponse | JSONRPCError) and message.id is not None:
                unsettled.answered()


async def serve_sdk(
    server: Server[Any],
    reader: LineReader,
    writer: LineWriter,
    *,
    opening: Sequence[Message] = (),
    rest: Sequence[bytes | Oversized] = (),
) -> None:
    """Run the SDK's `server` over the lines of `reader` and `writer` until the input ends.

    Args:
        server: The SDK server (`create_server`).
        reader: The input lines.
        writer: The output lines.
        opening: Messages already read and parsed, handed over first.
        rest: Lines already read but not parsed yet, handed over next.
    """
    unsettled = _Unsettled()
    in_send, in_receive = anyio.create_memory_object_stream[SessionMessage](0)
    out_send, out_receive = anyio.create_memory_object_stream[SessionMessage](0)
    async with anyio.create_task_group() as tg:
        tg.start_soon(_read, reader, writer, opening, rest, in_send, unsettled)
        tg.start_soon(_write, writer, out_receive, unsettled)
        await server.run(in_receive, out_send, server.create_initialization_options())
        tg.cancel_scope.cancel()
