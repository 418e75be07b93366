"""Where a ``tools/call``'s arguments come from: the HTTP guard's parse, or the SDK's.

The HTTP guard (`dsh_fs.mcp.http`) parses a request body as the library parses arguments
and puts a ``tools/call``'s arguments in the request's ASGI scope under
`ARGUMENTS_SCOPE_KEY`; the SDK's server (`_server`, on every transport) takes them from
there with `call_arguments`. Apart from both, so the server does not import the HTTP
transport.
"""

from __future__ import annotations

from typing import Final

from starlette.requests import Request

__all__ = ["ARGUMENTS_SCOPE_KEY", "call_arguments"]

ARGUMENTS_SCOPE_KEY: Final = "dsh-fs.arguments"
"""Key of a ``tools/call``'s arguments (parsed by `read_request`) in the request's ASGI
scope; the tool handler reads them from there (`ServerRequestContext.request.scope`)."""


def call_arguments(request: object, sent: dict[str, object] | None) -> object:
    """The arguments of a ``tools/call``: those `read_request` took out of the HTTP request
    `request` (``ServerRequestContext.request``) when it did, else `sent` (what the SDK
    parsed), an absent value being an empty object."""
    if isinstance(request, Request):
        taken = request.scope.get(ARGUMENTS_SCOPE_KEY)
        if taken is not None:
            return taken
    return sent if sent is not None else {}
