"""MCP progress: a tool call's progress, sent as ``notifications/progress`` when the client
asked for it (a ``progressToken`` in the request's ``_meta``), at a bounded rate.

The throttle is the same for both servers; each supplies how a notification is sent (the
SDK's session, or the stdio server's own line).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Final, TypeAlias

import anyio

if TYPE_CHECKING:
    from mcp.server import ServerRequestContext

__all__ = ["PROGRESS_INTERVAL", "ProgressNotifier", "SendProgress", "progress_notifier"]

PROGRESS_INTERVAL: Final = 0.1
"""Seconds between two notifications of one call (the last one, at the total, always goes):
a 1 GB read sends about a dozen instead of a thousand."""

SendProgress: TypeAlias = Callable[[float, "float | None", "str | None"], Awaitable[None]]
"""Sends one ``notifications/progress`` (progress, total, message) for the request."""


class ProgressNotifier:
    """A `dsh_fs.runtime.ProgressReporter` for one MCP request: it passes on the progress
    that grew, at most every `PROGRESS_INTERVAL` seconds."""

    __slots__ = ("_last", "_next", "_send")

    def __init__(self, send: SendProgress) -> None:
        self._send = send
        self._next = 0.0
        self._last = float("-inf")

    async def __call__(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Send ``notifications/progress`` for this request, unless one went out less than
        `PROGRESS_INTERVAL` ago (or `progress` did not grow: the spec wants it to)."""
        if progress <= self._last:
            return
        now = anyio.current_time()
        if now < self._next and (total is None or progress < total):
            return
        self._next = now + PROGRESS_INTERVAL
        self._last = progress
        await self._send(progress, total, message)


def progress_notifier(ctx: ServerRequestContext[Any, Any]) -> ProgressNotifier | None:
    """The reporter for an SDK request; None when the client sent no progress token."""
    if ctx.meta is None or ctx.meta.get("progress_token") is None:
        return None
    return ProgressNotifier(ctx.session.report_progress)
