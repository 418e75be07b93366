"""The MCP server on the official `mcp` SDK's low-level `Server`: streamable HTTP, and the
2026-07-28 protocol era on stdio (the handshake era on stdio is `mcp.stdio._handshake`'s).

The low-level server (not `MCPServer`) is used so that each tool's `inputSchema` and
description are exactly the tool's own, and the instructions are the workspace's system
prompt. Each MCP client session is one observation owner (one workspace `Session`).
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError, NoBackChannelError
from mcp.shared.message import ServerMessageMetadata
from mcp_types import CLIENT_INFO_META_KEY
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, ConfigDict
from starlette.requests import Request

from dsh_fs._version import __version__

from ._approvals import (
    APPROVE_KEY,
    InputNeeded,
    answering,
    elicitation_params,
    eliciting,
    fingerprint,
)
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
from ._roots import ANSWER_SECONDS, RootsMode, fence_session, roots_of, withhold

if TYPE_CHECKING:
    from dsh_fs.runtime import ProgressReporter, ToolResult
    from dsh_fs.tools import Approver
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

_ROOTS_KEY: Final = "dsh-fs/roots"
"""Key of the client's roots (`_ClientRoots`) in a connection's `state`, and of the
``roots/list`` input request asked of a 2026-07-28 client (`InputRequiredResult`)."""


class _AnyResult(BaseModel):
    """A client's ``roots/list`` answer as sent: each root is checked here (`roots_of`), so
    one that is not a ``file:`` URI is refused alone, not the whole answer with it."""

    model_config = ConfigDict(extra="allow")


class _CallParams(types.CallToolRequestParams):
    """``tools/call`` params whose input responses are taken as sent (a 2026-07-28 client's
    roots, checked one by one by `roots_of`, not refused whole for one bad URI)."""

    input_responses: dict[str, Any] | None = None


class _ClientRoots:
    """What one client's roots are known to be: asked before its first call, and asked
    again before the next call after ``notifications/roots/list_changed``."""

    __slots__ = ("lock", "stale")

    def __init__(self) -> None:
        self.stale = True
        """The roots must be asked (none known yet, or the client said they changed)."""
        self.lock = anyio.Lock()
        """Held while asking: concurrent calls wait for one answer."""


def _declares_roots(ctx: _Context) -> bool:
    capabilities = ctx.session.client_capabilities
    return capabilities is not None and capabilities.roots is not None


async def _ask_roots(ctx: _Context) -> list[str] | None:
    """The client's roots (checked by `roots_of`); None when it did not answer in time."""
    request = types.ListRootsRequest()
    related = ServerMessageMetadata(related_request_id=ctx.request_id)
    with anyio.move_on_after(ANSWER_SECONDS) as waited:
        try:
            answer = await ctx.session.send_request(request, _AnyResult, metadata=related)
        except MCPError as exc:
            logger.warning("the client refused roots/list: %s", exc)
            return []
        except NoBackChannelError:
            logger.warning("the client declares roots but this connection cannot ask for them")
            return []
    if waited.cancelled_caught:
        logger.warning("the client did not answer roots/list within %s s", ANSWER_SECONDS)
        return None
    return roots_of(answer.model_dump(mode="json", by_alias=True))


PRINCIPALS: Final = 1024
"""The principals (agent and client name) one HTTP server keeps a session for, the least
recently served dropped first: a client names itself, so the names are not bounded. A
dropped principal's next request gets a new session; with a shared ledger (Redis) its
observations are still there, in memory they are gone (the agent reads again)."""

ANONYMOUS: Final = "anonymous"
"""The agent of a request to a server without a token (loopback only)."""


def _agent_of(ctx: _Context) -> str:
    """The agent behind `ctx`'s request: the name its bearer token stands for (the HTTP
    guard's authentication puts it in the ASGI scope), or `ANONYMOUS`."""
    request = ctx.request
    user = request.scope.get("user") if isinstance(request, Request) else None
    name = getattr(user, "username", None) if getattr(user, "is_authenticated", False) else None
    return name if isinstance(name, str) and name else ANONYMOUS


UNNAMED_CLIENT: Final = "unknown"
"""The client name of a sessionless request whose ``_meta`` names none (the 2026-07-28 era
makes ``clientInfo`` optional): one agent's unnamed requests are one principal,
``<agent>/unknown``, on every replica (a client that calls itself ``unknown`` joins it)."""


def _client_name(ctx: _Context) -> str:
    """The client name a sessionless request carries, `UNNAMED_CLIENT` when it has none.

    Read from the request's own ``_meta`` (``io.modelcontextprotocol/clientInfo``), not
    from the connection the SDK builds out of it: the SDK fills that only when the request
    also carries well-formed client capabilities and a complete ``clientInfo`` (a version
    too), so a request lacking either would otherwise belong to a nameless principal."""
    params = ctx.params
    meta = params.get("_meta") if isinstance(params, Mapping) else None
    info = meta.get(CLIENT_INFO_META_KEY) if isinstance(meta, Mapping) else None
    name = info.get("name") if isinstance(info, Mapping) else None
    if isinstance(name, str) and name:
        return name
    client = connection_of(ctx).client_params
    if client is not None and client.client_info.name:
        return client.client_info.name
    return UNNAMED_CLIENT


def principal_of(ctx: _Context) -> str:
    """Who owns the observations of a sessionless request (SPEC §14): the agent of its
    token and the client name its ``_meta`` carries, ``<agent>/<client>`` (`_client_name`).
    Two tokens never give one principal; one agent's client names the same principal on
    every replica."""
    return f"{_agent_of(ctx)}/{_client_name(ctx)}"


class _Principal:
    """What a sessionless client's requests share on this server: its session (the
    observation owner) and what its roots are known to be."""

    __slots__ = ("roots", "session")

    def __init__(self, session: Session) -> None:
        self.session = session
        """The principal's session here; its observations are in the ledger under the
        principal's name (`Session.principal`)."""
        self.roots = _ClientRoots()
        """The client's roots, asked once (the era has no ``list_changed``)."""


def _declares_elicitation(ctx: _Context) -> bool:
    capabilities = ctx.session.client_capabilities
    return capabilities is not None and capabilities.elicitation is not None


def _elicitation_approver(
    ctx: _Context, progress: ProgressReporter | None, timeout: float
) -> Approver:
    """Ask this call's client by ``elicitation/create`` (handshake era; SPEC §11.2)."""

    async def elicit(params: dict[str, Any]) -> object:
        request = types.ElicitRequest(params=types.ElicitRequestFormParams.model_validate(params))
        related = ServerMessageMetadata(related_request_id=ctx.request_id)
        try:
            answer = await ctx.session.send_request(request, _AnyResult, metadata=related)
        except MCPError as exc:
            logger.warning("the client refused elicitation/create: %s", exc)
            return None
        except NoBackChannelError:
            logger.warning("the client declares elicitation but this connection cannot ask")
            return None
        return answer.model_dump(mode="json", by_alias=True)

    return eliciting(elicit, progress, timeout)


class _Owners:
    """Maps MCP client connections to workspace sessions (the observation owners).

    Over stdio the process serves exactly one client, so a single session owns every
    observation whichever protocol era the client speaks. Over HTTP each handshake-era
    connection (one ``Mcp-Session-Id``) gets its own session, kept in the connection's
    `state`, so it ends with the connection (SPEC §6). A 2026-07-28 request has no session:
    its owner is its principal (`principal_of`), one session per principal on this server,
    and with a shared ledger the same observations on every replica (SPEC §14).
    """

    __slots__ = ("_mode", "_principals", "_single", "_single_roots", "_workspace")

    def __init__(self, workspace: Workspace, *, single: bool, roots: RootsMode = "off") -> None:
        self._workspace = workspace
        self._mode: RootsMode = roots
        self._single: Session | None = workspace.session(id="mcp-stdio") if single else None
        self._single_roots = _ClientRoots()
        self._principals: OrderedDict[str, _Principal] = OrderedDict()
        if not single:
            check_connection_lookup()

    def _principal(self, ctx: _Context) -> _Principal | None:
        """The principal a sessionless request belongs to; None for a handshake-era one."""
        if self._single is not None or ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            return None
        principal = principal_of(ctx)
        found = self._principals.get(principal)
        if found is None:
            # Labelled by the principal, so `dsh-fs undo --session alice/claude` finds the
            # agent's changes whichever replica made them.
            session = self._workspace.session(id=principal, principal=principal)
            found = self._principals[principal] = _Principal(session)
            if len(self._principals) > PRINCIPALS:
                self._principals.popitem(last=False)
        else:
            self._principals.move_to_end(principal)
        return found

    def session_for(self, ctx: _Context) -> Session:
        if self._single is not None:
            return self._single
        principal = self._principal(ctx)
        if principal is not None:
            return principal.session
        connection = connection_of(ctx)
        session: Session | None = connection.state.get(_OWNER_KEY)
        if session is None:
            # The client's name labels the session's changes in the journal (so `dsh-fs
            # undo --session <client>` finds them), then the start of its session id (two
            # connections of one client stay apart); the session id when it gave no name.
            params = connection.client_params
            name = params.client_info.name if params is not None else None
            label = (
                f"{name}-http-{(connection.session_id or '')[:8]}".rstrip("-")
                if isinstance(name, str) and name
                else connection.session_id
            )
            session = self._workspace.session(id=label)
            connection.state[_OWNER_KEY] = session
        return session

    def _roots_of(self, ctx: _Context) -> _ClientRoots:
        if self._single is not None:
            return self._single_roots
        principal = self._principal(ctx)
        if principal is not None:
            return principal.roots
        state = connection_of(ctx).state
        roots: _ClientRoots | None = state.get(_ROOTS_KEY)
        if roots is None:
            roots = state[_ROOTS_KEY] = _ClientRoots()
        return roots

    async def fence(
        self, ctx: _Context, session: Session, params: _CallParams
    ) -> types.InputRequiredResult | None:
        """Fence `session` in to its client's roots when the client declares the roots
        capability (`fence_session`; until it answers, `withhold`).

        A handshake-era client is asked with a ``roots/list`` request (at most
        `ANSWER_SECONDS`). A 2026-07-28 client can't be (no server-initiated requests):
        its first call is answered with an `InputRequiredResult` asking for the roots, and
        its retry carries them (that era has no ``list_changed``: they are asked once)."""
        if self._mode == "off" or not _declares_roots(ctx):
            return None
        known = self._roots_of(ctx)
        async with known.lock:  # concurrent calls wait for one answer
            if not known.stale:
                return None
            withhold(session, self._mode)
            if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
                answer = (params.input_responses or {}).get(_ROOTS_KEY)
                if answer is None:
                    return types.InputRequiredResult(
                        input_requests={_ROOTS_KEY: types.ListRootsRequest()}
                    )
                roots: list[str] | None = roots_of(answer)
            else:
                roots = await _ask_roots(ctx)
            if roots is not None:
                known.stale = False
                fence_session(session, roots, self._mode)
        return None

    def roots_changed(self, ctx: _Context) -> None:
        """The client said its roots changed: ask again before its next call."""
        self._roots_of(ctx).stale = True


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
    workspace: Workspace,
    *,
    single_session: bool = False,
    structured: bool = False,
    client_roots: RootsMode = "off",
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
        client_roots: What the MCP roots of a client that declares the capability do to
            its session's fence (`_roots.RootsMode`): nothing (``off``), replace it
            (``replace``: no ROOT was given), narrow it where they overlap (``narrow``), or
            strictly (``strict``). Asked before a client's first call and again after
            ``notifications/roots/list_changed``.

    Raises:
        RuntimeError: With one owner per connection, the installed MCP SDK no longer lets
            dsh-fs find a request's connection (see `dsh_fs.mcp._connection`).
    """
    tools = mcp_tools(workspace)
    listing = types.ListToolsResult(tools=tools)
    schemas = {tool.name: tool.input_schema for tool in tools}
    owners = _Owners(workspace, single=single_session, roots=client_roots)

    async def list_tools(
        ctx: _Context, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return listing

    async def call_tool(
        ctx: _Context, params: _CallParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        if params.name not in schemas:
            # An unknown tool is the host's mistake: a protocol error, not a model-facing one.
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        session = owners.session_for(ctx)
        asking = await owners.fence(ctx, session, params)
        if asking is not None:
            return asking
        call_id = None if ctx.request_id is None else str(ctx.request_id)
        progress = progress_notifier(ctx)
        approver = None
        gate = workspace.approvals
        if gate.active and _declares_elicitation(ctx):
            if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
                answer = (params.input_responses or {}).get(APPROVE_KEY)
                approver = answering(answer, params.request_state)
            else:
                approver = _elicitation_approver(ctx, progress, gate.timeout)
        # `notifications/cancelled` cancels this handler's scope: the call stops at its next
        # await and, like any cancelled call, records no observation and no partial file.
        try:
            result = await session.call(
                params.name,
                call_arguments(ctx.request, params.arguments),
                call_id=call_id,
                progress=progress,
                approver=approver,
            )
        except InputNeeded as needed:
            # Nothing was published: the client is asked in the answer, and retries.
            form = types.ElicitRequestFormParams.model_validate(elicitation_params(needed.proposal))
            return types.InputRequiredResult(
                input_requests={APPROVE_KEY: types.ElicitRequest(params=form)},
                request_state=fingerprint(needed.proposal),
            )
        if result.is_error:
            logger.info("%s refused (%s): %s", params.name, result.code, result.text)
        return call_tool_result(result, structured=structured)

    async def roots_changed(ctx: _Context, params: types.NotificationParams) -> None:
        owners.roots_changed(ctx)

    server: Server[Any] = Server(
        SERVER_NAME,
        version=__version__,
        title=SERVER_TITLE,
        description=SERVER_DESCRIPTION,
        instructions=workspace.system_prompt(),
        get_tool_input_schema=schemas.get,
        on_list_tools=list_tools,
    )
    server.add_request_handler("tools/call", _CallParams, call_tool)
    if client_roots != "off":
        # Not `on_roots_list_changed=`: the SDK warns there that roots are deprecated in the
        # 2026-07-28 era; the handshake era's clients still send them.
        server.add_notification_handler(
            "notifications/roots/list_changed", types.NotificationParams, roots_changed
        )
    return server
