"""The streamable HTTP transport: ``/mcp`` on a listening socket, guarded.

Every request passes `HttpGuard` (allowed ``Host``/``Origin``, the bearer token, the body
read as the library reads arguments) before the SDK's app; the connections are guarded
against slow and idle clients (`dsh_fs.mcp.http._connections`); the SDK's session manager
is told how many sessions may be open and how soon an idle one closes (`HttpLimits`).

Loopback is every address in 127.0.0.0/8 and ``::1``. Another address serves the network,
so it must be asked for (``allow_remote``) and needs a token. ``Host`` and ``Origin`` are
checked in every case, against the bound address (and ``localhost`` for 127.0.0.1 and
``::1``) plus the names given.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Final

from mcp.server.transport_security import TransportSecuritySettings

from .._roots import RootsMode
from .._server import create_server
from ._connections import AcceptLog, HttpLimits, guarded_protocol
from ._guard import HttpGuard

if TYPE_CHECKING:
    from dsh_fs.workspace import Workspace

__all__ = ["MCP_PATH", "HttpLimits", "bind_socket", "http_security", "is_loopback", "serve_http"]

MCP_PATH: Final = "/mcp"
"""The endpoint's path."""

_LOCALHOST: Final = ("127.0.0.1", "::1")
"""The addresses the name ``localhost`` stands for."""


def is_loopback(address: str) -> bool:
    """Whether the IP `address` only this machine can reach: 127.0.0.0/8 and ``::1``
    (an IPv4-mapped IPv6 form included). A name or a wildcard (``0.0.0.0``) is not."""
    try:
        ip = ipaddress.ip_address(address.strip("[]").split("%", 1)[0])
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_loopback


def is_wildcard(address: str) -> bool:
    """Whether `address` is ``0.0.0.0`` or ``::`` (every address of the machine)."""
    try:
        return ipaddress.ip_address(address.strip("[]")).is_unspecified
    except ValueError:
        return False


def _is_address(value: str) -> bool:
    try:
        ipaddress.ip_address(value.strip("[]"))
    except ValueError:
        return False
    return True


def _host_value(host: str) -> str:
    """`host` as a ``Host`` header spells it (an IPv6 address in brackets)."""
    if ":" in host and not host.startswith("["):
        return f"[{host}]"
    return host


def http_security(
    bound: str, port: int, allowed_hosts: Sequence[str] = ()
) -> TransportSecuritySettings:
    """The ``Host``/``Origin`` values a server bound to `bound`:`port` accepts: the bound
    address, ``localhost`` when it is 127.0.0.1 or ``::1``, the loopback names on a wildcard
    bind, and each of `allowed_hosts`.

    An allowed host is ``NAME`` (with the bound port, or none, as a proxy on the default
    port sends it), ``NAME:PORT``, or ``NAME:*`` (any port); ``Origin`` may be ``http`` or
    ``https`` on the same host.
    """
    names: list[str] = []
    if is_wildcard(bound):
        names += ["127.0.0.1", "localhost", "[::1]"]
    else:
        names.append(_host_value(bound))
        if bound in _LOCALHOST:
            names.append("localhost")
    hosts: list[str] = []
    for name in names:
        hosts += [f"{name}:{port}"] + ([name] if port == 80 else [])
    for value in allowed_hosts:
        value = value.strip()
        head, sep, tail = value.rpartition(":")
        if sep and not _is_address(value) and (tail.isdigit() or tail == "*"):
            if ":" in head and not head.startswith("["):
                hosts.append(f"[{head}]:{tail}")  # an IPv6 address with a port, unbracketed
            else:
                hosts.append(value)
        else:
            name = _host_value(value)
            hosts += [f"{name}:{port}", name]
    hosts = list(dict.fromkeys(hosts))
    origins = [f"{scheme}://{host}" for host in hosts for scheme in ("http", "https")]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


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
    token: str | Mapping[str, str] | None,
    allow_remote: bool = False,
    allowed_hosts: Sequence[str] = (),
    structured: bool = False,
    log_level: str = "warning",
    limits: HttpLimits | None = None,
    on_ready: Callable[[], object] | None = None,
    client_roots: RootsMode = "off",
) -> None:
    """Serve `workspace` over streamable HTTP at ``/mcp`` on the listening socket `sock`.

    The socket is listening before this is called, so clients may connect as soon as its
    address is known (connections queue until the server accepts them).

    Args:
        workspace: What to serve. A handshake-era MCP session is one observation owner;
            a 2026-07-28 (sessionless) request's owner is its principal, the agent of its
            token and the client name it carries (SPEC §14).
        sock: A listening TCP socket (`bind_socket`).
        token: The bearer token every request must carry (``Authorization: Bearer …``),
            or one per agent (token -> agent name, `--tokens`; an empty mapping admits
            nobody), or None for none (a loopback address only).
        allow_remote: Whether `sock` may be bound to an address other machines reach.
        allowed_hosts: ``Host`` values accepted besides the bound address (`http_security`).
        structured: Return each result's value as `structuredContent` too.
        log_level: uvicorn's logging threshold.
        limits: What one client may hold (`HttpLimits`; None: the defaults).
        on_ready: Called once the server accepts connections (its app started).
        client_roots: What the MCP roots of a client that declares the capability do to
            its own session's fence (each MCP session has its own): nothing (``off``),
            replace the sandbox's roots (``replace``), or narrow them (``narrow``).

    Raises:
        ValueError: `sock` is bound to a non-loopback address without `allow_remote`, or
            without a token.
    """
    import uvicorn  # only the HTTP transport needs it

    bound, port = sock.getsockname()[:2]
    if not is_loopback(bound):
        if not allow_remote:
            raise ValueError(f"{bound} is not a loopback address; pass allow_remote=True")
        if token is None:
            raise ValueError(f"{bound} is not a loopback address: a token is required")
    limits = limits or HttpLimits()
    security = http_security(bound, port, allowed_hosts)
    server = create_server(workspace, structured=structured, client_roots=client_roots)
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        transport_security=security,
        max_request_body_size=limits.max_body,
        max_sessions=limits.max_sessions,
        session_idle_timeout=limits.session_idle_timeout,
    )
    guard = HttpGuard(app, security=security, token=token, path=MCP_PATH, max_body=limits.max_body)
    loop = asyncio.get_running_loop()
    previous = loop.get_exception_handler()
    accept_log = AcceptLog(previous)
    config = uvicorn.Config(
        guard,
        http=guarded_protocol(limits, accept_log),
        ws="none",
        log_level=log_level,
        access_log=False,
        log_config=None,
    )

    class Server(uvicorn.Server):
        async def startup(self, sockets: list[socket.socket] | None = None) -> None:
            await super().startup(sockets)
            if self.started and on_ready is not None:
                on_ready()

    loop.set_exception_handler(accept_log)
    try:
        await Server(config).serve(sockets=[sock])
    finally:
        loop.set_exception_handler(previous)
