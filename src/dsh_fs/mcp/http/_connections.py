"""The HTTP server's connections: slow clients cut off, idle ones capped, fd exhaustion
logged once.

uvicorn times out a connection only between requests (its keep-alive timeout, armed when a
response ends and disarmed by the next byte), so a client that opens connections and sends
part of a request head, or a body byte now and then, holds each one for ever; 1,100 of them
exhausted the file descriptors and locked every client out. Here a connection that is
*waiting* for a request (just opened, between requests, or in the middle of a head or
body) must deliver the whole request within `HttpLimits.request_timeout` seconds, and at
most `waiting_connections` may wait at once: a new one closes the longest-waiting one.
A connection whose request has arrived (a call being served, an SSE stream) is never
touched.

When accepting fails for lack of file descriptors, asyncio logs a traceback for every
attempt, and retries the same pending connections hundreds of times a second; here the
first failure is logged once, and the recovery once, with the count in between.
"""

from __future__ import annotations

import asyncio
import errno
import inspect
import logging
import resource
from dataclasses import dataclass
from importlib.metadata import version
from typing import Any, Final

import h11
from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE
from uvicorn.config import Config
from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.server import ServerState

__all__ = ["AcceptLog", "HttpLimits", "check_protocol_fits", "guarded_protocol", "waiting_cap"]

logger = logging.getLogger("dsh_fs.mcp")

_OUT_OF_RESOURCES: Final = frozenset({errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM})
"""The accept errors asyncio reports as "out of system resource" (it then retries)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class HttpLimits:
    """What one HTTP client may hold of the server (see SECURITY.md for why these numbers)."""

    request_timeout: float = 30.0
    """Seconds a connection may wait for a complete request (head and body), counted from
    when it opened or its previous response ended; then it is closed."""
    waiting_connections: int | None = None
    """Connections that may wait for a request at once; the longest-waiting is closed to
    make room. None: a quarter of the file-descriptor limit, between 16 and 1,000."""
    max_sessions: int = 100
    """MCP sessions open at once; a client opening one more gets ``503``."""
    session_idle_timeout: float = 300.0
    """Seconds an MCP session may go without a request in flight (an open GET stream
    counts) before it is closed; its client then has to initialize a new one."""
    max_body: int = DEFAULT_MAX_REQUEST_BODY_SIZE
    """The largest request body, in bytes (``413`` above it)."""


def waiting_cap(limits: HttpLimits) -> int:
    """`limits.waiting_connections`, or its default from this process's fd limit."""
    if limits.waiting_connections is not None:
        return limits.waiting_connections
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return 1000
    return max(16, min(1000, soft // 4))


class AcceptLog:
    """An event-loop exception handler that logs fd exhaustion at accept once per episode
    and passes every other report on."""

    __slots__ = ("_previous", "_refused")

    def __init__(self, previous: Any) -> None:
        """Args:
        previous: The loop's handler before this one (None: the default handler).
        """
        self._previous = previous
        self._refused = 0

    def __call__(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        exc = context.get("exception")
        if (
            str(context.get("message", "")).startswith("socket.accept()")
            and isinstance(exc, OSError)
            and exc.errno in _OUT_OF_RESOURCES
        ):
            self._refused += 1
            if self._refused == 1:
                logger.error(
                    "cannot accept connections: %s (file-descriptor limit %s); they wait in "
                    "the listen queue until descriptors are freed. Logged once until "
                    "connections are accepted again.",
                    exc.strerror,
                    resource.getrlimit(resource.RLIMIT_NOFILE)[0],
                )
            return
        if self._previous is not None:
            self._previous(loop, context)
        else:
            loop.default_exception_handler(context)

    def accepted(self) -> None:
        """A connection was accepted: end an episode of refusals, saying how long it was."""
        if self._refused:
            logger.warning(
                "accepting connections again (%d accept attempts failed for lack of "
                "file descriptors)",
                self._refused,
            )
            self._refused = 0


class _Waiting:
    """The connections waiting for a request, oldest first, each with its deadline."""

    __slots__ = ("_cap", "_members", "_timeout")

    def __init__(self, *, cap: int, timeout: float) -> None:
        self._cap = cap
        self._timeout = timeout
        self._members: dict[_GuardedProtocol, asyncio.TimerHandle] = {}

    def add(self, connection: _GuardedProtocol) -> None:
        if connection in self._members:
            return
        self._members[connection] = connection.loop.call_later(self._timeout, connection.cut_off)
        while len(self._members) > self._cap:
            oldest = next(iter(self._members))
            self.discard(oldest)
            oldest.cut_off()

    def discard(self, connection: _GuardedProtocol) -> None:
        deadline = self._members.pop(connection, None)
        if deadline is not None:
            deadline.cancel()


class _GuardedProtocol(H11Protocol):
    """uvicorn's h11 protocol, with a deadline while the connection waits for a request."""

    waiting: _Waiting
    accept_log: AcceptLog

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.accept_log.accepted()
        self._track()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._track()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._track()

    def connection_lost(self, exc: Exception | None) -> None:
        self.waiting.discard(self)
        super().connection_lost(exc)

    def _track(self) -> None:
        if self.transport.is_closing():
            self.waiting.discard(self)
        elif self.conn.their_state in (h11.IDLE, h11.SEND_BODY):
            self.waiting.add(self)
        else:
            self.waiting.discard(self)

    def cut_off(self) -> None:
        """Close the connection: it waited too long, or longest when room was needed."""
        self.waiting.discard(self)
        if not self.transport.is_closing():
            self.transport.close()


_HOOKS: Final = ("connection_made", "data_received", "on_response_complete", "connection_lost")
"""The `H11Protocol` methods the guard extends (each calls uvicorn's own first or last)."""

_INIT: Final = ("self", "config", "server_state", "app_state", "_loop")
"""`H11Protocol.__init__`'s parameters, as the guard passes them on."""


def _protocol_changed(what: str) -> RuntimeError:
    return RuntimeError(
        f"dsh-fs's HTTP connection guard extends uvicorn's h11 protocol, and uvicorn "
        f"{version('uvicorn')} no longer fits it ({what}); without it, slow and idle "
        "clients are never cut off. Install the uvicorn version dsh-fs declares "
        "(uvicorn>=0.54,<1) or report this."
    )


def check_protocol_fits() -> None:
    """Check that the installed uvicorn's `H11Protocol` still has what `_GuardedProtocol`
    relies on: its constructor's parameters, the four hooks it extends, and h11's states.

    Raises:
        RuntimeError: it does not, naming the installed uvicorn version.
    """
    parameters = tuple(inspect.signature(H11Protocol.__init__).parameters)
    if parameters != _INIT:
        raise _protocol_changed(f"H11Protocol.__init__{parameters} is not {_INIT}")
    for hook in _HOOKS:
        if not callable(getattr(H11Protocol, hook, None)):
            raise _protocol_changed(f"H11Protocol.{hook} is gone")
    if not all(hasattr(h11, state) for state in ("IDLE", "SEND_BODY")):
        raise _protocol_changed("h11 has no IDLE or SEND_BODY state")


def guarded_protocol(limits: HttpLimits, accept_log: AcceptLog) -> type[H11Protocol]:
    """A uvicorn HTTP protocol class (``Config(http=...)``) for one server, whose
    connections share one waiting list sized by `limits`.

    Raises:
        RuntimeError: the installed uvicorn no longer fits the guard (`check_protocol_fits`).
    """
    check_protocol_fits()
    waiting = _Waiting(cap=waiting_cap(limits), timeout=limits.request_timeout)

    class Protocol(_GuardedProtocol):
        def __init__(
            self,
            config: Config,
            server_state: ServerState,
            app_state: dict[str, Any],
            _loop: asyncio.AbstractEventLoop | None = None,
        ) -> None:
            super().__init__(config, server_state, app_state, _loop)
            self.waiting = waiting
            self.accept_log = accept_log

    return Protocol
