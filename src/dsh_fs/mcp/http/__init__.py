"""The streamable-HTTP MCP server: `serve_http` (what `dsh-fs mcp --http` runs) and its
guards.

Serving (`_serving`: binding, loopback or network, the SDK's session manager and its
`HttpLimits`), the request guard (`_guard`: allowed ``Host``/``Origin``, the bearer token,
the body read whole within its limit), the connection guard (`_connections`: a uvicorn
protocol that cuts off slow and idle clients) and the JSON-RPC body parsing (`_jsonrpc`:
bodies read as the library reads arguments, so every request with an id is answered to
it). Everything loads on first use: importing this package costs nothing, the serving
imports uvicorn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._serving import HttpLimits, bind_socket, http_security, is_loopback, serve_http

__all__ = ["HttpLimits", "bind_socket", "http_security", "is_loopback", "serve_http"]

_LAZY = frozenset({"HttpLimits", "bind_socket", "http_security", "is_loopback", "serve_http"})


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        from . import _serving

        return getattr(_serving, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
