"""The per-client MCP connection behind a request: the one private lookup into the SDK.

An HTTP server gives each client connection (one ``Mcp-Session-Id``) its own observation
owner, kept in the connection's public per-connection `state`. mcp 2.3 hands a low-level
handler a per-request `ServerSession` and keeps the `Connection` behind it private (its
`Context.connection` property is on a context the runner does not build yet), so
`connection_of` reaches for it, and `check_connection_lookup` proves at server creation
that it still finds it: an SDK change fails loudly there, never as a silent fresh owner
per request (which would refuse every edit) or a shared one.
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Any, cast

from mcp.server import ServerRequestContext
from mcp.server.connection import Connection
from mcp.server.session import ServerSession
from mcp.shared.dispatcher import DispatchContext, Outbound

__all__ = ["check_connection_lookup", "connection_of"]


def _sdk_changed() -> RuntimeError:
    return RuntimeError(
        f"dsh-fs cannot find the client connection of an MCP request in mcp "
        f"{version('mcp')} (ServerRequestContext.session._connection); without it, HTTP "
        "clients cannot own their observations. Install the mcp version dsh-fs declares "
        "(mcp>=2.3,<3) or report this."
    )


def connection_of(ctx: ServerRequestContext[Any, Any]) -> Connection:
    """The `Connection` (one per client) that `ctx`'s request arrived on.

    Raises:
        RuntimeError: the installed SDK no longer keeps it where mcp 2.3 does.
    """
    connection = getattr(ctx.session, "_connection", None)
    if not isinstance(connection, Connection):
        raise _sdk_changed()
    return connection


def check_connection_lookup() -> None:
    """Build a request context the way the SDK's runner does and check that
    `connection_of` finds its connection.

    Raises:
        RuntimeError: it does not (the SDK changed).
    """
    try:
        probe = Connection.for_loop(cast(Outbound, None))
        ctx = ServerRequestContext[Any, Any](
            session=ServerSession(cast(DispatchContext[Any], None), probe),
            lifespan_context=None,
            protocol_version=probe.protocol_version,
            method="tools/call",
        )
    except Exception as exc:  # the SDK's constructors themselves changed
        raise _sdk_changed() from exc
    if connection_of(ctx) is not probe:
        raise _sdk_changed()
