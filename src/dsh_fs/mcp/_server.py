"""The MCP server on the official `mcp` SDK's low-level `Server`: streamable HTTP, and the
2026-07-28 protocol era on stdio (the handshake era on stdio is `mcp.stdio._handshake`'s).

The low-level server (not `MCPServer`) is used so that each tool's `inputSchema` and
description are exactly the tool's own, and the instructions are the workspace's system
prompt. Each MCP client session is one observation owner (one workspace `Session`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any, Final

import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError

from dsh_fs._version import __version__

from ._call_arguments import call_arguments
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
    "call_tool_result",
    "create_server",
    "mcp_tools",
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


def _wire_safe(value: Any) -> Any:
    """`value` with each lone surrogate in its strings spelled as its escape (``\\ud800``):
    a path the model sent with one comes back in the error text, and JSON on the wire is
    UTF-8, which cannot carry it."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-8", "backslashreplace").decode("utf-8")
        return value
    if isinstance(value, dict):
        return {_wire_safe(key): _wire_safe(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_wire_safe(item) for item in value]
    return value


def call_tool_result(result: ToolResult, *, structured: bool = False) -> types.CallToolResult:
    """The MCP form of a tool result: the rendered text, `isError`, the code in `_meta`.

    Only a failure can echo a string the model sent, and so a lone surrogate: its text and
    structured error spell one as ``\\udXXX`` (the SDK writes UTF-8, which cannot carry it)."""
    data = tool_result(result, structured=structured)
    if result.error is not None:
        data = _wire_safe(data)
    return types.CallToolResult.model_validate(data)


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
            call_arguments(ctx.request, params.arguments),
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
