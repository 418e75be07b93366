"""The MCP layer: `dsh-fs mcp`, the workspace's tools served over MCP.

Top layer, beside `dsh_fs.adapters`; below it sits `dsh_fs.workspace`, whose `Workspace`
supplies the tools, their schemas and the instructions. The stdio server (`serve_stdio`)
answers the handshake protocol era itself and needs the official ``mcp`` SDK only for a
client that opens in the 2026-07-28 era; the SDK's server (`create_server`, `serve_http`,
the SDK's types in `call_tool_result` and `mcp_tools`) is imported on first use. Needs the
``mcp`` extra.
"""

import importlib
from typing import TYPE_CHECKING, Any

from ._definitions import CODE_META_KEY, ERROR_META_KEY
from .stdio import serve_stdio

if TYPE_CHECKING:
    from ._server import call_tool_result, create_server, mcp_tools
    from .http import HttpLimits, bind_socket, is_loopback, serve_http

# The SDK costs about half a second to import: only what uses its server or types loads it.
_LAZY = {
    "HttpLimits": ".http",
    "bind_socket": ".http",
    "call_tool_result": "._server",
    "create_server": "._server",
    "is_loopback": ".http",
    "mcp_tools": "._server",
    "serve_http": ".http",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module, __name__), name)


__all__ = [
    "CODE_META_KEY",
    "ERROR_META_KEY",
    "HttpLimits",
    "bind_socket",
    "call_tool_result",
    "create_server",
    "is_loopback",
    "mcp_tools",
    "serve_http",
    "serve_stdio",
]
