"""The MCP layer: `dsh-fs mcp`, the workspace's tools served over the official `mcp` SDK.

Top layer, beside `dsh_fs.adapters`; below it sits `dsh_fs.workspace`, whose `Workspace`
supplies the tools, their schemas and the instructions. Needs the ``mcp`` extra.
"""

from ._http import HttpLimits, bind_socket, is_loopback, serve_http
from ._server import (
    CODE_META_KEY,
    ERROR_META_KEY,
    call_tool_result,
    create_server,
    mcp_tools,
    serve_stdio,
)

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
