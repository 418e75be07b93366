"""The MCP server on the official `mcp` SDK's low-level `Server`: streamable HTTP, and the
2026-07-28 protocol era on stdio (the handshake era on stdio is `_lean`'s).

The low-level server (not `MCPServer`) is used so that each tool's `inputSchema` and
description are exactly the tool's own, and the instructions are the workspace's system
prompt. Each MCP client session is one observation owner (one workspace `Session`).
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError

from dsh_fs._version import __version__

from ._connection import check_connection_lookup, connection_of
from ._definitions import (
    SERVER_DESCRIPTION,
    SERVER_NAME,
    SERVER_TITLE,
    tool_definitions,
    tool_result,
)
from ._progress import progress_notifier

if TYPE_CHECKING:
    from dsh_fs.runtime import ToolResult
    from dsh_fs.workspace import Session, Workspace

__all__ = [
    "bind_socket",
    "call_tool_result",
    "create_server",
    "mcp_tools",
    "serve_http",
]

logger = logging.getLogger("dsh_fs.mcp")

_Context = ServerRequestContext[Any, Any]


_OWNER_KEY: Final = "dsh-fs/session"
"""Key of the observation owner in an HTTP connection's per-connection `state`."""


class _Owners:
    """Maps MCP client connections to workspace sessions (the observation owners).

    Over stdio the process serves exactly one client, so a single session owns every
    observation whichever protocol era the client speaks. Over HTTP each connection (one
    ``Mcp-Session-Id``) gets its own session, kept in the connection's `state`, so it ends
    with the connection.
    """

    __slots__ = ("_single", "_workspace")

    def __init__(self, workspace: Workspace, *, single: bool) -> None:
        self._workspace = workspace
        self._single: Session | None = workspace.session(id="mcp-stdio") if single else None
        if not single:
            check_connection_lookup()

    def session_for(self, ctx: _Context) -> Session:
        if self._single is not None:
            return self._single
        connection = connection_of(ctx)
        session: Session | None = connection.state.get(_OWNER_KEY)
        if session is None:
            session = self._workspace.session(id=connection.session_id)
            connection.state[_OWNER_KEY] = session
        return session


def call_tool_result(result: ToolResult, *, structured: bool = False) -> types.CallToolResult:
    """The MCP form of a tool result: the rendered text, `isError`, the code in `_meta`."""
    return types.CallToolResult.model_validate(tool_result(result, structured=structured))


def mcp_tools(workspace: Workspace) -> list[types.Tool]:
    """The workspace's tools as MCP `Tool` definitions (exact schemas and descriptions, and
    each tool's own annotations: hosts auto-approve read-only tools by them)."""
    return [types.Tool.model_validate(tool) for tool in tool_definitions(workspace)]


def create_server(
    workspace: Workspace, *, single_session: bool = False, structured: bool = False
) -> Server[Any]:
    """An MCP server exposing `workspace`'s tools, with its system prompt as instructions.

    Args:
        workspace: The tools, their schemas and the instructions come from here.
        single_session: One observation owner for every request (stdio: one client);
            otherwise one per MCP connection.
        structured: Also return the canonical value (or ``{"error": {name, code}}``) as
            `structuredContent`. Off by default: some hosts show structured content to the
            model instead of the rendered text, and a write's value carries the file twice.
            A failure's code is always in `_meta` under `CODE_META_KEY`.

    Raises:
        RuntimeError: With one owner per connection, the installed MCP SDK no longer lets
            dsh-fs find a request's connection (see `dsh_fs.mcp._connection`).
    """
    tools = mcp_tools(workspace)
    listing = types.ListToolsResult(tools=tools)
    schemas = {tool.name: tool.input_schema for tool in tools}
    owners = _Owners(workspace, single=single_session)

    async def list_tools(
        ctx: _Context, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return listing

    async def call_tool(ctx: _Context, params: types.CallToolRequestParams) -> types.CallToolResult:
        if params.name not in schemas:
            # An unknown tool is the host's mistake: a protocol error, not a model-facing one.
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        session = owners.session_for(ctx)
        call_id = None if ctx.request_id is None else str(ctx.request_id)
        # `notifications/cancelled` cancels this handler's scope: the call stops at its next
        # await and, like any cancelled call, records no observation and no partial file.
        result = await session.call(
            params.name,
            params.arguments or {},
            call_id=call_id,
            progress=progress_notifier(ctx),
        )
        if result.is_error:
            logger.info("%s refused (%s): %s", params.name, result.code, result.text)
        return call_tool_result(result, structured=structured)

    server: Server[Any] = Server(
        SERVER_NAME,
        version=__version__,
        title=SERVER_TITLE,
        description=SERVER_DESCRIPTION,
        instructions=workspace.system_prompt(),
        get_tool_input_schema=schemas.get,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    return server


async def _decline_sessionless_era(
    ctx: _Context, params: types.RequestParams | None
) -> types.DiscoverResult:
    # The 2026-07-28 era over HTTP has no session: each request stands alone, so nothing
    # could own observations across calls. Answering `server/discover` as a handshake-era
    # server does makes clients fall back to `initialize` and a real session.
    raise MCPError(types.METHOD_NOT_FOUND, "Method not found", data="server/discover")


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on `host:port`; port 0 picks a free one.

    Raises:
        OSError: the address cannot be bound.
    """
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
    except OSError:
        sock.close()
        raise
    return sock


async def serve_http(
    workspace: Workspace,
    sock: socket.socket,
    *,
    structured: bool = False,
    log_level: str = "warning",
    on_ready: Callable[[], object] | None = None,
) -> None:
    """Serve `workspace` over streamable HTTP at ``/mcp`` on the listening socket `sock`.

    The socket is listening before this is called, so clients may connect as soon as its
    address is known (connections queue until the server accepts them). Requests whose
    ``Host``/``Origin`` is not the bound loopback address are refused (DNS rebinding).
    """
    import uvicorn  # only the HTTP transport needs it

    server = create_server(workspace, structured=structured)
    server.add_request_handler("server/discover", types.RequestParams, _decline_sessionless_era)
    app = server.streamable_http_app(host=str(sock.getsockname()[0]))
    config = uvicorn.Config(app, log_level=log_level, access_log=False, log_config=None)
    if on_ready is not None:
        on_ready()
    await uvicorn.Server(config).serve(sockets=[sock])
