"""A request the client cancelled gets nothing more over HTTP: no response, no progress.

The SDK's streamable HTTP transport (2025 era) ends a request's event stream only with a
response for its id, so it answers a cancelled request with ``-32800 Request cancelled``,
and what the call sent before it saw the cancellation (progress) still goes out. MCP says a
cancelled request is not answered. So the guard notes every ``notifications/cancelled`` it
reads, before the SDK sees it, and from then on the cancelled request's event stream
carries nothing: its events (progress, the ``-32800``, pings) are dropped and the stream
ends when the SDK ends it. A client that did not cancel sees every event as before.
"""

from __future__ import annotations

from typing import Final

from starlette.types import Message, Scope, Send

from .._request_id import RequestId, echoable_id
from ._jsonrpc import parse_body

__all__ = ["Cancellations"]

_CANCELLED: Final = b"notifications/cancelled"

_Key = tuple[str, str]
"""A request by its session (``Mcp-Session-Id``) and its id (as the SDK keys its streams)."""


def _session(scope: Scope) -> str:
    for name, value in scope["headers"]:
        if name == b"mcp-session-id":
            return bytes(value).decode("latin-1")
    return ""


def _key(session: str, request_id: RequestId) -> _Key:
    # The SDK keys a request's stream by `str(id)`: "7" and 7 are one request to it.
    return session, str(request_id)


class _Silenceable:
    """The ASGI `send` of one request's response, silenced once the client cancels it."""

    __slots__ = ("_send", "_stream", "silenced")

    def __init__(self, send: Send) -> None:
        self._send = send
        self._stream = False
        self.silenced = False

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            content_type = dict(message.get("headers", ())).get(b"content-type", b"")
            self._stream = content_type.startswith(b"text/event-stream")
        elif (
            self.silenced
            and self._stream
            and message["type"] == "http.response.body"
            and message.get("more_body", False)
        ):
            return  # an event of the cancelled request; the stream's end still goes out
        await self._send(message)


class Cancellations:
    """The requests of every session whose answer is streaming, by session and id."""

    __slots__ = ("_running",)

    def __init__(self) -> None:
        self._running: dict[_Key, _Silenceable] = {}

    def note(self, scope: Scope, body: bytes) -> None:
        """Silence the request a ``notifications/cancelled`` in `body` names, if it is one
        of this session's running requests."""
        if _CANCELLED not in body:
            return
        try:
            message = parse_body(body)
        except (ValueError, RecursionError):
            return
        if not isinstance(message, dict) or message.get("method") != "notifications/cancelled":
            return
        params = message.get("params")
        request_id = echoable_id(params.get("requestId")) if isinstance(params, dict) else None
        if request_id is None:
            return
        running = self._running.get(_key(_session(scope), request_id))
        if running is not None:
            running.silenced = True

    def track(self, scope: Scope, request_id: RequestId, send: Send) -> tuple[_Key, Send]:
        """Start tracking the request `request_id`: the `send` to answer it through (silent
        once it is cancelled) and the key to `forget` it by once it is answered."""
        key = _key(_session(scope), request_id)
        silenceable = _Silenceable(send)
        self._running[key] = silenceable
        return key, silenceable

    def forget(self, key: _Key, send: Send) -> None:
        """The request is answered: stop tracking it (unless a later one reuses its id)."""
        if self._running.get(key) is send:
            del self._running[key]
