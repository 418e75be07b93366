"""`serve_review`: the review page on a listening socket, loopback unless asked.

Loopback (127.0.0.0/8, ``::1``) is the default; any other address serves the network, so it
must be asked for (``allow_remote``). The token is always there (the page is opened by a URL
that carries it), so a remote page is never open to whoever reaches the port.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable

import anyio

from dsh_fs.mcp.http import http_security, is_loopback

from ._review_app import Review, review_app

__all__ = ["review_url", "serve_review"]


def review_url(sock: socket.socket, token: str) -> str:
    """The URL that opens the page served on `sock` (the token in its query)."""
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/?token={token}"


async def serve_review(
    review: Review,
    sock: socket.socket,
    *,
    token: str,
    allow_remote: bool = False,
    on_ready: Callable[[], object] | None = None,
) -> None:
    """Serve the review page of `review` on the listening socket `sock` until cancelled.

    Args:
        review: The stores and what the page does with them.
        sock: A listening TCP socket (`dsh_fs.mcp.http.bind_socket`).
        token: What every request must carry (``secrets.token_urlsafe(32)``).
        allow_remote: Whether `sock` may be bound to an address other machines reach.
        on_ready: Called once the server accepts connections.

    Raises:
        ValueError: `sock` is bound to a non-loopback address without `allow_remote`, or
            the token is empty.
    """
    import uvicorn

    bound, port = sock.getsockname()[:2]
    if not token:
        raise ValueError("the review page needs a token")
    if not is_loopback(bound) and not allow_remote:
        raise ValueError(f"{bound} is not a loopback address; pass allow_remote=True")
    app = review_app(review, security=http_security(bound, port), token=token)
    config = uvicorn.Config(
        app,
        ws="none",
        lifespan="off",
        log_level="warning",
        access_log=False,
        log_config=None,
        timeout_graceful_shutdown=5,
    )

    class Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if self.started and on_ready is not None:
                on_ready()

    server = Server(config)
    serving = asyncio.ensure_future(server.serve(sockets=[sock]))
    try:
        await asyncio.shield(serving)
    finally:
        if not serving.done():
            # Cancelled (Ctrl-C, a test's end): uvicorn's own shutdown closes the open
            # connections (a page polls on keep-alive ones) instead of dropping them.
            server.should_exit = True
            with anyio.CancelScope(shield=True):
                await serving
