"""What every HTTP request passes before the SDK's app sees it, in this order.

1. ``Host`` and ``Origin`` are one of the allowed hosts (DNS rebinding: a web page that
   makes a name resolve to this machine still names its own host), with the SDK's
   `TransportSecurityMiddleware` checks; refused with ``421``/``403``.
2. A bearer token, when the server has one: the SDK's `BearerAuthBackend` and
   `RequireAuthMiddleware` with a verifier that compares in constant time; refused with
   ``401`` and ``WWW-Authenticate: Bearer``. Nothing else is advertised (no OAuth metadata),
   so a client uses the header it was configured with.
3. A POSTed message is read whole (at most the SDK's 4 MiB body limit, ``413`` above it,
   answered to the request's id when it can be found), parsed as the library parses
   arguments (`dsh_fs.mcp.http._jsonrpc`) and handed on: a ``tools/call``'s arguments in the
   ASGI scope, the rest as the body the SDK parses.
4. What the SDK refuses without reading the request's id (an unknown or a missing session
   id, ``404``/``400``; an ``Accept`` it does not serve, ``406``; the session cap, ``503``)
   it answers to ``id: null``: such an answer is readdressed to the request's id.
5. A ``notifications/cancelled`` is noted before the SDK reads it: the request it names
   gets nothing more on its event stream, no progress and no ``-32800`` answer
   (`dsh_fs.mcp.http._cancellation`).

A client that sends its request too slowly is cut off by the connection guard
(`dsh_fs.mcp.http._connections`), which also bounds reading the body here.
"""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from typing import Final, Literal

import mcp_types as types
from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend, RequireAuthMiddleware
from mcp.server.auth.provider import AccessToken
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from mcp_types.jsonrpc import JSONRPCError
from starlette.middleware.authentication import AuthenticationMiddleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .._call_arguments import ARGUMENTS_SCOPE_KEY
from .._request_id import RequestId, body_id
from ._cancellation import Cancellations
from ._jsonrpc import Forward, Refusal, read_request, readdressed

__all__ = ["HttpGuard"]

CLIENT_ID: Final = "dsh-fs-token"
"""The client id of every request that presents the server's token (one principal)."""

_ID_PREFIX: Final = 1 << 16
"""Bytes of an oversized body read to find its id before refusing it."""

_BodyState = Literal["complete", "too large", "gone"]

_ERROR_BODY: Final = 1 << 16
"""Bytes of an error answer held back to readdress it; a longer one passes as it is."""


class _Token:
    """A `TokenVerifier` that accepts the server's token, or one of its agents' tokens.

    The accepted request's ``client_id`` is the agent's name (`CLIENT_ID` for the single
    token): each token is one agent, the principal its observations belong to (SPEC §14).
    """

    __slots__ = ("_tokens",)

    def __init__(self, tokens: Mapping[str, str]) -> None:
        self._tokens = [(token.encode("utf-8"), agent) for token, agent in tokens.items()]

    async def verify_token(self, token: str) -> AccessToken | None:
        # Header values arrive as latin-1 text; compare the bytes in constant time, against
        # every token (how many there are is no secret; which one matched is).
        sent = token.encode("utf-8", "surrogateescape")
        found = None
        for known, agent in self._tokens:
            if hmac.compare_digest(sent, known):
                found = agent
        if found is None:
            return None
        return AccessToken(token="", client_id=found, scopes=[])


def _json_error(status: int, reply: JSONRPCError) -> Response:
    return Response(
        reply.model_dump_json(by_alias=True, exclude_unset=True),
        status_code=status,
        media_type="application/json",
    )


class HttpGuard:
    """An ASGI app that checks a request's host, token and body before `app` serves it."""

    __slots__ = ("_app", "_cancellations", "_checked", "_max_body", "_path", "_security")

    def __init__(
        self,
        app: ASGIApp,
        *,
        security: TransportSecuritySettings,
        token: str | Mapping[str, str] | None,
        path: str,
        max_body: int,
    ) -> None:
        """Args:
        app: The SDK's app (it also serves the lifespan).
        security: The allowed ``Host``/``Origin`` values.
        token: The bearer token clients must send, or the agents' tokens (token -> agent
            name), or None to accept every request.
        path: The MCP endpoint, whose POST bodies are read here.
        max_body: The largest body accepted, in bytes.
        """
        self._app = app
        self._security = TransportSecurityMiddleware(security)
        self._path = path
        self._max_body = max_body
        self._cancellations = Cancellations()
        checked: ASGIApp = self._read_body
        if token is not None:
            checked = AuthenticationMiddleware(
                RequireAuthMiddleware(checked, required_scopes=[]),
                backend=BearerAuthBackend(
                    _Token({token: CLIENT_ID} if isinstance(token, str) else token)
                ),
            )
        self._checked = checked

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # the lifespan (the server speaks no websocket)
            await self._app(scope, receive, send)
            return
        refusal = await self._security.validate_request(Request(scope, receive))
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        await self._checked(scope, receive, send)

    async def _read_body(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["method"] != "POST" or scope["path"] != self._path:
            await self._app(scope, receive, send)
            return
        body, state = await self._receive_body(scope, receive)
        if state == "too large":
            await self._too_large(body)(scope, receive, send)
            return
        if state == "gone":
            return
        self._cancellations.note(scope, body)
        outcome = read_request(body)
        if isinstance(outcome, Refusal):
            await _json_error(400, outcome.reply)(scope, receive, send)
            return
        tracked = None
        if isinstance(outcome, Forward):
            if outcome.request_id is not None:
                tracked = self._cancellations.track(scope, outcome.request_id, send)
                send = _Readdress(tracked[1], outcome.request_id)
            body = outcome.body
            scope = {**scope, ARGUMENTS_SCOPE_KEY: outcome.arguments}
            scope["headers"] = [
                (name, str(len(body)).encode() if name == b"content-length" else value)
                for name, value in scope["headers"]
            ]
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        try:
            await self._app(scope, replay, send)
        finally:
            if tracked is not None:
                self._cancellations.forget(*tracked)

    async def _receive_body(self, scope: Scope, receive: Receive) -> tuple[bytes, _BodyState]:
        """The request body, or its first bytes (to find the id in) when it is too large, or
        what came before the client went away."""
        declared = dict(scope["headers"]).get(b"content-length", b"")
        too_large = declared.isdigit() and int(declared) > self._max_body
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return b"".join(chunks), "gone"
            chunk = message.get("body", b"")
            chunks.append(chunk)
            size += len(chunk)
            if size > self._max_body or (too_large and size >= _ID_PREFIX):
                return b"".join(chunks)[:_ID_PREFIX], "too large"
            if not message.get("more_body", False):
                return b"".join(chunks), "too large" if too_large else "complete"

    def _too_large(self, prefix: bytes) -> Response:
        message = f"Request body too large: the limit is {self._max_body} bytes"
        request_id = body_id(prefix)
        if request_id is None:
            return Response(message, status_code=413)
        error = types.ErrorData(code=types.INVALID_REQUEST, message=message)
        return _json_error(413, JSONRPCError(jsonrpc="2.0", id=request_id, error=error))


class _Readdress:
    """An ASGI `send` that readdresses a JSON error answer sent to ``id: null`` to the
    request's id (the SDK refuses some requests before it reads their id)."""

    __slots__ = ("_body", "_request_id", "_send", "_start")

    def __init__(self, send: Send, request_id: RequestId) -> None:
        self._send = send
        self._request_id = request_id
        self._start: Message | None = None
        self._body = b""

    async def __call__(self, message: Message) -> None:
        if message["type"] == "http.response.start":
            content_type = dict(message.get("headers", ())).get(b"content-type", b"")
            if message["status"] >= 400 and content_type.startswith(b"application/json"):
                self._start = message  # held until the body is complete
                return
            await self._send(message)
            return
        if message["type"] != "http.response.body" or self._start is None:
            await self._send(message)
            return
        self._body += message.get("body", b"")
        if message.get("more_body", False) and len(self._body) <= _ERROR_BODY:
            return
        start, self._start = self._start, None
        body, self._body = self._body, b""
        if not message.get("more_body", False):
            body = readdressed(body, self._request_id) or body
            headers = [
                (name, str(len(body)).encode() if name == b"content-length" else value)
                for name, value in start.get("headers", ())
            ]
            start = {**start, "headers": headers}
        await self._send(start)
        await self._send({**message, "body": body})
